// Checks of the MVE kernels that take a prepared input (checks.h): it must equal the one
// recomputed from the op's reference inputs, so the MVE kernel computes what the reference
// kernel computes. One file: the kernels share the template code (smaller on the device than
// one copy per adapter file, measured with bench/runtime_footprint.py).
#include "checks.h"
#include <type_traits>

#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/kernels/mve_prepared.h"

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

// Whether `prepared` is the layout's prepared input. A board compares in MVE lanes, a block of
// channels a step (mve_prepared.h, the bytes mve_walk_prepared visits); the host word by word.
template <typename Layout>
bool prepared_matches(const Layout& layout, const kernels::MveReferenceInputs& r, const uint8_t* prepared) {
#if defined(__ARM_FEATURE_MVE)
  if constexpr (std::is_same_v<Layout, kernels::MveGemmLayout>)
    return kernels::mve::gemm_tables_match(layout, r, reinterpret_cast<const int32_t*>(prepared));
  else if constexpr (std::is_same_v<Layout, kernels::MvePointwiseLayout>)
    return kernels::mve::pointwise_prepared_match(layout, r, prepared);
  else
    return kernels::mve::dw_prepared_match(layout, r, prepared);
#else
  return kernels::mve_prepared_matches(layout, r, prepared);
#endif
}

// `c` passed its reference check; requantization arrays have out_c entries, or one when
// !per_channel_requant.
template <typename Layout>
bool prepared_input_valid(const OpCheck& c, const Layout& layout, int32_t input_offset, bool per_channel_requant) {
  using kernels::kMvePreparedSlot;
  if (c.tensor(kernels::kWeightsSlot).bytes >= kMaxWeightBytes || !weighted_inputs_constant(c)) return false;
  const int32_t bytes = layout.total_bytes();
  const kernels::MveReferenceInputs reference{
      constant_data<int8_t>(c, kernels::kWeightsSlot), constant_data<int32_t>(c, kernels::kBiasSlot),
      constant_data<int32_t>(c, kernels::kMultipliersSlot), constant_data<int32_t>(c, kernels::kShiftsSlot),
      per_channel_requant, input_offset};
  const uint8_t* prepared = constant_data<uint8_t>(c, kMvePreparedSlot);
  if (!tensor_is(c, kMvePreparedSlot, format::DType::kInt8, uint64_t(bytes)) || !prepared) return false;
  // The kernels load the tables as words (VLDRW), which fault off a word boundary: the bytes they
  // read (the section's, or bind's copy) start 16-byte aligned, as the compiler places every
  // constant (an int8 record alone promises no alignment).
  const format::TensorRecord& t = c.tensor(kMvePreparedSlot);
  if ((t.offset | t.copy_offset) % format::kConstantAlign != 0) return false;
  // Memory safety needs only the record above: the kernels address the prepared bytes by the
  // layout (the params), never by a value, and feed the values to MVE instructions alone, which
  // are defined for every value. Recomputing them proves that the board computes the host's
  // reference result (Verify::kFull).
  if (!c.values) return true;
  const load_profile::PreparedTableScope profiled;
  return prepared_matches(layout, reference, prepared);
}

bool scratch_valid(const OpCheck& c, uint64_t bytes) { return mve::scratch_valid(c, kernels::kMveScratchSlot, bytes); }

}  // namespace

Error check_conv_s8_1x1_mve(const OpCheck& c) {
  const Error e = check_conv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  return ok_if(kernels::conv_s8_1x1_mve_refusal(p) == kernels::Refusal::kNone &&
               prepared_input_valid(c, kernels::MvePointwiseLayout{p.in_c, p.out_c}, p.input_offset, true) &&
               scratch_valid(c, uint64_t(kernels::mve_pointwise_pair_bytes(p.in_c))));
}

Error check_conv_s8_mve(const OpCheck& c) {
  const Error e = check_conv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  if (kernels::conv_s8_mve_refusal(p) != kernels::Refusal::kNone) return Error::kBadParams;
  // windows of at most kMveMaxDepth: no overflow
  return ok_if(prepared_input_valid(c, kernels::mve_conv_gemm_layout(p), p.input_offset, true) &&
               scratch_valid(c, uint64_t(kernels::mve_conv_scratch_bytes(p))));
}

Error check_dwconv_s8_mve(const OpCheck& c) {
  const Error e = check_dwconv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  if (kernels::dwconv_s8_mve_refusal(p) != kernels::Refusal::kNone) return Error::kBadParams;
  const int8_t* weights = constant_data<int8_t>(c, kernels::kWeightsSlot);
  if (!weights || !kernels::mve_dw_weights_supported(weights, c.tensor(kernels::kWeightsSlot).bytes))
    return Error::kBadParams;
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
