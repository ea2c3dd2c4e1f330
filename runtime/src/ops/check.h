// Shared verification helpers for kernel adapters: each op's params must agree with the
// tensors it touches, so a program that passes verification cannot make a kernel read or
// write outside its buffers.
#pragma once
#include "mcuflow/kernels/tier_contract.h"
#include "mcuflow/runtime/load_profile.h"
#include "mcuflow/runtime/runtime.h"

namespace mcuflow::ops {

constexpr int32_t kMaxExtent = format::kMaxDim;  // largest size or offset a kernel param may hold

inline bool in_range(int32_t v, int32_t lo, int32_t hi) { return v >= lo && v <= hi; }

inline bool positive(int32_t v) { return in_range(v, 1, kMaxExtent); }

// The record's element count: the product of its dims (verify_tensor has tied bytes to it).
inline uint64_t elements(const format::TensorRecord& t) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < format::kMaxRank; ++d) n *= uint32_t(t.dims[d]);
  return n;
}

// A copy kernel moving units of `unit_bytes` from `in` (in_units of them) to `out` (out_units):
// both of one type whose elements are units, or, for byte copies, int16 elements moved as byte
// pairs (two units each).
inline bool copied_units(const format::TensorRecord& in, const format::TensorRecord& out, uint32_t unit_bytes,
                         uint64_t in_units, uint64_t out_units) {
  const uint32_t bits = format::dtype_bits(in.dtype);
  const bool pairs = unit_bytes == 1 && in.dtype == format::DType::kInt16;
  if (in.dtype != out.dtype || (bits != 8 * unit_bytes && !pairs)) return false;
  const uint64_t per_element = pairs ? 2 : 1;
  return elements(in) * per_element == in_units && elements(out) * per_element == out_units;
}

// The tensor in `slot` has `dtype` and exactly `count` elements.
// Program data the kernel only reads: a constant, or a constant Session::bind copies into fast
// RAM (the record's offset still locates the original, which the copy equals). Not a state: runs
// change it.
inline bool read_only(const format::TensorRecord& t) {
  return t.storage == format::Storage::kConstant || t.storage == format::Storage::kCopiedConstant;
}

// A tier kernel replacing a weighted reference: its weights, bias and requantization tables are
// constants (tier_contract.h; the weights may be copied into fast RAM at bind).
inline bool weighted_inputs_constant(const OpCheck& c) {
  for (uint32_t slot = kernels::kFirstConstantSlot; slot <= kernels::kLastConstantSlot; ++slot) {
    if (!read_only(c.tensor(slot))) return false;
  }
  return true;
}

inline bool tensor_is(const OpCheck& c, uint32_t slot, format::DType dtype, uint64_t count) {
  const format::TensorRecord& t = c.tensor(slot);
  return t.dtype == dtype && elements(t) == count;
}

inline bool int8_activation_range(int32_t act_min, int32_t act_max) {
  return in_range(act_min, -128, 127) && in_range(act_max, -128, 127) && act_min <= act_max;
}

inline bool input_offset_valid(int32_t input_offset) { return in_range(input_offset, -127, 128); }

inline bool zero_point_offsets(int32_t input_offset, int32_t output_offset) {
  return input_offset_valid(input_offset) && in_range(output_offset, -128, 127);
}

// Clamp bounds within the integers of the quantized type `t` (int8, int16).
inline bool activation_range_valid(int32_t act_min, int32_t act_max, format::DType t) {
  const int32_t lo = format::dtype_min(t), hi = format::dtype_max(t);
  return in_range(act_min, lo, hi) && in_range(act_max, lo, hi) && act_min <= act_max;
}

// An output stage whose offset and bounds are integers of the output type `t`.
inline bool output_stage_valid(const kernels::OutputStage& o, format::DType t) {
  return format::zero_point_valid(t, o.output_offset) && activation_range_valid(o.act_min, o.act_max, t);
}

// One requantization (arith.h multiply_by_quantized_multiplier) the kernels can compute.
inline bool requantization_valid(int32_t multiplier, int32_t shift) { return multiplier >= 0 && in_range(shift, -31, 30); }

// Outputs follow the inputs; optimized kernels may take extra trailing constant inputs, so
// outputs are addressed relative to the op's input count.
inline const format::TensorRecord& output(const OpCheck& c, uint32_t j = 0) { return c.tensor(c.op->input_count + j); }

inline bool output_is(const OpCheck& c, format::DType dtype, uint64_t count) {
  const format::TensorRecord& t = output(c);
  return t.dtype == dtype && elements(t) == count;
}

// The window fields every convolution's params share (conv, depthwise, transposed).
template <typename P>
bool window_valid(const P& p) {
  return positive(p.in_h) && positive(p.in_w) && positive(p.in_c) && positive(p.out_h) &&
         positive(p.out_w) && positive(p.out_c) && positive(p.k_h) && positive(p.k_w) &&
         positive(p.stride_h) && positive(p.stride_w) && positive(p.dil_h) && positive(p.dil_w) &&
         in_range(p.pad_top, 0, kMaxExtent) && in_range(p.pad_left, 0, kMaxExtent);
}

// Biases that cannot overflow the accumulator: |bias| + max_abs_acc within the accumulator's
// limit, where max_abs_acc = reduction size * the largest |(x + input_offset) * w|. int32
// biases (int8 activations): 255 * 128 (int4 weights: 255 * 8), limit INT32_MAX; int64 biases
// (int16 activations): 32768 * 128, limit 2^47 - 1 (arith.h multiply_by_quantized_multiplier_wide).
bool bias_fits_accumulator(const OpCheck& c, uint32_t bias_slot, uint64_t channels, uint64_t reduction);

// Per-channel requantization tables: multipliers in [0, 2^31), shifts in [-31, max_shift].
bool requant_tables_valid(const OpCheck& c, uint32_t mult_slot, uint32_t shift_slot, uint64_t count,
                          int32_t max_shift = 30);

// The quantized fields of a weighted kernel (conv, depthwise, fc: bias in slot 2, multipliers
// and shifts in 3 and 4) for activations of type `act`: int8 with an input offset within int8
// zero points, or symmetric int16 (no offsets, shifts up to kWideMaxShift); the output stage
// within the type; the biases fitting the accumulator.
bool weighted_quantization_valid(const OpCheck& c, format::DType act, int32_t input_offset,
                                 const kernels::OutputStage& out, uint64_t tables, uint64_t channels,
                                 uint64_t reduction);

// The reference kernels' checks; an optimized kernel's check runs its reference's check first.
Error check_conv_s8(const OpCheck& c);
Error check_conv_f32(const OpCheck& c);
Error check_dwconv_s8(const OpCheck& c);
Error check_dwconv_f32(const OpCheck& c);
// The same checks with an input of `input_elements` elements in slot 0 (the streaming kernels
// read their window from a ring and take the new frames there); int8 or float32.
Error check_conv_input(const OpCheck& c, bool quantized, uint64_t input_elements);
Error check_dwconv_input(const OpCheck& c, bool quantized, uint64_t input_elements);
Error check_fc_s8(const OpCheck& c);
Error check_conv_s16(const OpCheck& c);  // int16 activations (A16W8)
Error check_dwconv_s16(const OpCheck& c);
Error check_fc_s16(const OpCheck& c);
Error check_conv_s8_w4(const OpCheck& c);  // packed int4 weights (W4A8)
Error check_dwconv_s8_w4(const OpCheck& c);
Error check_fc_s8_w4(const OpCheck& c);
Error check_pool_s16(const OpCheck& c);  // maxpool_s16, avgpool_s16
Error check_fc_f32(const OpCheck& c);
Error check_binary_s8(const OpCheck& c);  // add_s8, mul_s8
Error check_binary_f32(const OpCheck& c);
Error check_permute_b8(const OpCheck& c);
Error check_pool_s8(const OpCheck& c);    // maxpool_s8, avgpool_s8
Error check_pool_f32(const OpCheck& c);
Error check_softmax_s8(const OpCheck& c);
Error check_softmax_f32(const OpCheck& c);
Error check_clamp_s8(const OpCheck& c);
Error check_requantize_s8(const OpCheck& c);
Error check_lut_s8(const OpCheck& c);
Error check_concat_slice_s8(const OpCheck& c);
Error check_strided_copy_b8(const OpCheck& c);
Error check_lut_s16(const OpCheck& c);
Error check_softmax_s16(const OpCheck& c);
Error check_reduce_s8(const OpCheck& c);  // sum, mean or max
// The reduce tier kernels': check_reduce_s8, and a sum or a mean (tier_contract.h reduce_sum_refusal).
Error check_reduce_sum_s8(const OpCheck& c);
Error check_quantize(const OpCheck& c);    // quantize_f32_s8
Error check_dequantize(const OpCheck& c);  // dequantize_s8_f32

inline Error ok_if(bool condition) { return condition ? Error::kOk : Error::kBadParams; }

// A float32 window tier kernel's check: its reference's, then the kernel's refusal of the params
// (tier_contract.h), for float_tier_checks.h.
template <kernels::Refusal (*kRefusal)(const kernels::ConvParams&)>
Error check_conv_f32_refusing(const OpCheck& c) {
  if (const Error e = check_conv_f32(c); e != Error::kOk) return e;
  return ok_if(kRefusal(c.get_params<kernels::ConvParams>()) == kernels::Refusal::kNone);
}
template <kernels::Refusal (*kRefusal)(const kernels::DwConvParams&)>
Error check_dwconv_f32_refusing(const OpCheck& c) {
  if (const Error e = check_dwconv_f32(c); e != Error::kOk) return e;
  return ok_if(kRefusal(c.get_params<kernels::DwConvParams>()) == kernels::Refusal::kNone);
}

// A prepared table: the constant at `slot` holds `count` elements of T (dtype `dtype`), aligned
// for T, element i equal to entry(i), its recomputation from the params.
// The table's elements, or null where its record is not such a table.
template <typename T>
const T* table_of(const OpCheck& c, uint32_t slot, format::DType dtype, int32_t count) {
  const format::TensorRecord& t = c.tensor(slot);
  if (!tensor_is(c, slot, dtype, uint64_t(count)) || !read_only(t) || t.offset % sizeof(T) != 0) return nullptr;
  return reinterpret_cast<const T*>(c.constants + t.offset);
}
template <typename T, typename Entry>
bool table_matches(const OpCheck& c, uint32_t slot, format::DType dtype, int32_t count, Entry entry) {
  const T* table = table_of<T>(c, slot, dtype, count);
  if (table == nullptr) return false;
  const load_profile::PreparedTableScope profiled;
  for (int32_t i = 0; i < count; ++i) {
    if (table[i] != entry(i)) return false;
  }
  return true;
}

}  // namespace mcuflow::ops
