// The mcuflow benchmark harness (`mcuflow bench`): times the embedded program with
// board_counter() — instructions under QEMU -icount, timer ticks on a real board.
//
// Host files (see harness_io.h for in_0_<i>.bin and the exit codes):
//   bench.bin    uint32 warmup, runs, first_op, end_op. Ops [first_op, end_op) are the
//                inference proper; the ops before and after convert float inputs and outputs.
// The input is re-read from in_0_<i>.bin before every timed region (the arena plan reuses the
// input's bytes), so every run computes the same thing. Console lines, printed only between
// timed regions, carry raw counter deltas (the counter's own overhead is not subtracted):
//   mcuflow-bench: overhead <n>           two back-to-back counter reads
//   mcuflow-bench: init <n>               Program::load (Verify::kFull: everything) + Session::bind
//   mcuflow-bench: wake <n>               the same at Verify::kStructure (a later wake: weights unchecked)
//   mcuflow-bench: cold <n>               first execution of the inference ops after bind
//   mcuflow-bench: warmup <k> <n>         further executions of the inference ops, not measured
//   mcuflow-bench: inference <k> <n>      measured executions of the inference ops
//   mcuflow-bench: application <k> <n>    Session::run (every op) + argmax over output 0
//   mcuflow-bench: argmax <index>         the application path's answer
//   mcuflow-bench: reset <n>              Session::reset_state (states back to their initial values)
//   mcuflow-bench: op <i> <n>             one run, each op timed alone with Session::run_op
//   mcuflow-bench: arena <r> <bytes>      bytes of arena region r one bind + run reaches (painted)
#include <cstdint>
#include <cstring>

#include "harness_io.h"
#include "mcuflow/board.h"
#include "mcuflow/runtime/runtime.h"
#include "mcuflow_model.h"  // generated: mcuflow_program, mcuflow_kernels(), firmware_arena_regions()

namespace {

using harness::fail;
using harness::put_uint;

struct Settings {
  uint32_t warmup, runs, first_op, end_op;
};

void report(const char* region, uint32_t value) {
  board_puts("mcuflow-bench: ");
  board_puts(region);
  board_puts(" ");
  put_uint(value);
  board_puts("\n");
}

void report(const char* region, uint32_t index, uint32_t value) {
  board_puts("mcuflow-bench: ");
  board_puts(region);
  board_puts(" ");
  put_uint(index);
  board_puts(" ");
  put_uint(value);
  board_puts("\n");
}

mcuflow::Error run_ops(const mcuflow::Session& session, const mcuflow::InputReader& reader, uint32_t first,
                       uint32_t end) {
  for (uint32_t i = first; i < end; ++i) {
    const mcuflow::Error e = session.run_op(i, &reader);
    if (e != mcuflow::Error::kOk) return e;
  }
  return mcuflow::Error::kOk;
}

// Index of the largest element (the first one on ties) of a float32 or int8 tensor.
uint32_t argmax(const mcuflow::TensorInfo& info, mcuflow::Span<uint8_t> buf) {
  uint32_t best = 0;
  if (info.dtype == mcuflow::format::DType::kFloat32) {
    const float* v = reinterpret_cast<const float*>(buf.data);
    for (uint32_t i = 1; i < buf.size / 4; ++i) best = v[i] > v[best] ? i : best;
  } else {
    const int8_t* v = reinterpret_cast<const int8_t*>(buf.data);
    for (uint32_t i = 1; i < buf.size; ++i) best = v[i] > v[best] ? i : best;
  }
  return best;
}

// Arena use as executed: paint every region, bind a fresh session, run every op once and find
// the highest byte that is no longer the paint. Painting twice (0x00, then 0xFF) catches a byte
// that was written with the paint's own value.
void report_arena_high_water(const mcuflow::Program& p, const mcuflow::InputReader& reader) {
  const mcuflow::Span<uint8_t>* regions = firmware_arena_regions();
  uint32_t reached[MCUFLOW_REGION_COUNT] = {};
  const uint8_t paints[] = {0x00, 0xFF};
  for (const uint8_t paint : paints) {
    for (uint32_t r = 0; r < MCUFLOW_REGION_COUNT; ++r) memset(regions[r].data, paint, regions[r].size);
    auto session = mcuflow::Session::bind(p, regions, MCUFLOW_REGION_COUNT);
    if (!session.ok()) fail("bind failed", session.error());
    harness::read_inputs(p, session.value(), 0);
    const mcuflow::Error e = session.value().run(&reader);
    if (e != mcuflow::Error::kOk) fail("run failed", e);
    for (uint32_t r = 0; r < MCUFLOW_REGION_COUNT; ++r) {
      uint32_t top = regions[r].size;
      while (top > 0 && regions[r].data[top - 1] == paint) --top;
      if (top > reached[r]) reached[r] = top;
    }
  }
  for (uint32_t r = 0; r < MCUFLOW_REGION_COUNT; ++r) report("arena", r, reached[r]);
}

// A later wake's init: load at Verify::kStructure + bind, into a session of its own.
uint32_t wake_init(mcuflow::Span<const uint8_t> bytes) {
  const uint32_t start = board_counter();
  auto program = mcuflow::Program::load(bytes, mcuflow_kernels(), nullptr, mcuflow::Verify::kStructure);
  auto session = program.ok() ? mcuflow::Session::bind(program.value(), firmware_arena_regions(), MCUFLOW_REGION_COUNT)
                              : mcuflow::Result<mcuflow::Session>(program.error());
  const uint32_t elapsed = board_counter() - start;
  if (!program.ok()) fail("program rejected at Verify::kStructure", program.error());
  if (!session.ok()) fail("bind failed", session.error());
  return elapsed;
}

}  // namespace

int main() {
  const uint32_t overhead_start = board_counter();
  const uint32_t overhead = board_counter() - overhead_start;
  report("overhead", overhead);

  Settings s{};
  uint32_t n = 0;
  if (board_read_file("bench.bin", &s, sizeof(s), &n) != MCUFLOW_BOARD_OK || n != sizeof(s))
    harness::fail_io("cannot read", "bench.bin");

  const mcuflow::Span<const uint8_t> bytes{mcuflow_program, mcuflow_program_size()};
  const uint32_t init_start = board_counter();
  mcuflow::LoadFailure where;
  auto program = mcuflow::Program::load(bytes, mcuflow_kernels(), &where);
  auto session = program.ok() ? mcuflow::Session::bind(program.value(), firmware_arena_regions(), MCUFLOW_REGION_COUNT)
                              : mcuflow::Result<mcuflow::Session>(program.error());
  const uint32_t init = board_counter() - init_start;
  if (!program.ok()) fail("program rejected", program.error(), &where);
  if (!session.ok()) fail("bind failed", session.error());
  const mcuflow::Program& p = program.value();
  const mcuflow::Session& run = session.value();
  if (s.first_op > s.end_op || s.end_op > p.op_count()) harness::fail_io("op range out of bounds in", "bench.bin");
  report("init", init);
  report("wake", wake_init(bytes));
  harness::StreamedInputFiles files{0};
  const mcuflow::InputReader reader = files.reader();

  // One execution of the inference ops, input conversion untimed before it.
  auto inference = [&]() {
    harness::read_inputs(p, run, 0);
    mcuflow::Error e = run_ops(run, reader, 0, s.first_op);
    if (e != mcuflow::Error::kOk) fail("run failed", e);
    const uint32_t start = board_counter();
    e = run_ops(run, reader, s.first_op, s.end_op);
    const uint32_t elapsed = board_counter() - start;
    if (e != mcuflow::Error::kOk) fail("run failed", e);
    return elapsed;
  };
  report("cold", inference());
  for (uint32_t k = 0; k < s.warmup; ++k) report("warmup", k, inference());
  for (uint32_t k = 0; k < s.runs; ++k) report("inference", k, inference());

  uint32_t answer = 0;
  for (uint32_t k = 0; k < s.runs; ++k) {
    harness::read_inputs(p, run, 0);
    const uint32_t start = board_counter();
    const mcuflow::Error e = run.run(&reader);
    answer = argmax(p.output(0), run.output_buffer(0).value());
    const uint32_t elapsed = board_counter() - start;
    if (e != mcuflow::Error::kOk) fail("run failed", e);
    report("application", k, elapsed);
  }
  report("argmax", answer);

  // After the runs above moved the states on: a stream restarting (reset_state copies every
  // state's initial value from the program; a program without states has nothing to copy).
  const uint32_t reset_start = board_counter();
  const mcuflow::Error reset = run.reset_state();
  const uint32_t reset_elapsed = board_counter() - reset_start;
  if (reset != mcuflow::Error::kOk) fail("reset_state failed", reset);
  report("reset", reset_elapsed);

  harness::read_inputs(p, run, 0);
  for (uint32_t i = 0; i < p.op_count(); ++i) {
    const uint32_t start = board_counter();
    const mcuflow::Error e = run.run_op(i, &reader);
    const uint32_t elapsed = board_counter() - start;
    if (e != mcuflow::Error::kOk) fail("run failed", e);
    report("op", i, elapsed);
  }
  report_arena_high_water(p, reader);
  harness::report_stack();
  board_puts("mcuflow: ok\n");
  return 0;
}
