// The mcuflow runtime: load a program in place, verify it once, bind caller-owned arena
// memory, set inputs, execute, read outputs. No heap, no exceptions, no global constructors.
#pragma once
#include <cstddef>
#include <cstdint>
#include "mcuflow/runtime/aliasing.h"
#include "mcuflow/runtime/error.h"
#include "mcuflow/runtime/format.h"
#include "mcuflow/runtime/kernel_id.h"

namespace mcuflow {

// What a kernel adapter sees at verification time: the op's tensor records and raw params.
struct OpCheck {
  const format::OpRecord* op;
  const format::TensorRecord* tensors;  // whole tensor table
  const uint8_t* constants;             // constants section (for checking tables such as shifts)
  const uint8_t* params;
  const uint16_t* io;                   // the program's input then output tensor indices
  uint32_t input_count;                 // of the program
  bool values;  // Verify::kFull: prepared tables recomputed and compared (memory safety needs only their records)
  const format::TensorRecord& tensor(uint32_t slot) const { return tensors[op->tensors[slot]]; }
  template <typename P> const P& get_params() const { return *reinterpret_cast<const P*>(params); }
};

// What a kernel adapter sees at run time: resolved data pointers and params.
struct OpCall {
  const uint8_t* params;
  uint32_t input_count;
  uint8_t* data[format::kMaxOpTensors];  // inputs then outputs, in op order
  template <typename P> const P& get_params() const { return *reinterpret_cast<const P*>(params); }
  template <typename T> const T* in(uint32_t slot) const { return reinterpret_cast<const T*>(data[slot]); }
  template <typename T> T* out(uint32_t j) const { return reinterpret_cast<T*>(data[input_count + j]); }
};

struct KernelEntry {
  uint32_t params_bytes;
  uint8_t input_count;   // an op may carry more (trailing constants a tier kernel precomputed)
  uint8_t output_count;
  Error (*check)(const OpCheck&);
  void (*eval)(const OpCall&);
  // How its output may share bytes with an input (aliasing.h); the verifier refuses any other
  // overlap, the planner places outputs only so.
  aliasing::Contract access = aliasing::kNoSharing;
  // An input slot the kernel writes (its scratch), 0 for none: it shares no byte with any other
  // slot of the op (the host's reference eval never touches it).
  uint8_t scratch_slot = 0;
  // Set instead of eval for a kernel that can refuse its input values (an id outside its
  // table): its error ends the run.
  Error (*fallible_eval)(const OpCall&) = nullptr;
  // The overlap rule of a window or copy contract, null for the others (aliasing.h).
  aliasing::PlacementRule placement = aliasing::placement_rule(access);
};

// Kernels available to this build, indexed by KernelId; null entries are not linked.
struct KernelTable {
  const KernelEntry* const* entries;
  uint16_t count;
};

// Every kernel (host builds, tests). Firmware uses a generated table of the kernels it needs.
KernelTable all_kernels();

struct TensorInfo {
  format::DType dtype;
  format::Layout layout;
  uint8_t rank;
  const int32_t* dims;
  uint32_t bytes;
  float scale;
  int32_t zero_point;
  bool streamed;  // an input Session::run fetches in row bands through its InputReader
};

// Which record Program::load rejected, for tools that name it (-1: not that kind of record): a
// tensor record, or a program output that reads unwritten bytes (`tensor`); an op record, and
// where one of its input slots caused it, the slot (`op`, `slot`).
struct LoadFailure {
  int32_t tensor = -1;
  int32_t op = -1;
  int32_t slot = -1;
};

// What Program::load verifies besides memory safety, which it proves at every level: no kernel
// reads or writes outside its buffers and every byte read was defined, whatever the bytes hold
// (docs/program_format.md, "Verification levels").
enum class Verify : uint8_t {
  // Both checksums, and every prepared table equal to its recomputation from the reference's
  // weights (the board computes what the host's reference computes): a program's first boot.
  kFull,
  // The structure's checksum only: the weights, tables and metadata are not read, a prepared
  // table's values not recomputed. For the later wakes of a program that passed kFull in the
  // same flash; host and board refuse the same programs at each level.
  kStructure,
};

class Program {
 public:
  Program() = default;
  // Verifies the header, the checksums `verify` asks for, the sections, every tensor and op
  // before returning.
  static Result<Program> load(Span<const uint8_t> bytes, KernelTable kernels, LoadFailure* failure = nullptr,
                              Verify verify = Verify::kFull);

  // A Program not made by load (a failed Result's value) has no records: every count is 0, and
  // an index past a count gives an empty TensorInfo (rank 0, no dims).
  uint32_t arena_bytes() const { return header_ ? header_->arena_bytes : 0; }  // region 0, the default arena
  uint32_t region_count() const { return header_ ? header_->region_count : 0; }
  uint32_t region_bytes(uint32_t r) const;  // planned bytes of region r (0 past the last)
  uint32_t arena_lower_bound() const { return header_ ? header_->arena_lower_bound : 0; }
  uint32_t op_count() const { return header_ ? header_->op_count : 0; }
  uint32_t tensor_count() const { return header_ ? header_->tensor_count : 0; }
  uint32_t input_count() const { return header_ ? header_->input_count : 0; }
  uint32_t output_count() const { return header_ ? header_->output_count : 0; }
  uint32_t flags() const { return header_ ? header_->flags : 0; }
  // The header's checksum of the weights, tables and metadata (covered by the structure's, so
  // checked at either level): what a product keeps after a Verify::kFull boot and compares on
  // each Verify::kStructure wake, running kFull again when it differs (another program).
  uint32_t data_crc32() const { return header_ ? header_->data_crc32 : 0; }
  TensorInfo input(uint32_t i) const { return i < input_count() ? info(io_[i]) : TensorInfo{}; }
  TensorInfo output(uint32_t i) const { return i < output_count() ? info(io_[header_->input_count + i]) : TensorInfo{}; }
  TensorInfo tensor(uint32_t i) const { return i < tensor_count() ? info(i) : TensorInfo{}; }
  KernelId op_kernel(uint32_t i) const { return static_cast<KernelId>(i < op_count() ? ops_[i].kernel : 0); }
  Span<const uint8_t> metadata() const;  // empty without a program

 private:
  friend class Session;
  TensorInfo info(uint32_t tensor) const;

  const uint8_t* base_ = nullptr;
  const format::Header* header_ = nullptr;
  const format::TensorRecord* tensors_ = nullptr;
  const format::OpRecord* ops_ = nullptr;
  const uint16_t* io_ = nullptr;
  KernelTable kernels_{};
};

// Supplies the row bands of a streamed input (Storage::kStreamed: compiled with patches and
// stream_input) while Session::run executes: copies `bytes` bytes starting at byte `offset` of
// program input `input` (physical layout, e.g. NHWC rows) to `dst`; false if it cannot. A
// camera driver can hand over lines as they arrive; nothing holds the whole input.
struct InputReader {
  bool (*read)(void* context, uint32_t input, uint32_t offset, uint8_t* dst, uint32_t bytes);
  void* context;
};

// One execution context: a verified program plus the caller's memory, one span per region.
class Session {
 public:
  Session() = default;
  // A program planned into one region (the default): `arena` holds it.
  static Result<Session> bind(const Program& program, Span<uint8_t> arena);
  // `count` == program.region_count() spans, region 0 first, each 16-byte aligned and at least
  // region_bytes(r) long. Copies the constants the plan moved into RAM and the states' initial
  // values.
  static Result<Session> bind(const Program& program, const Span<uint8_t>* regions, uint32_t count);

  // kStreamedInput for an input that Session::run fetches through its InputReader.
  Result<Span<uint8_t>> input_buffer(uint32_t i) const;
  Result<Span<uint8_t>> output_buffer(uint32_t i) const;
  Result<Span<uint8_t>> tensor_buffer(uint32_t i) const;  // any tensor (debugging, traces)
  // `reader` supplies streamed inputs (kInputUnavailable if one is needed and it is null or fails).
  // A float32 input holding NaN or Inf is refused before op 0 runs, a streamed band of one as it
  // arrives: kNonFiniteInput.
  Error run(const InputReader* reader = nullptr) const;
  Error run_op(uint32_t i, const InputReader* reader = nullptr) const;  // one op, for per-op profiling
  // States (tensors a run leaves for the next, Storage::kState) back to their initial values, as
  // bind left them. Each run reads the states the previous one wrote.
  Error reset_state() const;

 private:
  uint8_t* data_of(uint32_t tensor) const;
  void copy_initial(format::Storage storage) const;  // constants of that storage into their RAM
  const Program* program_ = nullptr;
  uint8_t* regions_[format::kMaxRegions] = {};
};

uint32_t crc32(const uint8_t* data, uint32_t size);

// Writes both checksums of the program in `file` (size bytes) as the compiler does, over the
// file_bytes and constants_offset its header states; where those lie outside the file, none
// (the loader refuses it before a checksum). For writers and tools that edit a program's bytes.
void write_checksums(uint8_t* file, uint32_t size);

}  // namespace mcuflow
