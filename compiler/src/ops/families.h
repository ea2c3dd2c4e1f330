// The op families; op_registry() lists their kinds in this order.
#pragma once
#include <vector>

#include "mcuflow/compiler/op_registry.h"

namespace mcuflow::compiler {

std::vector<OpDef> conv_ops();        // conv.cpp: conv2d, conv_transpose2d
std::vector<OpDef> matmul_ops();      // matmul.cpp: linear, matmul
std::vector<OpDef> norm_ops();        // norm.cpp: batch_norm, layer_norm, group_norm
std::vector<OpDef> clamp_ops();       // clamp.cpp: relu, clamp
std::vector<OpDef> binary_ops();      // binary.cpp: add, sub, mul, minimum, maximum
std::vector<OpDef> activation_ops();  // activation.cpp: sigmoid, tanh, ..., prelu
std::vector<OpDef> pool_ops();        // pool.cpp: max_pool2d, avg_pool2d, adaptive_avg_pool2d
std::vector<OpDef> reduce_ops();      // reduce.cpp: mean, sum, amax, argmax
std::vector<OpDef> softmax_ops();     // softmax.cpp: softmax
std::vector<OpDef> view_ops();        // view.cpp: reshape, permute, identity
std::vector<OpDef> copy_ops();        // copy.cpp: pad, slice, expand, upsample_nearest2d, cat, input_rows
std::vector<OpDef> resize_ops();      // resize.cpp: upsample_bilinear2d
std::vector<OpDef> mask_ops();        // mask.cpp: eq, ne, lt, le, gt, ge, where, embedding, mask_to_number
std::vector<OpDef> convert_ops();     // convert.cpp: requantize

// mask.cpp: true for a where whose two values, or a cat whose inputs, are all masks (its output is one).
bool picks_masks(const Graph& g, const Op& op);

}  // namespace mcuflow::compiler
