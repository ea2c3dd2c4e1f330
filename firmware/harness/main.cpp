// The mcuflow firmware harness: runs the embedded program over input files supplied by the
// host through semihosting and writes the outputs back, so one firmware serves any input set.
//
// Files (relative to QEMU's working directory), physical layout, raw little-endian bytes:
//   batch.bin           uint32 number of samples
//   in_<k>_<i>.bin      sample k, program input i   (read straight into the arena)
//   out_<k>_<j>.bin     sample k, program output j  (written straight from the arena)
// Console lines "mcuflow: sample <k> instructions <n>" give each inference's counter delta.
// Exit codes: 0 ok; 2 input/output file error; 3 arena smaller than the program needs;
// 16 + mcuflow::Error for a program the runtime rejects or a failing run.
#include <cstdint>

#include "mcuflow/board.h"
#include "mcuflow/runtime/runtime.h"
#include "mcuflow_model.h"  // generated: MCUFLOW_ARENA_BYTES, mcuflow_program, firmware_kernels()

namespace {

constexpr int kExitIo = 2;
constexpr int kExitArena = 3;
constexpr int kExitRuntimeBase = 16;

alignas(16) uint8_t g_arena[MCUFLOW_ARENA_BYTES] __attribute__((section(".mcuflow_arena")));

void put_uint(uint32_t v) {
  char buf[11];
  int i = 10;
  buf[i] = '\0';
  do {
    buf[--i] = char('0' + v % 10);
    v /= 10;
  } while (v != 0);
  board_puts(&buf[i]);
}

[[noreturn]] void fail(const char* what, mcuflow::Error e) {
  board_puts("mcuflow: ");
  board_puts(what);
  board_puts(": ");
  board_puts(mcuflow::error_name(e));
  board_puts("\n");
  board_exit(kExitRuntimeBase + int(e));
}

[[noreturn]] void fail_io(const char* what, const char* path) {
  board_puts("mcuflow: ");
  board_puts(what);
  board_puts(" ");
  board_puts(path);
  board_puts("\n");
  board_exit(kExitIo);
}

// "<prefix><k>_<i>.bin"
void file_name(char* out, const char* prefix, uint32_t k, uint32_t i) {
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

}  // namespace

int main() {
  const mcuflow::Span<const uint8_t> bytes{mcuflow_program, mcuflow_program_size()};
  auto program = mcuflow::Program::load(bytes, firmware_kernels());
  if (!program.ok()) fail("program rejected", program.error());
  if (program.value().arena_bytes() > sizeof(g_arena)) board_exit(kExitArena);
  auto session = mcuflow::Session::bind(program.value(), mcuflow::Span<uint8_t>{g_arena, sizeof(g_arena)});
  if (!session.ok()) fail("bind failed", session.error());

  uint32_t batch = 0, n = 0;
  if (board_read_file("batch.bin", &batch, sizeof(batch), &n) != MCUFLOW_BOARD_OK || n != sizeof(batch))
    fail_io("cannot read", "batch.bin");

  char path[40];
  for (uint32_t k = 0; k < batch; ++k) {
    for (uint32_t i = 0; i < program.value().input_count(); ++i) {
      const auto buf = session.value().input_buffer(i).value();
      file_name(path, "in_", k, i);
      if (board_read_file(path, buf.data, buf.size, &n) != MCUFLOW_BOARD_OK || n != buf.size) fail_io("cannot read", path);
    }
    const uint32_t start = board_counter();
    const mcuflow::Error e = session.value().run();
    const uint32_t instructions = board_counter() - start;
    if (e != mcuflow::Error::kOk) fail("run failed", e);
    board_puts("mcuflow: sample ");
    put_uint(k);
    board_puts(" instructions ");
    put_uint(instructions);
    board_puts("\n");
    for (uint32_t j = 0; j < program.value().output_count(); ++j) {
      const auto buf = session.value().output_buffer(j).value();
      file_name(path, "out_", k, j);
      if (board_write_file(path, buf.data, buf.size) != MCUFLOW_BOARD_OK) fail_io("cannot write", path);
    }
  }
  board_puts("mcuflow: ok\n");
  return 0;
}
