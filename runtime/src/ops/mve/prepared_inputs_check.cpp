// Checks of the MVE kernels that take a prepared input (checks.h): it must equal the one
// recomputed from the op's reference inputs, so the MVE kernel computes what the reference
// kernel computes. One file: the kernels share the template code (smaller on the device than
// one copy per adapter file, measured with bench/runtime_footprint.py).
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;
using kernels::DwConvParams;
using kernels::FcParams;

// Bounds the layouts' int32 index arithmetic (no microcontroller holds larger weights).
constexpr uint32_t kMaxWeightBytes = 1u << 24;

// A constant's bytes in the program, also for a constant copied into fast RAM at bind (the
// kernel reads the copy, which equals them); null for arena tensors.
template <typename T>
const T* constant_data(const OpCheck& c, uint32_t slot) {
  const format::TensorRecord& t = c.tensor(slot);
  return read_only(t) ? reinterpret_cast<const T*>(c.constants + t.offset) : nullptr;
}

// `c` passed its reference check; requantization arrays have out_c entries, or one when
// !per_channel_requant.
template <typename Layout>
bool prepared_input_valid(const OpCheck& c, const Layout& layout, int32_t input_offset, bool per_channel_requant) {
  if (c.tensor(1).bytes >= kMaxWeightBytes) return false;
  const int32_t bytes = layout.total_bytes();
  const kernels::MveReferenceInputs reference{constant_data<int8_t>(c, 1), constant_data<int32_t>(c, 2),
                                              constant_data<int32_t>(c, 3), constant_data<int32_t>(c, 4),
                                              per_channel_requant, input_offset};
  const uint8_t* prepared = constant_data<uint8_t>(c, mve::kPreparedSlot);
  if (!tensor_is(c, mve::kPreparedSlot, format::DType::kInt8, uint64_t(bytes)) || !prepared || !reference.weights ||
      !reference.bias || !reference.multipliers || !reference.shifts)
    return false;
  int32_t at = 0;
  return kernels::mve_emit_prepared(layout, reference, [&](uint8_t byte) { return prepared[at++] == byte; });
}

// The scratch: `bytes` of int8 in the arena (the kernel writes it).
bool scratch_valid(const OpCheck& c, uint64_t bytes) {
  return c.op->input_count > mve::kScratchSlot && c.tensor(mve::kScratchSlot).storage == format::Storage::kArena &&
         tensor_is(c, mve::kScratchSlot, format::DType::kInt8, bytes);
}

}  // namespace

Error check_conv_s8_1x1_mve(const OpCheck& c) {
  const Error e = check_conv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  // The kernel reads input pixel (oy * stride_h, ox * stride_w) without bounds checks.
  const bool pointwise = p.k_h == 1 && p.k_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
                         int64_t(p.out_h - 1) * p.stride_h < p.in_h && int64_t(p.out_w - 1) * p.stride_w < p.in_w;
  return ok_if(pointwise && prepared_input_valid(c, kernels::MveGemmLayout{p.in_c, p.out_c}, p.input_offset, true) &&
               scratch_valid(c, uint64_t(kernels::mve_pair_bytes(p.in_c))));
}

Error check_conv_s8_mve(const OpCheck& c) {
  const Error e = check_conv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  const uint64_t depth = uint64_t(p.k_h) * p.k_w * p.in_c;  // the weights' size: below 2^24 once
                                                            // prepared_input_valid accepts them
  return ok_if(prepared_input_valid(c, kernels::MveGemmLayout{int32_t(depth), p.out_c}, p.input_offset, true) &&
               scratch_valid(c, uint64_t(kernels::mve_conv_scratch_bytes(int32_t(depth)))));
}

Error check_dwconv_s8_mve(const OpCheck& c) {
  const Error e = check_dwconv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  if (p.ch_mult != 1 || int64_t(p.k_h) * p.k_w > kernels::kMveDwMaxTaps) return Error::kBadParams;
  const int8_t* weights = constant_data<int8_t>(c, 1);
  if (!weights || !kernels::mve_dw_weights_supported(weights, c.tensor(1).bytes)) return Error::kBadParams;
  return ok_if(prepared_input_valid(c, kernels::MveDwLayout{p.in_c, p.k_h * p.k_w}, p.input_offset, true));
}

Error check_fc_s8_mve(const OpCheck& c) {
  const Error e = check_fc_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<FcParams>();
  // Rows go through the scratch in pairs: a single row needs none.
  return ok_if(prepared_input_valid(c, kernels::MveGemmLayout{p.in_c, p.out_c}, p.input_offset, p.per_channel == 1) &&
               (p.rows == 1 || scratch_valid(c, uint64_t(kernels::mve_pair_bytes(p.in_c)))));
}

}  // namespace mcuflow::ops
