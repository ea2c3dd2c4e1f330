// Reductions: mean, sum, amax over "dims" (a mean over H and W of an image is a global
// average pool), and argmax (int32 indices, as a model output only).
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

// Over "dims" (all dims when empty), keepdim or not.
Shape infer_reduce(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  std::vector<bool> reduced(x.size(), op.ints_attr("dims").empty());
  for (int64_t d : op.ints_attr("dims")) reduced[normalize_dim(op, d, x.size())] = true;
  const bool keep = op.int_attr("keepdim") != 0;
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d]) out.push_back(x[d]);
    else if (keep) out.push_back(1);
  }
  return out;
}

Shape infer_argmax(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  if (op.int_attr("keepdim") != 0) out[dim] = 1;
  else out.erase(out.begin() + dim);
  return out;
}

struct ReduceLowering : Lowering {
  using Lowering::Lowering;

  // A mean over H and W of an image tensor is a global average pool.
  bool is_spatial_mean(const Op& op) const {
    if (op.kind != "mean" || tensor(op.inputs[0]).shape.size() != 4) return false;
    std::vector<int64_t> dims = op.ints_attr("dims");
    for (int64_t& d : dims) d = d < 0 ? d + 4 : d;
    std::sort(dims.begin(), dims.end());
    return dims == std::vector<int64_t>{2, 3};
  }

  // The dims of `x` reduced by `op` ("dims" for mean/sum/amax, "dim" for argmax).
  static std::vector<bool> reduced_dims(const Op& op, const Tensor& x) {
    const int64_t rank = int64_t(x.shape.size());
    std::vector<int64_t> dims = op.kind == "argmax" ? std::vector<int64_t>{op.int_attr("dim")} : op.ints_attr("dims");
    std::vector<bool> reduced(x.shape.size(), dims.empty());
    for (int64_t d : dims) reduced[size_t(d < 0 ? d + rank : d)] = true;
    return reduced;
  }

  // Reductions run on [outer][reduce][inner] in x's physical order when the reduced dims are
  // adjacent there, otherwise after a permutation that moves them last.
  struct ReduceLayout {
    int in;                   // program tensor read by the kernel
    std::vector<int> order;   // x's logical dims in that tensor's order
    int32_t outer = 1, reduce = 1, inner = 1;
  };

  ReduceLayout reduce_layout(const Op& op, const std::vector<bool>& reduced) {
    const Tensor& x = tensor(op.inputs[0]);
    ReduceLayout r;
    r.order = physical_order(layout_of(x), x.shape.size());
    size_t first = r.order.size(), last = 0, count = 0;
    for (size_t k = 0; k < r.order.size(); ++k) {
      if (!reduced[size_t(r.order[k])]) continue;
      first = std::min(first, k);
      last = k;
      ++count;
    }
    if (count > 0 && last - first + 1 != count) {
      std::stable_partition(r.order.begin(), r.order.end(), [&](int d) { return !reduced[size_t(d)]; });
      first = r.order.size() - count;
    }
    r.in = reordered(op, op.inputs[0], r.order);
    for (size_t k = 0; k < r.order.size(); ++k) {
      const int32_t n = int32_t(x.shape[size_t(r.order[k])]);
      if (reduced[size_t(r.order[k])]) r.reduce *= n;
      else if (k < first) r.outer *= n;
      else r.inner *= n;
    }
    return r;
  }

  // y's logical dims in the kernel's output order: x's order without the reduced dims (with
  // them, as size-1 dims, when y keeps them).
  static std::vector<int> reduced_output_order(const std::vector<int>& x_order, const std::vector<bool>& reduced,
                                               bool keepdim) {
    std::vector<int> order;
    for (int d : x_order) {
      if (keepdim) {
        order.push_back(d);
      } else if (!reduced[size_t(d)]) {
        order.push_back(d - int(std::count(reduced.begin(), reduced.begin() + d, true)));
      }
    }
    return order;
  }

  void lower_reduce(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const std::vector<bool> reduced = reduced_dims(op, x);
    const ReduceLayout r = reduce_layout(op, reduced);
    const k::ReduceParams p = reduce_params(
        x, y, r.outer, r.reduce, r.inner,
        op.kind == "sum" ? k::kReduceSum : op.kind == "mean" ? k::kReduceMean : k::kReduceMax);
    const std::vector<int> order = reduced_output_order(r.order, reduced, op.int_attr("keepdim") != 0);
    const int out = scratch(op.outputs[0], dims_in_order(y.shape, order));
    emit(is_quantized() ? KernelId::reduce_s8 : KernelId::reduce_f32, {r.in}, {out}, params_bytes(p), &op,
         x.numel());
    define_output(op, op.outputs[0], out, order);
  }

  void lower_argmax(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    if (!g_.is_graph_output(op.outputs[0]) || !g_.consumers(op.outputs[0]).empty())
      fail(op, "argmax is supported as a model output only (its int32 indices feed no other op)");
    const std::vector<bool> reduced = reduced_dims(op, x);
    const ReduceLayout r = reduce_layout(op, reduced);
    const k::ArgmaxParams p{r.outer, r.reduce, r.inner};
    const std::vector<int> order = reduced_output_order(r.order, reduced, op.int_attr("keepdim") != 0);
    const int out = scratch(op.outputs[0], dims_in_order(y.shape, order), /*indices=*/true);
    emit(is_quantized() ? KernelId::argmax_s8 : KernelId::argmax_f32, {r.in}, {out}, params_bytes(p), &op);
    define_output(op, op.outputs[0], out, order);
  }

  void lower_mean(const Op& op) {
    if (is_spatial_mean(op)) return lower_global_pool(op);
    lower_reduce(op);
  }
};

}  // namespace

std::vector<OpDef> reduce_ops() {
  const LowerRule lower_reduce = lower_with<ReduceLowering, &ReduceLowering::lower_reduce>;
  return {
      {"mean", infer_reduce, lower_with<ReduceLowering, &ReduceLowering::lower_mean>, kImageOpOnRank4, OutputQuant::kAverage, RowLift::kDims},
      {"sum", infer_reduce, lower_reduce, 0, OutputQuant::kObserved, RowLift::kDims},
      {"amax", infer_reduce, lower_reduce, 0, OutputQuant::kInput, RowLift::kDims},
      {"argmax", infer_argmax, lower_with<ReduceLowering, &ReduceLowering::lower_argmax>, 0, OutputQuant::kNone},
  };
}

}  // namespace mcuflow::compiler
