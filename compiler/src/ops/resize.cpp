// upsample_bilinear2d: bilinear resizing of an image to a given size.
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

Shape infer_upsample_bilinear(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  if (out.size() != 4) fail(op, "expects a 4-D input");
  const auto size = pair_attr(op, "size");
  if (size[0] < 1 || size[1] < 1) fail(op, "output size must be positive");
  if (!(op.float_attr("scale_h") >= 0.0 && op.float_attr("scale_w") >= 0.0)) fail(op, "scale factors must be positive");
  out[2] = size[0];
  out[3] = size[1];
  return out;
}

struct ResizeLowering : Lowering {
  using Lowering::Lowering;

  // Source indices and weights of bilinear resizing along one axis, in float32 as PyTorch's
  // upsample_bilinear2d computes them (area_pixel_compute_scale / _source_index, its opmath
  // type for float input): `scale_factor` 0 when the output size was given.
  static void bilinear_axis(int64_t in, int64_t out, bool align_corners, double scale_factor,
                            std::vector<int32_t>& taps, std::vector<float>& weights) {
    float scale;
    if (align_corners) scale = out > 1 ? float(in - 1) / float(out - 1) : 0.0f;
    else scale = scale_factor > 0.0 ? float(1.0 / scale_factor) : float(in) / float(out);
    for (int64_t o = 0; o < out; ++o) {
      float src = align_corners ? scale * float(o) : scale * (float(o) + 0.5f) - 0.5f;
      if (src < 0.0f) src = 0.0f;
      const int64_t i0 = std::min(int64_t(std::floor(src)), in - 1);
      taps.push_back(int32_t(i0));
      taps.push_back(int32_t(i0 < in - 1 ? i0 + 1 : i0));
      weights.push_back(std::clamp(src - float(i0), 0.0f, 1.0f));
    }
  }

  void lower_upsample_bilinear(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    require_batch1(op, x);
    if (layout_of(x) != Layout::kNhwc || layout_of(y) != Layout::kNhwc) fail(op, "internal: bilinear resize of a non-image tensor");
    const bool align_corners = op.int_attr("align_corners") != 0;
    k::ResizeBilinearParams p{int32_t(x.shape[2]), int32_t(x.shape[3]), int32_t(x.shape[1]), int32_t(y.shape[2]),
                              int32_t(y.shape[3])};
    std::vector<int32_t> taps;
    std::vector<float> weights;
    bilinear_axis(p.in_h, p.out_h, align_corners, op.float_attr("scale_h"), taps, weights);
    bilinear_axis(p.in_w, p.out_w, align_corners, op.float_attr("scale_w"), taps, weights);
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const int32_t entries = p.out_h + p.out_w;
    const int tid = constant(y.name + ".taps", DType::kInt32, {2 * entries}, taps);
    if (!is_quantized()) {
      const int wid = constant(y.name + ".weights", DType::kFloat32, {entries}, weights);
      emit(KernelId::resize_bilinear_f32, {in, tid, wid}, {out}, params_bytes(p), &op);
      return;
    }
    // Fixed-point weights, rounded to nearest: the output keeps the input's quantization.
    std::vector<int32_t> fixed(weights.size());
    for (size_t i = 0; i < weights.size(); ++i)
      fixed[i] = int32_t(std::lround(double(weights[i]) * (1 << k::kResizeWeightBits)));
    const int wid = constant(y.name + ".weights", DType::kInt32, {entries}, fixed);
    emit(KernelId::resize_bilinear_s8, {in, tid, wid}, {out}, params_bytes(p), &op);
  }
};

}  // namespace

std::vector<OpDef> resize_ops() {
  return {{"upsample_bilinear2d", infer_upsample_bilinear,
           lower_with<ResizeLowering, &ResizeLowering::lower_upsample_bilinear>, kImageOp, OutputQuant::kInput}};
}

}  // namespace mcuflow::compiler
