// The mcuflow firmware harness: runs the embedded program over input files supplied by the
// host through semihosting and writes the outputs back, so one firmware serves any input set.
//
// Files (see harness_io.h for the tensor files and exit codes):
//   batch.bin           uint32 number of samples
//   in_<k>_<i>.bin      sample k, program input i
//   out_<k>_<j>.bin     sample k, program output j
// Console lines "mcuflow: sample <k> instructions <n>" give each inference's counter delta;
// "mcuflow: stack high water <used> of <size> bytes" the stack's deepest use over the whole run.
#include <cstdint>

#include "harness_io.h"
#include "mcuflow/board.h"
#include "mcuflow/runtime/runtime.h"
#include "mcuflow_model.h"  // generated: mcuflow_program, mcuflow_kernels(), firmware_arena_regions()

int main() {
  using harness::fail;
  using harness::fail_io;
  using harness::put_uint;
  const mcuflow::Span<const uint8_t> bytes{mcuflow_program, mcuflow_program_size()};
  mcuflow::LoadFailure where;
  auto program = mcuflow::Program::load(bytes, mcuflow_kernels(), &where);
  if (!program.ok()) fail("program rejected", program.error(), &where);
  auto session = mcuflow::Session::bind(program.value(), firmware_arena_regions(), MCUFLOW_REGION_COUNT);
  if (session.error() == mcuflow::Error::kArenaTooSmall) board_exit(harness::kExitArena);
  if (!session.ok()) fail("bind failed", session.error());

  uint32_t batch = 0, n = 0;
  if (board_read_file("batch.bin", &batch, sizeof(batch), &n) != MCUFLOW_BOARD_OK || n != sizeof(batch))
    fail_io("cannot read", "batch.bin");

  char path[40];
  for (uint32_t k = 0; k < batch; ++k) {
    harness::read_inputs(program.value(), session.value(), k);
    harness::StreamedInputFiles files{k};
    const mcuflow::InputReader reader = files.reader();
    const uint32_t start = board_counter();
    const mcuflow::Error e = session.value().run(&reader);
    const uint32_t instructions = board_counter() - start;
    if (e != mcuflow::Error::kOk) fail("run failed", e);
    board_puts("mcuflow: sample ");
    put_uint(k);
    board_puts(" instructions ");
    put_uint(instructions);
    board_puts("\n");
    for (uint32_t j = 0; j < program.value().output_count(); ++j) {
      const auto buf = session.value().output_buffer(j).value();
      harness::file_name(path, "out_", k, j);
      if (board_write_file(path, buf.data, buf.size) != MCUFLOW_BOARD_OK) fail_io("cannot write", path);
    }
  }
  harness::report_stack();
  board_puts("mcuflow: ok\n");
  return 0;
}
