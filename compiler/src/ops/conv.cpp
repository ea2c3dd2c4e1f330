// conv2d (regular, grouped and depthwise) and conv_transpose2d.
#include <algorithm>

#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

void require_constant_parameters(const Graph& g, const Op& op) {
  if (!g.tensors[op.inputs[1]].constant) fail(op, "weights must be constant");
  if (op.inputs.size() > 2 && !g.tensors[op.inputs[2]].constant) fail(op, "bias must be constant");
}

// The input a conv reads: a streaming conv (stream_convs) reads its ring's window, the kept
// frames and the new ones along time (W of a Conv1d's row view, else H).
Shape window_shape(const Graph& g, const Op& op) {
  Shape x = in_shape(g, op, 0);
  if (op.has_attr("ring_frames") && x.size() == 4) x[size_t(op.int_attr("ring_axis"))] += op.int_attr("ring_frames");
  return x;
}

Shape infer_conv2d(const Graph& g, const Op& op) {
  const Shape x = window_shape(g, op);
  const Shape& w = in_shape(g, op, 1);
  if (x.size() != 4 || w.size() != 4) fail(op, "expects a 4-D input and 4-D weight, got " + shape_str(x));
  require_constant_parameters(g, op);
  auto stride = pair_attr(op, "stride"), pad = pair_attr(op, "padding"), dil = pair_attr(op, "dilation");
  const int64_t groups = op.int_attr("groups");
  if (groups < 1 || x[1] % groups != 0 || w[1] * groups != x[1] || w[0] % groups != 0)
    fail(op, "weight " + shape_str(w) + " and groups=" + std::to_string(groups) + " do not match input " + shape_str(x));
  for (int i = 0; i < 2; ++i) {
    if (stride[i] < 1 || dil[i] < 1 || pad[i] < 0) fail(op, "stride/dilation must be >= 1 and padding >= 0");
  }
  const auto pad_end = end_padding(op, pad);
  const int64_t oh = window_out(x[2], w[2], stride[0], pad[0], pad_end[0], dil[0], false);
  const int64_t ow = window_out(x[3], w[3], stride[1], pad[1], pad_end[1], dil[1], false);
  if (oh < 1 || ow < 1) fail(op, "kernel larger than the padded input");
  return {x[0], w[0], oh, ow};
}

Shape infer_conv_transpose2d(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  const Shape& w = in_shape(g, op, 1);
  if (x.size() != 4 || w.size() != 4) fail(op, "expects a 4-D input and 4-D weight, got " + shape_str(x));
  require_constant_parameters(g, op);
  if (op.int_attr("groups") != 1) fail(op, "grouped transposed convolution is not supported (groups must be 1)");
  if (w[0] != x[1]) fail(op, "weight " + shape_str(w) + " does not match input " + shape_str(x));
  auto stride = pair_attr(op, "stride"), pad = pair_attr(op, "padding"), dil = pair_attr(op, "dilation");
  auto extra = pair_attr(op, "output_padding");
  Shape out = {x[0], w[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (stride[i] < 1 || dil[i] < 1 || pad[i] < 0 || extra[i] < 0) fail(op, "stride/dilation must be >= 1 and padding >= 0");
    if (extra[i] >= stride[i] && extra[i] >= dil[i]) fail(op, "output_padding must be smaller than stride or dilation");
    out[2 + i] = (x[2 + i] - 1) * stride[i] - 2 * pad[i] + dil[i] * (w[2 + i] - 1) + extra[i] + 1;
    if (out[2 + i] < 1) fail(op, "padding larger than the output");
  }
  return out;
}

// conv_s16 and dwconv_s16 take every conv but a streaming one, whose ring holds int8 frames.
bool conv_takes_int16(const Graph&, const Op& op) { return !op.has_attr("ring_state"); }

// conv_s8_w4 and dwconv_s8_w4 take every conv but a streaming one (the ring kernels read int8 weights).
std::string conv_int4_rejection(const Graph&, const Op& op) {
  return op.has_attr("ring_state") ? "a streaming conv's ring kernel reads int8 weights" : "";
}

struct ConvLowering : Lowering {
  using Lowering::Lowering;

  void lower_conv(const Op& op) {
    const bool ring = op.has_attr("ring_state");
    // A streaming conv's window is its ring, which holds the frames in the state's spec.
    const Tensor& x = tensor(ring ? int(op.int_attr("ring_state")) : op.inputs[0]);
    const Shape window = window_shape(g_, op);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.outputs[0]);
    require_batch1(op, tensor(op.inputs[0]));
    const int64_t groups = op.int_attr("groups");
    const int32_t out_c = int32_t(w.shape[0]), in_c = int32_t(x.shape[1]);
    const int32_t kh = int32_t(w.shape[2]), kw = int32_t(w.shape[3]);
    auto pair = [&](const char* name) {
      auto v = op.ints_attr(name);
      if (v.size() == 1) v.push_back(v[0]);
      return v;
    };
    const auto stride = pair("stride"), pad = pair("padding"), dil = pair("dilation");
    // One group per input channel is depthwise (dwconv kernels); other groups > 1 run on the
    // conv kernels, each output channel over its group's in_c / groups input channels.
    const bool depthwise = groups != 1 && groups == in_c;
    const int32_t group_in = int32_t(w.shape[1]);  // in_c / groups
    const int64_t macs = y.numel() * kh * kw * group_in;

    // Weights to the device layout: OHWI for conv (I = group_in), [KH][KW][O] for depthwise.
    const size_t per_out = size_t(kh) * kw * group_in;
    std::vector<size_t> device_from_logical(w.data.size());
    for (int32_t o = 0; o < out_c; ++o)
      for (int32_t ky = 0; ky < kh; ++ky)
        for (int32_t kx = 0; kx < kw; ++kx)
          for (int32_t i = 0; i < group_in; ++i) {
            const size_t logical = ((size_t(o) * group_in + i) * kh + ky) * kw + kx;
            if (depthwise) device_from_logical[(size_t(ky) * kw + kx) * out_c + o] = logical;
            else device_from_logical[((size_t(o) * kh + ky) * kw + kx) * group_in + i] = logical;
          }

    const int in = ring ? frames_in_state_spec(op, x) : activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const std::string name = w.name;
    const std::vector<int32_t> w_dims = depthwise ? std::vector<int32_t>{kh, kw, out_c}
                                                  : std::vector<int32_t>{out_c, kh, kw, group_in};
    auto fill_window = [&](auto& p) {
      p.in_h = int32_t(window[2]); p.in_w = int32_t(window[3]); p.in_c = in_c;
      p.out_h = int32_t(y.shape[2]); p.out_w = int32_t(y.shape[3]); p.out_c = out_c;
      p.k_h = kh; p.k_w = kw;
      p.stride_h = int32_t(stride[0]); p.stride_w = int32_t(stride[1]);
      p.pad_top = int32_t(pad[0]); p.pad_left = int32_t(pad[1]);
      p.dil_h = int32_t(dil[0]); p.dil_w = int32_t(dil[1]);
      p.input_offset = is_quantized() ? -x.quant.zero_point : 0;
      fill_output_stage(p, op, y);
    };
    // A streaming conv: the ring (params after the conv's) and its head, states the op writes.
    std::vector<int> outs = {out};
    k::RingParams r{};
    if (ring) {
      const bool rows = op.int_attr("ring_axis") == 3;  // a Conv1d's row view: time on W; else on H
      r.frame_elements = rows ? in_c : int32_t(window[3]) * in_c;
      r.slots = int32_t(window[rows ? 3 : 2]);
      r.frames = r.slots - int32_t(op.int_attr("ring_frames"));
      add_ring_states(x, r, outs);
    }
    std::vector<uint8_t> params;
    if (depthwise) {
      k::DwConvParams p{};
      fill_window(p);
      p.ch_mult = out_c / in_c;
      params = ring ? params_bytes(k::RingDwConvParams{p, r}) : params_bytes(p);
    } else {
      k::ConvParams p{};
      fill_window(p);
      p.groups = int32_t(groups);
      params = ring ? params_bytes(k::RingConvParams{p, r}) : params_bytes(p);
    }
    if (!is_quantized()) {
      const int wid = constant(name, DType::kFloat32, w_dims, gathered(w.data, device_from_logical));
      const int bid = constant(name + ".bias", DType::kFloat32, {out_c}, bias_of(op, out_c));
      const KernelId kernel = ring ? (depthwise ? KernelId::ring_dwconv_f32 : KernelId::ring_conv_f32)
                                   : (depthwise ? KernelId::dwconv_f32 : KernelId::conv_f32);
      emit(kernel, {in, wid, bid}, outs, params, &op, macs);
      return;
    }
    int bid, mid, sid;
    requant_tables(op, x, w, y, out_c, int64_t(per_out), bid, mid, sid);
    const int wid = weight_constant(w, w_dims, gathered(quantized(w), device_from_logical));
    const KernelId kernel = ring         ? (depthwise ? KernelId::ring_dwconv_s8 : KernelId::ring_conv_s8)
                            : is_int16(op.inputs[0]) ? (depthwise ? KernelId::dwconv_s16 : KernelId::conv_s16)
                            : int4_weights(w)        ? (depthwise ? KernelId::dwconv_s8_w4 : KernelId::conv_s8_w4)
                                                     : (depthwise ? KernelId::dwconv_s8 : KernelId::conv_s8);
    emit(kernel, {in, wid, bid, mid, sid}, outs, params, &op, macs);
    note_weights(op, w);
  }

  // The frames a streaming conv appends, in its ring state's spec (quantized: requantized when
  // the op computing them fixed another; both int8, as streaming convs stay int8).
  int frames_in_state_spec(const Op& op, const Tensor& state) {
    const int frames = activation(op.inputs[0]);
    const Tensor& x = tensor(op.inputs[0]);
    if (!is_quantized() || spec_of(x) == spec_of(state)) return frames;
    return requantized(op, frames, x.quant, state.quant);
  }

  // The ring of state `state` (2 * slots frames, each frame stored twice; the state's values
  // are the history, in the slots after the first run's frames) and its head (0), appended to
  // `outs` and kept by the program. The state's logical (1, C, kept) or (1, C, kept, F) values
  // become frames of C (or F x C) elements.
  void add_ring_states(const Tensor& state, const k::RingParams& r, std::vector<int>& outs) {
    const auto found = std::find_if(g_.states.begin(), g_.states.end(), [&](const StateTensor& s) {
      return &g_.tensors[size_t(s.tensor)] == &state;
    });
    const std::vector<float>& initial = found->initial;
    const int64_t channels = state.shape[1], kept = state.shape[2];
    const int64_t features = state.shape.size() == 4 ? state.shape[3] : 1;
    std::vector<float> values(size_t(2) * size_t(r.slots) * size_t(r.frame_elements), 0.0f);
    for (int64_t copy = 0; copy < 2; ++copy)
      for (int64_t j = 0; j < kept; ++j)
        for (int64_t f = 0; f < features; ++f)
          for (int64_t c = 0; c < channels; ++c)
            values[size_t(((copy * r.slots + r.frames + j) * features + f) * channels + c)] =
                initial[size_t((c * kept + j) * features + f)];
    ProgramTensor ring;
    ring.name = state.name + ".ring";
    ring.dtype = act_dtype();
    ring.dims = {2 * r.slots, r.frame_elements};
    ring.logical_shape = {2 * r.slots, r.frame_elements};
    ring.state = true;
    if (is_quantized()) {
      ring.scale = state.quant.scale;
      ring.zero_point = state.quant.zero_point;
      ring.bytes = raw_bytes(narrowed<int8_t>(quantize_values(values, spec_of(state), ring.logical_shape)));
    } else {
      ring.bytes = raw_bytes(values);
    }
    ProgramTensor head;
    head.name = state.name + ".head";
    head.dtype = DType::kInt32;
    head.dims = {1};
    head.logical_shape = {1};
    head.state = true;
    head.bytes = raw_bytes(std::vector<int32_t>{0});
    const int ring_id = p_.add_tensor(std::move(ring)), head_id = p_.add_tensor(std::move(head));
    p_.states.push_back(StateUpdate{ring_id, ring_id});
    p_.states.push_back(StateUpdate{head_id, head_id});
    outs.push_back(ring_id);
    outs.push_back(head_id);
  }

  void lower_conv_transpose(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& w = tensor(op.inputs[1]);  // PyTorch [in_c][out_c][k_h][k_w]
    const Tensor& y = tensor(op.outputs[0]);
    require_batch1(op, x);
    const int32_t in_c = int32_t(w.shape[0]), out_c = int32_t(w.shape[1]);
    const int32_t kh = int32_t(w.shape[2]), kw = int32_t(w.shape[3]);
    std::vector<size_t> ohwi_from_logical(w.data.size());
    for (int32_t i = 0; i < in_c; ++i)
      for (int32_t o = 0; o < out_c; ++o)
        for (int32_t ky = 0; ky < kh; ++ky)
          for (int32_t kx = 0; kx < kw; ++kx)
            ohwi_from_logical[((size_t(o) * kh + ky) * kw + kx) * in_c + i] = ((size_t(i) * out_c + o) * kh + ky) * kw + kx;
    const auto stride = op.ints_attr("stride"), pad = op.ints_attr("padding"), dil = op.ints_attr("dilation");
    auto second = [](const std::vector<int64_t>& v) { return int32_t(v.size() > 1 ? v[1] : v[0]); };
    k::ConvParams p{};
    p.in_h = int32_t(x.shape[2]); p.in_w = int32_t(x.shape[3]); p.in_c = in_c;
    p.out_h = int32_t(y.shape[2]); p.out_w = int32_t(y.shape[3]); p.out_c = out_c;
    p.k_h = kh; p.k_w = kw;
    p.stride_h = int32_t(stride[0]); p.stride_w = second(stride);
    p.pad_top = int32_t(pad[0]); p.pad_left = second(pad);
    p.dil_h = int32_t(dil[0]); p.dil_w = second(dil);
    p.input_offset = is_quantized() ? -x.quant.zero_point : 0;
    fill_output_stage(p, op, y);
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const int64_t macs = x.numel() * out_c * kh * kw;
    const std::vector<int32_t> w_dims = {out_c, kh, kw, in_c};
    if (!is_quantized()) {
      const int wid = constant(w.name, DType::kFloat32, w_dims, gathered(w.data, ohwi_from_logical));
      const int bid = constant(w.name + ".bias", DType::kFloat32, {out_c}, bias_of(op, out_c));
      emit(KernelId::transpose_conv_f32, {in, wid, bid}, {out}, params_bytes(p), &op, macs);
      return;
    }
    int bid, mid, sid;
    requant_tables(op, x, w, y, out_c, int64_t(in_c) * kh * kw, bid, mid, sid);
    const int wid = constant(w.name, DType::kInt8, w_dims, narrowed<int8_t>(gathered(quantized(w), ohwi_from_logical)));
    emit(KernelId::transpose_conv_s8, {in, wid, bid, mid, sid}, {out}, params_bytes(p), &op, macs);
    note_weights(op, w);
  }
};

}  // namespace

std::vector<OpDef> conv_ops() {
  return {
      {"conv2d", infer_conv2d, lower_with<ConvLowering, &ConvLowering::lower_conv>, kImageOp | kFusesActivation,
       OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kWeightsPerChannel, nullptr, conv_takes_int16,
       conv_int4_rejection},
      {"conv_transpose2d", infer_conv_transpose2d, lower_with<ConvLowering, &ConvLowering::lower_conv_transpose>,
       kImageOp | kFusesActivation, OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kWeightsPerChannelDim1},
  };
}

}  // namespace mcuflow::compiler
