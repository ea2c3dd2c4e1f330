// Pooling over H and W: max_pool2d, avg_pool2d, adaptive_avg_pool2d (output sizes that divide
// the input's).
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

Shape infer_pool(const Graph& g, const Op& op, bool is_avg) {
  const Shape& x = in_shape(g, op, 0);
  if (x.size() != 4) fail(op, "expects a 4-D input, got " + shape_str(x));
  auto k = pair_attr(op, "kernel");
  std::vector<int64_t> stride = op.ints_attr("stride");
  if (stride.empty()) stride = k;  // PyTorch: stride defaults to the kernel size
  if (stride.size() == 1) stride.push_back(stride[0]);
  auto pad = pair_attr(op, "padding");
  std::vector<int64_t> dil = {1, 1};
  if (op.has_attr("dilation")) dil = pair_attr(op, "dilation");
  if (dil[0] != 1 || dil[1] != 1) fail(op, "dilated pooling is not supported");
  const bool ceil_mode = op.has_attr("ceil_mode") && op.int_attr("ceil_mode") != 0;
  const auto pad_end = end_padding(op, pad);
  // Folded pads (padding_end present) may exceed PyTorch's half-kernel limit: they are data.
  const bool folded = op.has_attr("padding_end");
  for (int i = 0; i < 2; ++i) {
    if (k[i] < 1 || stride[i] < 1 || pad[i] < 0 || (!folded && 2 * pad[i] > k[i])) fail(op, "invalid kernel/stride/padding");
  }
  if (is_avg && op.has_attr("divisor_override")) fail(op, "divisor_override is not supported");
  const int64_t oh = window_out(x[2], k[0], stride[0], pad[0], pad_end[0], 1, ceil_mode);
  const int64_t ow = window_out(x[3], k[1], stride[1], pad[1], pad_end[1], 1, ceil_mode);
  if (is_avg && ceil_mode && (oh != window_out(x[2], k[0], stride[0], pad[0], pad_end[0], 1, false) ||
                              ow != window_out(x[3], k[1], stride[1], pad[1], pad_end[1], 1, false)))
    fail(op, "avg_pool2d with ceil_mode=True that adds partial windows is not supported");
  if (oh < 1 || ow < 1) fail(op, "kernel larger than the padded input");
  return {x[0], x[1], oh, ow};
}

Shape infer_max_pool(const Graph& g, const Op& op) { return infer_pool(g, op, false); }
Shape infer_avg_pool(const Graph& g, const Op& op) { return infer_pool(g, op, true); }

Shape infer_adaptive_avg_pool(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  auto size = pair_attr(op, "output_size");
  if (x.size() != 4) fail(op, "expects a 4-D input");
  if (size[0] < 1 || size[1] < 1 || x[2] % size[0] != 0 || x[3] % size[1] != 0)
    fail(op, "output size " + shape_str(size) + " must divide the input size " + shape_str(x));
  return {x[0], x[1], size[0], size[1]};
}

// avgpool_s16 divides by the taps inside the input: a padded average that counts the padding
// (avgpool_include_pad_s8) has no int16 kernel.
bool avg_pool_takes_int16(const Graph&, const Op& op) {
  const auto padded = [&](const char* name) {
    if (!op.has_attr(name)) return false;
    const auto& v = op.ints_attr(name);
    return std::any_of(v.begin(), v.end(), [](int64_t p) { return p != 0; });
  };
  const bool counts_padding = op.has_attr("count_include_pad") && op.int_attr("count_include_pad") != 0;
  return !(counts_padding && (padded("padding") || padded("padding_end")));
}

struct PoolLowering : Lowering {
  using Lowering::Lowering;

  void lower_pool(const Op& op) {
    auto pair = [&](const char* name, const std::vector<int64_t>& fallback) {
      auto v = op.has_attr(name) ? op.ints_attr(name) : fallback;
      if (v.empty()) v = fallback;
      if (v.size() == 1) v.push_back(v[0]);
      return v;
    };
    const auto kernel = pair("kernel", {});
    const auto stride = pair("stride", kernel);
    const auto pad = pair("padding", {0, 0});
    const auto pad_end = pair("padding_end", pad);
    const bool padded = pad[0] || pad[1] || pad_end[0] || pad_end[1];
    const bool padding_counts = op.kind == "avg_pool2d" && padded && op.has_attr("count_include_pad") &&
                                op.int_attr("count_include_pad") != 0;
    emit_pool(op, op.kind == "max_pool2d", int32_t(kernel[0]), int32_t(kernel[1]), int32_t(stride[0]),
              int32_t(stride[1]), int32_t(pad[0]), int32_t(pad[1]), padding_counts);
  }

  void lower_adaptive_pool(const Op& op) { lower_global_pool(op); }
};

}  // namespace

std::vector<OpDef> pool_ops() {
  const LowerRule lower_pool = lower_with<PoolLowering, &PoolLowering::lower_pool>;
  return {
      {"max_pool2d", infer_max_pool, lower_pool, kImageOp, OutputQuant::kInput, RowLift::kNo, ConstantQuant::kNone,
       nullptr, always_int16},
      {"avg_pool2d", infer_avg_pool, lower_pool, kImageOp, OutputQuant::kAverage, RowLift::kNo, ConstantQuant::kNone,
       nullptr, avg_pool_takes_int16},
      {"adaptive_avg_pool2d", infer_adaptive_avg_pool, lower_with<PoolLowering, &PoolLowering::lower_adaptive_pool>,
       kImageOp, OutputQuant::kAverage, RowLift::kNo, ConstantQuant::kNone, nullptr, always_int16},
  };
}

}  // namespace mcuflow::compiler
