// Ops that copy elements: pad, slice, expand, upsample_nearest2d (one strided gather), cat,
// and input_rows (split_into_patches with a streamed input: a band of a graph input's rows,
// fetched from the application, shaped as a slice).
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

// "pad": PyTorch F.pad order, (before, after) pairs starting from the last dim; negative
// values crop.
Shape infer_pad(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const auto& pad = op.ints_attr("pad");
  if (pad.size() % 2 != 0 || pad.size() > 2 * out.size()) fail(op, "pad must hold (before, after) pairs for at most every dim");
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t& d = out[out.size() - 1 - i];
    d += pad[2 * i] + pad[2 * i + 1];
    if (d < 1) fail(op, "padding leaves an empty dimension");
  }
  return out;
}

Shape infer_slice(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  const int64_t start = op.int_attr("start"), end = op.int_attr("end"), step = op.int_attr("step");
  if (step < 1) fail(op, "slice step must be >= 1");
  if (start < 0 || end > out[dim] || start >= end) fail(op, "slice [" + std::to_string(start) + ", " + std::to_string(end) + ") is empty or outside dim " + std::to_string(dim) + " of " + shape_str(out));
  out[dim] = (end - start + step - 1) / step;
  return out;
}

Shape infer_expand(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  Shape out = op.ints_attr("shape");
  if (out.size() < x.size()) fail(op, "cannot expand " + shape_str(x) + " to fewer dims");
  const size_t lead = out.size() - x.size();
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t have = d < lead ? 1 : x[d - lead];
    if (out[d] == -1 && d >= lead) out[d] = have;
    if (out[d] < 1 || (have != 1 && have != out[d])) fail(op, "cannot expand " + shape_str(x) + " to " + shape_str(op.ints_attr("shape")));
  }
  return out;
}

Shape infer_upsample(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  if (out.size() != 4) fail(op, "expects a 4-D input");
  const auto scale = pair_attr(op, "scale");
  if (scale[0] < 1 || scale[1] < 1) fail(op, "scale factors must be positive integers");
  out[2] *= scale[0];
  out[3] *= scale[1];
  return out;
}

Shape infer_cat(const Graph& g, const Op& op) {
  if (op.inputs.empty()) fail(op, "needs at least one input");
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    const Shape& s = in_shape(g, op, i);
    if (s.size() != out.size()) fail(op, "inputs have different ranks");
    for (size_t d = 0; d < s.size(); ++d) {
      if (static_cast<int64_t>(d) != dim && s[d] != out[d]) fail(op, "input shapes differ outside the cat dim");
    }
    out[dim] += s[dim];
  }
  return out;
}

// A strided copy moves int16 elements as byte pairs (one more dim), filling with 0 only: a pad
// value of 0 (0 in every int16 spec) has equal bytes.
bool copy_takes_int16(const Graph& g, const Op& op) {
  return g.tensors[size_t(op.outputs[0])].shape.size() < k::kMaxRank &&
         (op.kind != "pad" || op.float_attr("value") == 0.0);
}

struct CopyLowering : Lowering {
  using Lowering::Lowering;

  // --- pad, slice, expand, upsample: one strided gather ---

  void lower_strided_copy(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const size_t rank = y.shape.size();
    Gather g(rank);
    if (op.kind == "pad") {
      const auto& pad = op.ints_attr("pad");
      for (size_t i = 0; i < pad.size() / 2; ++i) g.start[rank - 1 - i] = -pad[2 * i];
      const float value = float(op.float_attr("value"));
      if (is_quantized()) g.fill = quantized_bound(value, y.quant, false);
      else std::memcpy(&g.fill, &value, sizeof(g.fill));
    } else if (op.kind == "slice") {
      const size_t dim = dim_of(op, rank);
      g.start[dim] = op.int_attr("start");
      g.num[dim] = op.int_attr("step");
    } else if (op.kind == "expand") {
      g = broadcast_gather(x.shape, y.shape);
    } else {  // upsample_nearest2d
      const auto scale = op.ints_attr("scale");
      g.den[2] = scale[0];
      g.den[3] = scale.size() > 1 ? scale[1] : scale[0];
    }
    int in = in_layout_of(op, op.inputs[0], y);
    if (is_quantized() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)) {
      in = requantized(op, in, x.quant, y.quant);
    }
    emit_gather(op, in, activation(op.outputs[0]), x.shape, y, g);
  }

  void lower_cat(const Op& op) {
    const Tensor& y = tensor(op.outputs[0]);
    const int64_t logical_dim = int64_t(dim_of(op, y.shape.size()));
    const auto order = physical_order(layout_of(y), y.shape.size());
    const auto axis = size_t(std::find(order.begin(), order.end(), int(logical_dim)) - order.begin());
    const std::vector<int32_t> y_dims = physical_dims(y);
    int64_t outer = 1, after = 1;
    for (size_t d = 0; d < axis; ++d) outer *= y_dims[d];
    for (size_t d = axis + 1; d < y_dims.size(); ++d) after *= y_dims[d];
    const int out = activation(op.outputs[0]);
    const bool masks = y.element == Element::kMask;  // a cat of masks: their bytes, in every program
    int64_t offset = 0;
    for (int input : op.inputs) {
      const Tensor& x = tensor(input);
      if (!x.constant && x.nhwc != y.nhwc) fail(op, "inputs have different layouts");
      k::ConcatSliceParams p{};
      p.outer = int32_t(outer);
      p.in_c = int32_t(x.shape[logical_dim] * after);
      p.out_c = int32_t(y.shape[logical_dim] * after);
      p.offset_c = int32_t(offset);
      offset += p.in_c;
      if (is_quantized() && !masks && !x.constant && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)) {
        const QuantizedMultiplier m = quantize_multiplier(double(x.quant.scale) / y.quant.scale);
        p.requantize = 1;
        p.input_offset = -x.quant.zero_point;
        p.output_offset = y.quant.zero_point;
        p.multiplier = m.multiplier;
        p.shift = m.shift;
      }
      emit(is_quantized() || masks ? KernelId::concat_slice_s8 : KernelId::concat_slice_f32,
           {x.constant ? cat_constant(x, y) : activation(input)}, {out}, params_bytes(p), &op);
    }
  }

  // A constant piece of a cat (a class token) in the output's layout and quantization, so
  // the copy into the output needs no requantization.
  int cat_constant(const Tensor& x, const Tensor& y) {
    std::vector<int32_t> dims;
    for (int d : physical_order(layout_of(y), x.shape.size())) dims.push_back(int32_t(x.shape[size_t(d)]));
    const std::vector<float> phys = to_physical(x.data, x.shape, layout_of(y));
    if (!is_quantized()) return constant(x.name, DType::kFloat32, dims, phys);
    return constant(x.name + ".int8", DType::kInt8, dims, narrowed<int8_t>(quantize_values(phys, spec_of(x))));
  }

  // --- input_rows (split_into_patches, stream_input): rows [start, end) of a graph input, fetched
  // from the application while the program runs; the input itself gets no arena bytes ---

  void lower_input_rows(const Op& op) {
    const int input = int(std::find(g_.inputs.begin(), g_.inputs.end(), op.inputs[0]) - g_.inputs.begin());
    if (input == int(g_.inputs.size()) || tensor(op.inputs[0]).shape.size() != 4)
      fail(op, "internal: input rows of a tensor that is not a rank-4 graph input");
    const int x = p_.inputs[size_t(input)];
    if (p_.tensors[x].ir_tensor != op.inputs[0]) fail(op, "internal: input rows of an input that is converted first");
    p_.tensors[x].streamed = true;
    const int64_t row_bytes = p_.tensors[x].byte_size() / tensor(op.inputs[0]).shape[2];
    const int64_t start = op.int_attr("start"), end = op.int_attr("end");
    const format::InputRowsParams rows{uint32_t(input), uint32_t(start * row_bytes), uint32_t((end - start) * row_bytes)};
    emit(KernelId::read_input_rows, {}, {activation(op.outputs[0])}, params_bytes(rows), &op);
  }
};

}  // namespace

std::vector<OpDef> copy_ops() {
  const LowerRule strided_copy = lower_with<CopyLowering, &CopyLowering::lower_strided_copy>;
  return {
      {"pad", infer_pad, strided_copy, kLayoutAgnostic, OutputQuant::kInputWhenValueFits, RowLift::kPad,
       ConstantQuant::kNone, nullptr, copy_takes_int16},
      {"slice", infer_slice, strided_copy, kLayoutAgnostic | kMovesBytes, OutputQuant::kInput, RowLift::kDim,
       ConstantQuant::kNone, nullptr, copy_takes_int16},
      {"expand", infer_expand, strided_copy, kMovesBytes, OutputQuant::kInput, RowLift::kNo, ConstantQuant::kNone,
       nullptr, copy_takes_int16},
      {"upsample_nearest2d", infer_upsample, strided_copy, kImageOp | kMovesBytes, OutputQuant::kInput, RowLift::kNo,
       ConstantQuant::kNone, nullptr, copy_takes_int16},
      {"cat", infer_cat, lower_with<CopyLowering, &CopyLowering::lower_cat>, kLayoutAgnostic, OutputQuant::kObserved,
       RowLift::kDim, ConstantQuant::kOutput},
      {"input_rows", infer_slice, lower_with<CopyLowering, &CopyLowering::lower_input_rows>, kInternal},
  };
}

}  // namespace mcuflow::compiler
