// Adapters for fc_s8 / fc_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::FcParams;

bool shape_valid(const OpCheck& c, const FcParams& p, DType act, DType bias) {
  return p.rows >= 1 && positive(p.in_c) && positive(p.out_c) &&
         tensor_is(c, 0, act, uint64_t(p.rows) * p.in_c) &&
         tensor_is(c, 1, act, uint64_t(p.out_c) * p.in_c) && tensor_is(c, 2, bias, p.out_c);
}

}  // namespace

Error check_fc_s8(const OpCheck& c) {
  const auto& p = c.get_params<FcParams>();
  const uint64_t channels = p.per_channel ? uint64_t(p.out_c) : 1;
  return ok_if(shape_valid(c, p, DType::kInt8, DType::kInt32) && in_range(p.per_channel, 0, 1) &&
               input_offset_valid(p.input_offset) && output_stage_valid(p.out, DType::kInt8) && requant_tables_valid(c, 3, 4, channels) &&
               bias_fits_accumulator(c, 2, uint64_t(p.out_c), uint64_t(p.in_c)) &&
               output_is(c, DType::kInt8, uint64_t(p.rows) * p.out_c));
}

Error check_fc_f32(const OpCheck& c) {
  const auto& p = c.get_params<FcParams>();
  return ok_if(shape_valid(c, p, DType::kFloat32, DType::kFloat32) &&
               output_is(c, DType::kFloat32, uint64_t(p.rows) * p.out_c));
}

namespace {

void eval_fc_s8(const OpCall& c) {
  kernels::fc_s8(c.get_params<FcParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2), c.in<int32_t>(3),
                 c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_fc_f32(const OpCall& c) {
  kernels::fc_f32(c.get_params<FcParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_fc_s8 = {sizeof(FcParams), 5, 1, check_fc_s8, eval_fc_s8};
extern const KernelEntry kernel_entry_fc_f32 = {sizeof(FcParams), 3, 1, check_fc_f32, eval_fc_f32};

}  // namespace mcuflow::ops
