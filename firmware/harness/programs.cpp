// The many-programs harness: loads and runs program variants of the embedded program's size one
// after another in one boot (the bit-flip campaign, tests/firmware/bitflip.py), each with this
// firmware's kernel table and arena, on one input sample.
//
// Files (harness_io.h): count.bin (uint32 number of programs), prog_<k>_0.bin (program k, exactly
// MCUFLOW_PROGRAM_BYTES bytes), in_0_<i>.bin (program input i, the same for every program).
// Writes out_<k>_<j>.bin for every program that ran, and per program one console line:
//   "mcuflow: program <k> ok" | "mcuflow: program <k> rejected error <code>" |
//   "mcuflow: program <k> bind error <code>" | "mcuflow: program <k> run error <code>"
#include <cstdint>

#include "harness_io.h"
#include "mcuflow/board.h"
#include "mcuflow/runtime/runtime.h"
#include "mcuflow_model.h"  // generated: MCUFLOW_PROGRAM_BYTES, mcuflow_kernels(), firmware_arena_regions()

namespace {

alignas(16) uint8_t g_program[MCUFLOW_PROGRAM_BYTES];

void report(uint32_t k, const char* what, mcuflow::Error e) {
  board_puts("mcuflow: program ");
  harness::put_uint(k);
  board_puts(" ");
  board_puts(what);
  if (e != mcuflow::Error::kOk) {
    board_puts(" ");
    harness::put_error(e);
  }
  board_puts("\n");
}

}  // namespace

int main() {
  uint32_t count = 0, n = 0;
  if (board_read_file("count.bin", &count, sizeof(count), &n) != MCUFLOW_BOARD_OK || n != sizeof(count))
    harness::fail_io("cannot read", "count.bin");
  char path[40];
  for (uint32_t k = 0; k < count; ++k) {
    harness::file_name(path, "prog_", k, 0);
    if (board_read_file(path, g_program, sizeof(g_program), &n) != MCUFLOW_BOARD_OK || n != sizeof(g_program))
      harness::fail_io("cannot read", path);
    auto program = mcuflow::Program::load(mcuflow::Span<const uint8_t>{g_program, n}, mcuflow_kernels());
    if (!program.ok()) {
      report(k, "rejected", program.error());
      continue;
    }
    auto session = mcuflow::Session::bind(program.value(), firmware_arena_regions(), MCUFLOW_REGION_COUNT);
    if (!session.ok()) {
      report(k, "bind", session.error());
      continue;
    }
    harness::read_inputs(program.value(), session.value(), 0);
    harness::StreamedInputFiles files{0};
    const mcuflow::InputReader reader = files.reader();
    const mcuflow::Error e = session.value().run(&reader);
    if (e != mcuflow::Error::kOk) {
      report(k, "run", e);
      continue;
    }
    for (uint32_t j = 0; j < program.value().output_count(); ++j) {
      const auto buf = session.value().output_buffer(j).value();
      harness::file_name(path, "out_", k, j);
      if (board_write_file(path, buf.data, buf.size) != MCUFLOW_BOARD_OK) harness::fail_io("cannot write", path);
    }
    report(k, "ok", mcuflow::Error::kOk);
  }
  board_puts("mcuflow: ok\n");
  return 0;
}
