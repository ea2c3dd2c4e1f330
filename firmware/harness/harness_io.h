// Shared by the firmware harnesses (main.cpp, bench.cpp): console numbers, the exit paths and
// the host files that carry tensors. Files are relative to QEMU's working directory and hold
// raw little-endian bytes in the tensor's physical layout:
//   in_<k>_<i>.bin   sample k, program input i   (read straight into the arena)
//   out_<k>_<j>.bin  sample k, program output j  (written straight from the arena)
// Exit codes: 0 ok; 2 host file error; 3 arena smaller than the program needs;
// 16 + mcuflow::Error for a program the runtime rejects or a failing run.
#pragma once
#include <cstdint>

#include "mcuflow/board.h"
#include "mcuflow/runtime/runtime.h"

namespace harness {

constexpr int kExitIo = 2;
constexpr int kExitArena = 3;
constexpr int kExitRuntimeBase = 16;

inline void put_uint(uint32_t v) {
  char buf[11];
  int i = 10;
  buf[i] = '\0';
  do {
    buf[--i] = char('0' + v % 10);
    v /= 10;
  } while (v != 0);
  board_puts(&buf[i]);
}

// An error as its code, "error <code>": the device holds no names, the host reads them from
// mcuflow::error_name (python/mcuflow/device.py).
inline void put_error(mcuflow::Error e) {
  board_puts("error ");
  put_uint(uint32_t(e));
}

// Where Program::load failed, if it says: " op <i> slot <s>", " op <i>" or " tensor <t>".
inline void put_load_failure(const mcuflow::LoadFailure& where) {
  const char* names[] = {" tensor ", " op ", " slot "};
  const int32_t values[] = {where.tensor, where.op, where.slot};
  for (int i = 0; i < 3; ++i) {
    if (values[i] < 0) continue;
    board_puts(names[i]);
    put_uint(uint32_t(values[i]));
  }
}

[[noreturn]] inline void fail(const char* what, mcuflow::Error e, const mcuflow::LoadFailure* where = nullptr) {
  board_puts("mcuflow: ");
  board_puts(what);
  board_puts(": ");
  put_error(e);
  if (where) put_load_failure(*where);
  board_puts("\n");
  board_exit(kExitRuntimeBase + int(e));
}

[[noreturn]] inline void fail_io(const char* what, const char* path) {
  board_puts("mcuflow: ");
  board_puts(what);
  board_puts(" ");
  board_puts(path);
  board_puts("\n");
  board_exit(kExitIo);
}

// "<prefix><k>_<i>.bin"; out holds at least 40 characters.
inline void file_name(char* out, const char* prefix, uint32_t k, uint32_t i) {
  char digits[11];
  auto append_uint = [&](uint32_t v) {
    int n = 0;
    do {
      digits[n++] = char('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) *out++ = digits[--n];
  };
  while (*prefix) *out++ = *prefix++;
  append_uint(k);
  *out++ = '_';
  append_uint(i);
  for (const char* s = ".bin"; *s; ++s) *out++ = *s;
  *out = '\0';
}

// Reads sample k's input files into the session's input buffers; each must fill its buffer.
// Streamed inputs are left to StreamedInputFiles.
inline void read_inputs(const mcuflow::Program& program, const mcuflow::Session& session, uint32_t k) {
  char path[40];
  uint32_t n = 0;
  for (uint32_t i = 0; i < program.input_count(); ++i) {
    if (program.input(i).streamed) continue;
    const auto buf = session.input_buffer(i).value();
    file_name(path, "in_", k, i);
    if (board_read_file(path, buf.data, buf.size, &n) != MCUFLOW_BOARD_OK || n != buf.size) fail_io("cannot read", path);
  }
}

// The InputReader of sample `sample`: the rows of a streamed input straight from its file, as
// Session::run asks for them (a camera would hand over lines instead).
struct StreamedInputFiles {
  uint32_t sample;
  static bool read(void* context, uint32_t input, uint32_t offset, uint8_t* dst, uint32_t bytes) {
    char path[40];
    file_name(path, "in_", static_cast<const StreamedInputFiles*>(context)->sample, input);
    return board_read_file_at(path, offset, dst, bytes) == MCUFLOW_BOARD_OK;
  }
  mcuflow::InputReader reader() { return mcuflow::InputReader{read, this}; }
};

// The deepest the stack has reached since reset (it was painted then), against its size.
inline void report_stack() {
  board_puts("mcuflow: stack high water ");
  put_uint(board_stack_high_water());
  board_puts(" of ");
  put_uint(board_stack_size());
  board_puts(" bytes\n");
}

}  // namespace harness
