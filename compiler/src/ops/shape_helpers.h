// Checks and arithmetic the op families' shape rules share.
#pragma once
#include <string>
#include <vector>

#include "mcuflow/compiler/ir.h"

namespace mcuflow::compiler {

[[noreturn]] void fail(const Op& op, const std::string& why);  // CompileError "<kind> at <source>: why"

const Shape& in_shape(const Graph& g, const Op& op, size_t i);  // input i's shape; fails when missing

// `dim` of a rank-`rank` tensor, negative values counted from the end; fails when out of range.
int64_t normalize_dim(const Op& op, int64_t dim, size_t rank);

// An H/W pair attribute: one value stands for both.
std::vector<int64_t> pair_attr(const Op& op, const std::string& name);

// Output size of a sliding window along one dim, as PyTorch computes it.
int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t pad_end, int64_t dil, bool ceil_mode);

// Bottom/right padding: "padding_end" when a folded pad made it differ from "padding".
std::vector<int64_t> end_padding(const Op& op, const std::vector<int64_t>& pad);

// The shape `a` and `b` broadcast to (NumPy rules); fails when they do not broadcast.
Shape broadcast_shapes(const Op& op, Shape a, Shape b);

Shape same_as_input(const Graph& g, const Op& op);

}  // namespace mcuflow::compiler
