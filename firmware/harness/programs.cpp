// The many-programs harness: loads and runs program variants of the embedded program's size one
// after another in one boot (the bit-flip campaign, tests/firmware/bitflip.py), each with this
// firmware's kernel table and arena, on one input sample.
//
// Files (harness_io.h): count.bin (uint32 number of programs), prog_<k>_0.bin (program k, exactly
// MCUFLOW_PROGRAM_BYTES bytes), in_0_<i>.bin (program input i, the same for every program).
// Optional: levels.bin (one byte per program, its mcuflow::Verify level; absent: kFull for all);
// fill.bin (one byte): every arena buffer is filled with it before bind, and each program that
// binds leaves each whole arena buffer r in arena<r>_<k>_<i>.bin after i of its ops ran (0: inputs read, none run) and its program bytes after the run in prog_<k>_1.bin,
// so that the host sees every byte each op wrote (tests/firmware/test_verification_levels.py).
// Writes out_<k>_<j>.bin for every program that ran, and per program one console line:
//   "mcuflow: program <k> ok" | "mcuflow: program <k> rejected error <code>" |
//   "mcuflow: program <k> bind error <code>" | "mcuflow: program <k> run error <code>"
#include <cstdint>
#include <cstring>

#include "harness_io.h"
#include "mcuflow/board.h"
#include "mcuflow/runtime/runtime.h"
#include "mcuflow_model.h"  // generated: MCUFLOW_PROGRAM_BYTES, mcuflow_kernels(), firmware_arena_regions()

namespace {

alignas(16) uint8_t g_program[MCUFLOW_PROGRAM_BYTES];
constexpr uint32_t kMaxPrograms = 4096;
uint8_t g_levels[kMaxPrograms];  // mcuflow::Verify per program

void write_or_fail(const char* path, const void* data, uint32_t bytes) {
  if (board_write_file(path, data, bytes) != MCUFLOW_BOARD_OK) harness::fail_io("cannot write", path);
}

// Each arena buffer r as arena<r>_<k>_<ops>.bin.
void write_arena(uint32_t k, uint32_t ops) {
  static_assert(MCUFLOW_REGION_COUNT <= 10, "one digit names the region");
  char prefix[] = "arena0_", path[40];
  const mcuflow::Span<uint8_t>* regions = firmware_arena_regions();
  for (uint32_t r = 0; r < MCUFLOW_REGION_COUNT; ++r) {
    prefix[5] = char('0' + r);
    harness::file_name(path, prefix, k, ops);
    write_or_fail(path, regions[r].data, regions[r].size);
  }
}

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
  if (board_read_file("count.bin", &count, sizeof(count), &n) != MCUFLOW_BOARD_OK || n != sizeof(count) ||
      count > kMaxPrograms)
    harness::fail_io("cannot read", "count.bin");
  if (board_read_file("levels.bin", g_levels, count, &n) == MCUFLOW_BOARD_OK && n != count)
    harness::fail_io("cannot read", "levels.bin");
  uint8_t fill = 0;
  const bool snapshots = board_read_file("fill.bin", &fill, 1, &n) == MCUFLOW_BOARD_OK && n == 1;
  const mcuflow::Span<uint8_t>* regions = firmware_arena_regions();
  char path[40];
  for (uint32_t k = 0; k < count; ++k) {
    harness::file_name(path, "prog_", k, 0);
    if (board_read_file(path, g_program, sizeof(g_program), &n) != MCUFLOW_BOARD_OK || n != sizeof(g_program))
      harness::fail_io("cannot read", path);
    auto program = mcuflow::Program::load(mcuflow::Span<const uint8_t>{g_program, n}, mcuflow_kernels(), nullptr,
                                          mcuflow::Verify(g_levels[k]));
    if (!program.ok()) {
      report(k, "rejected", program.error());
      continue;
    }
    for (uint32_t r = 0; snapshots && r < MCUFLOW_REGION_COUNT; ++r) std::memset(regions[r].data, fill, regions[r].size);
    auto session = mcuflow::Session::bind(program.value(), regions, MCUFLOW_REGION_COUNT);
    if (!session.ok()) {
      report(k, "bind", session.error());
      continue;
    }
    harness::read_inputs(program.value(), session.value(), 0);
    harness::StreamedInputFiles files{0};
    const mcuflow::InputReader reader = files.reader();
    mcuflow::Error e = mcuflow::Error::kOk;
    for (uint32_t i = 0; e == mcuflow::Error::kOk && i < program.value().op_count(); ++i) {
      if (snapshots) write_arena(k, i);
      e = session.value().run_op(i, &reader);
    }
    if (snapshots && e == mcuflow::Error::kOk) {
      write_arena(k, program.value().op_count());
      harness::file_name(path, "prog_", k, 1);
      write_or_fail(path, g_program, sizeof(g_program));
    }
    if (e != mcuflow::Error::kOk) {
      report(k, "run", e);
      continue;
    }
    for (uint32_t j = 0; j < program.value().output_count(); ++j) {
      const auto buf = session.value().output_buffer(j).value();
      harness::file_name(path, "out_", k, j);
      write_or_fail(path, buf.data, buf.size);
    }
    report(k, "ok", mcuflow::Error::kOk);
  }
  board_puts("mcuflow: ok\n");
  return 0;
}
