// Program loading: one verification pass that bounds-checks every offset, size and index
// before anything runs. The program is used in place; nothing is copied or allocated.
#include <cstring>
#include "mcuflow/runtime/aliasing.h"
#include "mcuflow/runtime/load_profile.h"
#include "mcuflow/runtime/runtime.h"

namespace mcuflow {
namespace {

using format::DType;
using format::Header;
using format::OpRecord;
using format::Storage;
using format::TensorRecord;

// Whether `bytes` bytes from `offset` lie within `size` bytes (32-bit: no sum that could wrap).
bool within(uint32_t offset, uint32_t bytes, uint32_t size) { return bytes <= size && offset <= size - bytes; }

bool valid_dtype(DType t) { return format::dtype_bits(t) != 0; }

// The id space has gaps (reference ids count up from 1, tier ids from 64): an id in a gap is
// unknown to this runtime, not a kernel the firmware was built without. A bit per id (flash).
struct DefinedIds {
  uint8_t bits[(kKernelIdCount + 7) / 8];
};
constexpr DefinedIds kDefinedIds = [] {
  DefinedIds d{};
#define MCUFLOW_DEFINE_ID(name, id) d.bits[(id) / 8] |= uint8_t(1u << ((id) % 8));
#define MCUFLOW_DEFINE_TIER_ID(name, id, reference) MCUFLOW_DEFINE_ID(name, id)
  MCUFLOW_KERNELS(MCUFLOW_DEFINE_ID)
  MCUFLOW_TIER_KERNELS(MCUFLOW_DEFINE_TIER_ID)
#undef MCUFLOW_DEFINE_ID
#undef MCUFLOW_DEFINE_TIER_ID
  return d;
}();

bool kernel_id_defined(uint16_t id) { return id < kKernelIdCount && (kDefinedIds.bits[id / 8] >> (id % 8) & 1); }

uint32_t region_size(const Header& h, uint32_t r) { return r == 0 ? h.arena_bytes : h.region_bytes[r - 1]; }

Error verify_header(const Header& h, uint32_t span_bytes) {
  if (h.header_bytes != sizeof(Header)) return Error::kBadHeader;
  if (h.file_bytes < sizeof(Header)) return Error::kBadHeader;
  if (h.file_bytes > span_bytes) return Error::kTruncated;
  if (h.input_count == 0 || h.output_count == 0) return Error::kBadHeader;  // zero ops: an identity model
  const uint32_t n = h.file_bytes;
  // Offset and bytes of each section (counts are 16-bit: the bytes fit 32 bits), and its alignment.
  const uint32_t sections[][2] = {{h.tensors_offset, h.tensor_count * uint32_t(sizeof(TensorRecord))},
                                  {h.ops_offset, h.op_count * uint32_t(sizeof(OpRecord))},
                                  {h.io_offset, uint32_t(h.input_count + h.output_count) * 2},
                                  {h.params_offset, h.params_bytes},
                                  {h.constants_offset, h.constants_bytes},
                                  {h.metadata_offset, h.metadata_bytes}};
  static constexpr uint8_t kAlign[] = {4, 4, 2, 4, format::kConstantAlign, 1};  // powers of two: masks
  // The records and params end before the constants: the structure's checksum covers them.
  constexpr uint32_t kStructureSections = 4;
  for (uint32_t i = 0; i < sizeof(kAlign); ++i) {
    const uint32_t offset = sections[i][0], end = i < kStructureSections ? h.constants_offset : n;
    if ((offset & (kAlign[i] - 1)) != 0 || offset < sizeof(Header) || !within(offset, sections[i][1], end))
      return Error::kBadSection;
  }
  if (h.region_count < 1 || h.region_count > format::kMaxRegions) return Error::kBadHeader;
  uint64_t total = 0;
  for (uint32_t r = 0; r < format::kMaxRegions; ++r) {
    const uint32_t bytes = region_size(h, r);
    if (bytes % format::kArenaAlign != 0 || (r >= h.region_count && bytes != 0)) return Error::kBadHeader;
    total += bytes;
  }
  if (h.arena_lower_bound > total) return Error::kBadHeader;
  return Error::kOk;
}

// What each storage kind means for the bytes of a tensor, as bits (one table, not a comparison
// per kind at every use: flash). Indexed by a verified storage (verify_tensor checks it first).
enum StorageTrait : uint8_t {
  kInRam = 1,       // bytes in a memory region while the program runs
  kInSection = 2,   // bytes (or the initial value) in the constants section
  kWritable = 4,    // an op may write it (outputs: never flash)
};
constexpr uint8_t kStorageTraits[] = {kInRam | kWritable, kInSection, kInRam | kInSection, 0,
                                      kInRam | kInSection | kWritable};
static_assert(sizeof(kStorageTraits) == uint8_t(Storage::kState) + 1, "a trait per storage kind");

// Out of line: inlined at its dozen uses, it costs more flash.
__attribute__((noinline)) uint32_t traits(const TensorRecord& t) { return kStorageTraits[uint8_t(t.storage)]; }
bool in_ram(const TensorRecord& t) { return traits(t) & kInRam; }
// Copied constants and states are in the section and in RAM: bind copies them to copy_offset.
bool copied(const TensorRecord& t) { return (traits(t) & (kInRam | kInSection)) == (kInRam | kInSection); }
uint32_t ram_start(const TensorRecord& t) { return traits(t) & kInSection ? t.copy_offset : t.offset; }

Error verify_tensor(const TensorRecord& t, const Header& h) {
  if (!valid_dtype(t.dtype) || t.rank > format::kMaxRank || uint8_t(t.layout) > uint8_t(format::Layout::kFlatNhwc))
    return Error::kBadTensor;
  if (t.layout == format::Layout::kNhwc && t.rank != 4 && t.rank != 3) return Error::kBadTensor;  // [N, H, W, C], [N, L, C]
  uint32_t elements = 1;
  for (uint32_t d = 0; d < format::kMaxRank; ++d) {
    if (t.dims[d] < 1 || t.dims[d] > format::kMaxDim || (d >= t.rank && t.dims[d] != 1)) return Error::kBadTensor;
    if (elements > UINT32_MAX / uint32_t(t.dims[d])) return Error::kBadTensor;  // per dim: dims of 2^16 would wrap
    elements *= uint32_t(t.dims[d]);
  }
  if (format::storage_bytes(t.dtype, elements) != t.bytes) return Error::kBadTensor;
  if (t.reserved[0] != 0 || t.reserved[1] != 0 || t.reserved[2] != 0) return Error::kBadTensor;
  // Where the bytes are: a region (arena), the constants section (constant), both (copied
  // constant, state: the section, then copy_offset in a region), nowhere (streamed: offset 0).
  if (uint8_t(t.storage) > uint8_t(Storage::kState)) return Error::kBadTensor;
  const uint32_t kind = traits(t);
  const bool ram = kind & kInRam;
  const uint32_t misaligned = format::element_bytes(t.dtype) - 1;  // 1, 2 or 4 bytes: a mask
  if ((t.offset & misaligned) != 0 || (copied(t) ? t.copy_offset & misaligned : t.copy_offset) != 0)
    return Error::kBadTensor;
  if (t.region >= (ram ? h.region_count : 1) || (kind == 0 && t.offset != 0)) return Error::kBadTensor;  // streamed
  if (ram && !within(ram_start(t), t.bytes, region_size(h, t.region))) return Error::kBadTensor;
  if ((kind & kInSection) && !within(t.offset, t.bytes, h.constants_bytes)) return Error::kBadTensor;
  if (!(t.scale >= 0.0f) || !format::zero_point_valid(t.dtype, t.zero_point)) return Error::kBadTensor;
  return Error::kOk;
}

// Whether two tensors share bytes of a memory region while the program runs (constants read
// from the program and streamed inputs occupy none). Verified: each start + bytes fits its
// region. Out of line, like verify_overlaps below: GCC inlines both to more bytes at -Os.
__attribute__((noinline)) bool share_bytes(const TensorRecord& a, const TensorRecord& b) {
  return in_ram(a) && in_ram(b) && a.region == b.region && ram_start(a) < ram_start(b) + b.bytes &&
         ram_start(b) < ram_start(a) + a.bytes;
}

// Whether the output of `c`'s op may share bytes with its input `slot` (aliasing.h): only where
// the kernel still computes its separate-buffer result, and the host's reference with it.
bool overlap_allowed(const OpCheck& c, const KernelEntry& k, uint32_t slot) {
  const TensorRecord& input = c.tensor(slot);
  const TensorRecord& output = c.tensor(c.op->input_count);
  const int64_t in = ram_start(input), out = ram_start(output);
  const uint32_t in_element = format::element_bytes(input.dtype), out_element = format::element_bytes(output.dtype);
  if (k.access.walk == aliasing::Walk::kElementwise)  // as many elements (cross-multiplied: no division)
    return uint64_t(input.bytes) * out_element == uint64_t(output.bytes) * in_element &&
           out + aliasing::elementwise_shift(input.bytes, output.bytes) <= in;
  if (k.access.walk == aliasing::Walk::kExactlyInPlace) return out == in && input.bytes == output.bytes;
  return slot == 0 && k.placement != nullptr &&
         k.placement(k.access, KernelId(c.op->kernel), c.params, in_element, input.dtype == output.dtype, out - in);
}

// Every pair of the op's slots that share bytes: an output and an input only as the kernel's
// contract allows, never two outputs, never the scratch and another slot.
__attribute__((noinline)) Error verify_overlaps(const OpCheck& c, const KernelEntry& k) {
  const uint32_t inputs = c.op->input_count, used = inputs + c.op->output_count;
  const uint32_t scratch = k.scratch_slot != 0 && k.scratch_slot < inputs ? k.scratch_slot : used;
  for (uint32_t a = 0; a < used; ++a) {
    for (uint32_t b = a + 1; b < used; ++b) {
      if (!share_bytes(c.tensor(a), c.tensor(b))) continue;
      if (b < inputs && a != scratch && b != scratch) continue;  // inputs are only read
      if (a < inputs && b == inputs && c.op->output_count == 1 && a != scratch &&
          overlap_allowed(c, k, a))
        continue;
      return Error::kBadAliasing;
    }
  }
  return Error::kOk;
}

Error verify_op(const OpRecord& op, const Header& h, const TensorRecord* tensors, const uint16_t* io,
                const uint8_t* base, KernelTable kernels, Verify verify) {
  if (!kernel_id_defined(op.kernel)) return Error::kUnknownKernel;
  if (op.kernel >= kernels.count || kernels.entries[op.kernel] == nullptr) return Error::kKernelNotLinked;
  const KernelEntry& k = *kernels.entries[op.kernel];
  if (op.input_count < k.input_count || op.output_count != k.output_count) return Error::kBadOp;
  const uint32_t used = uint32_t(op.input_count) + op.output_count;
  if (used > format::kMaxOpTensors) return Error::kBadOp;
  for (uint32_t i = 0; i < used; ++i) {
    if (op.tensors[i] >= h.tensor_count) return Error::kBadOp;
    // A streamed input is only ever fetched, never read; outputs are written: never into flash.
    const uint32_t kind = traits(tensors[op.tensors[i]]);
    if (i < op.input_count ? kind == 0 : !(kind & kWritable)) return Error::kBadOp;
  }
  if (op.params_bytes != k.params_bytes || op.params_offset % 4 != 0 ||
      !within(op.params_offset, op.params_bytes, h.params_bytes))
    return Error::kBadParams;
  OpCheck check{&op, tensors, base + h.constants_offset, base + h.params_offset + op.params_offset, io,
                h.input_count, verify != Verify::kStructure};
  const Error e = k.check(check);
  MCUFLOW_LOAD_PHASE(kOverlaps, load_profile::kSameOp);
  return e != Error::kOk ? e : verify_overlaps(check, k);
}

// The records Program::load has checked, for the dataflow rule below.
struct Records {
  const Header& h;
  const TensorRecord* tensors;
  const OpRecord* ops;
  const uint16_t* io;
  const uint8_t* params;
  KernelTable kernels;
};

// The last write of byte `x` of `region` found so far, scanning writes from the latest back:
// where its run ends (0: none found yet) and whether a scratch wrote it; `next`, the first start
// of a later write's run after x (the bytes from x to the nearer of the two share that write).
struct LastWrite {
  uint32_t region, x, next, end;
  bool scratch;

  // A write of `count` runs of `bytes` bytes, `period` apart, from byte `skip` of `w`.
  void see(const TensorRecord& w, uint32_t skip, uint32_t bytes, uint32_t period, uint32_t count, bool by_scratch) {
    if (!in_ram(w) || w.region != region) return;
    const uint32_t start = ram_start(w) + skip, run = x < start ? 0 : (x - start) / period + 1;  // runs from x on
    if (run < count && start + run * period < next) next = start + run * period;
    const uint32_t run_start = start + (run - 1) * period;
    if (run > 0 && run <= count && x < run_start + bytes) end = run_start + bytes, scratch = by_scratch;
  }
  void see(const TensorRecord& w, bool by_scratch) { see(w, 0, w.bytes, w.bytes, 1, by_scratch); }
};

// Def before use: every byte of `t` that op `before` reads (op_count: a program output, read
// after the last op) was last written by an op's output, or is a program input or a copied
// constant. Never the bytes a tier kernel's scratch left (the host's reference never writes
// them) nor bytes nothing wrote (the arena's old contents): host and board read the same bytes.
// An output writes its bytes, but a cat slice only its columns of each outer row.
Error verify_written(const Records& r, uint32_t before, const TensorRecord& t) {
  if (!in_ram(t)) return Error::kOk;  // a constant in the program, never written
  const uint32_t t_end = ram_start(t) + t.bytes;
  for (LastWrite l{t.region, ram_start(t), 0, 0, false}; l.x < t_end; l.x = l.end < l.next ? l.end : l.next) {
    l.next = t_end, l.end = 0;
    for (uint32_t i = before; l.end == 0 && i-- > 0;) {
      const OpRecord& op = r.ops[i];
      const uint32_t scratch_slot = r.kernels.entries[op.kernel]->scratch_slot;
      for (uint32_t s = 0; s < uint32_t(op.input_count) + op.output_count; ++s) {
        const TensorRecord& w = r.tensors[op.tensors[s]];
        const bool by_scratch = s < op.input_count;  // an input slot writes only as the scratch
        if (by_scratch && (s == 0 || s != scratch_slot)) continue;
        const KernelId k = KernelId(op.kernel);
        if (!by_scratch && (computes<KernelId::concat_slice_s8>(k) || computes<KernelId::concat_slice_f32>(k))) {
          const auto& c = *reinterpret_cast<const kernels::ConcatSliceParams*>(r.params + op.params_offset);
          const uint32_t e = format::element_bytes(w.dtype);
          l.see(w, uint32_t(c.offset_c) * e, uint32_t(c.in_c) * e, uint32_t(c.out_c) * e, uint32_t(c.outer), false);
        } else {
          l.see(w, by_scratch);
        }
      }
    }
    // Held before the first op: the program inputs (set before run), copied constants (bind),
    // states (bind, reset_state or the previous run).
    for (uint32_t i = 0; l.end == 0 && i < r.h.input_count; ++i) l.see(r.tensors[r.io[i]], false);
    for (uint32_t i = 0; l.end == 0 && i < r.h.tensor_count; ++i) {
      if (copied(r.tensors[i])) l.see(r.tensors[i], false);
    }
    if (l.end == 0 || l.scratch) return Error::kUndefinedRead;
  }
  return Error::kOk;
}

// The bytes bind copies into RAM (copied constants, states' initial values) keep them until an
// op updates a state: no program input (the caller fills those after bind) and no other copy
// shares one of them, and no op writes any of them — no output, no tier scratch — but a state's
// own update (one op at most). A state thus keeps its bytes between runs, a copied constant for good.
Error verify_copies(const Records& r) {
  for (uint32_t c = 0; c < r.h.tensor_count; ++c) {
    const TensorRecord& copy = r.tensors[c];
    if (!copied(copy)) continue;
    for (uint32_t i = 0; i < r.h.input_count; ++i) {
      if (share_bytes(copy, r.tensors[r.io[i]])) return Error::kBadIo;
    }
    for (uint32_t t = 0; t < r.h.tensor_count; ++t) {
      if (t != c && copied(r.tensors[t]) && share_bytes(copy, r.tensors[t])) return Error::kBadTensor;
    }
    uint32_t writers = 0;  // verify_op: only a state can be an op's output
    for (uint32_t i = 0; i < r.h.op_count; ++i) {
      const OpRecord& op = r.ops[i];
      const uint32_t scratch = r.kernels.entries[op.kernel]->scratch_slot;
      for (uint32_t k = 0; k < uint32_t(op.input_count) + op.output_count; ++k) {
        const bool writes = k >= op.input_count || (k != 0 && k == scratch);
        if (!writes) continue;
        if (op.tensors[k] == c) ++writers;
        else if (share_bytes(copy, r.tensors[op.tensors[k]])) return Error::kBadAliasing;
      }
    }
    if (writers > 1) return Error::kBadAliasing;
  }
  return Error::kOk;
}

Error verify_io(const uint16_t* io, const Header& h, const TensorRecord* tensors) {
  for (uint32_t i = 0; i < uint32_t(h.input_count) + h.output_count; ++i) {
    if (io[i] >= h.tensor_count) return Error::kBadIo;
    const Storage s = tensors[io[i]].storage;
    if (!(s == Storage::kArena || (s == Storage::kStreamed && i < h.input_count))) return Error::kBadIo;
  }
  for (uint32_t t = 0; t < h.tensor_count; ++t) {  // streamed: program inputs only
    if (tensors[t].storage != Storage::kStreamed) continue;
    uint32_t i = 0;
    while (i < h.input_count && io[i] != t) ++i;
    if (i == h.input_count) return Error::kBadIo;
  }
  return Error::kOk;
}

}  // namespace

Result<Program> Program::load(Span<const uint8_t> bytes, KernelTable kernels, LoadFailure* failure, Verify verify) {
  MCUFLOW_LOAD_PHASE(kHeader, load_profile::kNoOp);
  if (bytes.data == nullptr || bytes.size < sizeof(Header)) return Error::kTruncated;
  if (reinterpret_cast<uintptr_t>(bytes.data) % format::kConstantAlign != 0) return Error::kBadArgument;
  const Header& h = *reinterpret_cast<const Header*>(bytes.data);
  if (std::memcmp(h.magic, format::kMagic, sizeof(format::kMagic)) != 0) return Error::kBadMagic;
  if (h.version != format::kVersion) return Error::kBadVersion;
  Error e = verify_header(h, bytes.size);
  if (e != Error::kOk) return e;
  MCUFLOW_LOAD_PHASE(kChecksum, load_profile::kNoOp);
  // verify_header: kChecksumStart < sizeof(Header) <= constants_offset <= file_bytes.
  if (crc32(bytes.data + format::kChecksumStart, h.constants_offset - format::kChecksumStart) != h.structure_crc32 ||
      (verify != Verify::kStructure &&
       crc32(bytes.data + h.constants_offset, h.file_bytes - h.constants_offset) != h.data_crc32))
    return Error::kBadChecksum;

  Program p;
  p.base_ = bytes.data;
  p.header_ = &h;
  p.tensors_ = reinterpret_cast<const TensorRecord*>(bytes.data + h.tensors_offset);
  p.ops_ = reinterpret_cast<const OpRecord*>(bytes.data + h.ops_offset);
  p.io_ = reinterpret_cast<const uint16_t*>(bytes.data + h.io_offset);
  p.kernels_ = kernels;
  MCUFLOW_LOAD_PHASE(kTensors, load_profile::kNoOp);
  for (uint32_t i = 0; i < h.tensor_count; ++i) {
    if ((e = verify_tensor(p.tensors_[i], h)) != Error::kOk) {
      if (failure) failure->tensor = int32_t(i);
      return e;
    }
  }
  MCUFLOW_LOAD_PHASE(kIo, load_profile::kNoOp);
  if ((e = verify_io(p.io_, h, p.tensors_)) != Error::kOk) return e;
  const Records records{h, p.tensors_, p.ops_, p.io_, bytes.data + h.params_offset, kernels};
  for (uint32_t i = 0; i <= h.op_count; ++i) {  // op_count: the program's outputs, after the last op
    const bool is_op = i < h.op_count;
    const uint16_t* reads = is_op ? p.ops_[i].tensors : p.io_ + h.input_count;
    const uint32_t count = is_op ? p.ops_[i].input_count : h.output_count;
    MCUFLOW_LOAD_PHASE(kOpChecks, i);
    e = is_op ? verify_op(p.ops_[i], h, p.tensors_, p.io_, bytes.data, kernels, verify) : Error::kOk;
    const uint32_t scratch = is_op && e == Error::kOk ? kernels.entries[p.ops_[i].kernel]->scratch_slot : 0;
    MCUFLOW_LOAD_PHASE(kDataflow, i);
    uint32_t s = 0;
    for (; e == Error::kOk && s < count; ++s) {
      if (s == 0 || s != scratch) e = verify_written(records, i, p.tensors_[reads[s]]);
    }
    if (e != Error::kOk) {  // s: one past the slot that failed, 0 if the op's own checks did
      if (failure) *failure = is_op ? LoadFailure{-1, int32_t(i), int32_t(s) - 1} : LoadFailure{reads[s - 1], -1, -1};
      return e;
    }
  }
  MCUFLOW_LOAD_PHASE(kCopies, load_profile::kNoOp);
  if ((e = verify_copies(records)) != Error::kOk) return e;
  return p;
}

TensorInfo Program::info(uint32_t tensor) const {
  const TensorRecord& t = tensors_[tensor];
  return TensorInfo{t.dtype, t.layout, t.rank, t.dims, t.bytes, t.scale, t.zero_point, t.storage == Storage::kStreamed};
}

Span<const uint8_t> Program::metadata() const {
  return header_ ? Span<const uint8_t>{base_ + header_->metadata_offset, header_->metadata_bytes} : Span<const uint8_t>{};
}

uint32_t Program::region_bytes(uint32_t r) const { return r < region_count() ? region_size(*header_, r) : 0; }

Result<Session> Session::bind(const Program& program, Span<uint8_t> arena) { return bind(program, &arena, 1); }

Result<Session> Session::bind(const Program& program, const Span<uint8_t>* regions, uint32_t count) {
  MCUFLOW_LOAD_PHASE(kBindChecks, load_profile::kNoOp);
  // Every check before the Session exists: one Result built from an Error (flash).
  Error e = program.header_ == nullptr                                      ? Error::kNotBound
            : regions == nullptr || count != program.header_->region_count ? Error::kBadArgument
                                                                            : Error::kOk;
  Session s;
  for (uint32_t r = 0; e == Error::kOk && r < count; ++r) {
    if (regions[r].size < program.region_bytes(r))
      e = Error::kArenaTooSmall;
    else if (reinterpret_cast<uintptr_t>(regions[r].data) % format::kArenaAlign != 0)
      e = Error::kArenaMisaligned;
    s.regions_[r] = regions[r].data;
  }
  if (e != Error::kOk) return e;
  s.program_ = &program;
  MCUFLOW_LOAD_PHASE(kBindCopies, load_profile::kNoOp);
  s.copy_initial(Storage::kCopiedConstant);
  s.copy_initial(Storage::kState);
  return s;
}

void Session::copy_initial(format::Storage storage) const {
  const uint8_t* constants = program_->base_ + program_->header_->constants_offset;
  for (uint32_t i = 0; i < program_->header_->tensor_count; ++i) {
    const TensorRecord& t = program_->tensors_[i];
    if (t.storage == storage) std::memcpy(data_of(i), constants + t.offset, t.bytes);
  }
}

Error Session::reset_state() const {
  if (program_ == nullptr) return Error::kNotBound;
  copy_initial(Storage::kState);
  return Error::kOk;
}

uint8_t* Session::data_of(uint32_t tensor) const {
  const TensorRecord& t = program_->tensors_[tensor];
  if (in_ram(t)) return regions_[t.region] + ram_start(t);
  // Constants are only ever read; OpCall's pointer type is shared with outputs for brevity.
  return const_cast<uint8_t*>(program_->base_ + program_->header_->constants_offset + t.offset);
}

Result<Span<uint8_t>> Session::tensor_buffer(uint32_t i) const {
  if (program_ == nullptr) return Error::kNotBound;
  if (i >= program_->header_->tensor_count) return Error::kBadArgument;
  if (program_->tensors_[i].storage == Storage::kStreamed) return Error::kStreamedInput;
  return Span<uint8_t>{data_of(i), program_->tensors_[i].bytes};
}

// An index past the program's inputs or outputs becomes one past its tensors: tensor_buffer's
// kBadArgument (one Result built in one place: flash).
constexpr uint32_t kNoTensor = UINT32_MAX;

Result<Span<uint8_t>> Session::input_buffer(uint32_t i) const {
  return tensor_buffer(program_ && i < program_->header_->input_count ? program_->io_[i] : kNoTensor);
}

Result<Span<uint8_t>> Session::output_buffer(uint32_t i) const {
  const bool output = program_ && i < program_->header_->output_count;
  return tensor_buffer(output ? program_->io_[program_->header_->input_count + i] : kNoTensor);
}

namespace {

// The one rule for float inputs, host and board alike: every value a program receives is finite
// (NaN or Inf would run to finite garbage through the quantization). Out of line: one copy serves
// the inputs and the streamed bands (flash).
__attribute__((noinline)) bool all_finite(const TensorRecord& t, const uint8_t* data) {
  if (t.dtype != DType::kFloat32) return true;
  for (uint32_t i = 0; i < t.bytes; i += 4) {
    uint32_t bits;
    std::memcpy(&bits, data + i, 4);
    if ((bits & 0x7F800000u) == 0x7F800000u) return false;
  }
  return true;
}

}  // namespace

Error Session::run_op(uint32_t i, const InputReader* reader) const {
  if (program_ == nullptr) return Error::kNotBound;
  if (i >= program_->header_->op_count) return Error::kBadArgument;
  const OpRecord& op = program_->ops_[i];
  const uint8_t* params = program_->base_ + program_->header_->params_offset + op.params_offset;
  for (uint32_t k = 0; i == 0 && k < program_->header_->input_count; ++k) {  // the inputs, before any op reads them
    const TensorRecord& t = program_->tensors_[program_->io_[k]];
    if (t.storage != Storage::kStreamed && !all_finite(t, data_of(program_->io_[k]))) return Error::kNonFiniteInput;
  }
  if (op.kernel == uint16_t(KernelId::read_input_rows)) {  // verified: the rows lie in the input and fill the output
    const auto& rows = *reinterpret_cast<const format::InputRowsParams*>(params);
    uint8_t* band = data_of(op.tensors[0]);
    const bool read = reader != nullptr && reader->read != nullptr &&
                      reader->read(reader->context, rows.input, rows.offset, band, rows.bytes);
    if (!read) return Error::kInputUnavailable;
    return all_finite(program_->tensors_[op.tensors[0]], band) ? Error::kOk : Error::kNonFiniteInput;
  }
  OpCall call;  // slots past the op's are never read
  call.params = params;
  call.input_count = op.input_count;
  const uint32_t used = uint32_t(op.input_count) + op.output_count;
  for (uint32_t s = 0; s < used; ++s) call.data[s] = data_of(op.tensors[s]);
  const KernelEntry& kernel = *program_->kernels_.entries[op.kernel];
  if (kernel.fallible_eval != nullptr) return kernel.fallible_eval(call);
  kernel.eval(call);
  return Error::kOk;
}

Error Session::run(const InputReader* reader) const {
  if (program_ == nullptr) return Error::kNotBound;
  for (uint32_t i = 0; i < program_->header_->op_count; ++i) {
    Error e = run_op(i, reader);
    if (e != Error::kOk) return e;
  }
  return Error::kOk;
}

}  // namespace mcuflow
