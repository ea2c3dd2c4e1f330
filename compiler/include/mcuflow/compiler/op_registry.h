// The op registry: per op kind, the one definition the compiler has of it — its shape rule,
// its traits (what the passes and the quantizer ask about it), its lowering and the reason an
// int8 kernel cannot take it. Each op family defines its kinds in compiler/src/ops/<family>.cpp;
// nothing else keeps a list of kinds.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mcuflow/compiler/ir.h"

namespace mcuflow::compiler {

// What the passes ask about an op kind, as bits of OpDef::traits.
enum OpTrait : uint32_t {
  kInternal = 1u << 0,           // made by a compiler pass: not in the front-end vocabulary
  kImageOp = 1u << 1,            // its kernels read and write rank-4 activations NHWC
  kImageOpOnRank4 = 1u << 2,     // an image op when its input has rank 4 (mean: a global average pool)
  kLayoutAgnostic = 1u << 3,     // works in any layout: element-wise, per channel, or along a named dim
  kFusesActivation = 1u << 4,    // a relu/clamp reading its output moves into its output stage
  kMovesBytes = 1u << 5,         // its output is input 0's bytes moved (a view, a copy): reads a mask as a mask
};

// How the quantizer chooses the quantization of the op's output.
enum class OutputQuant {
  kObserved,              // from the calibration range
  kInput,                 // the input's: the op moves or selects values without changing them
  kInputWhenValueFits,    // the input's when the "value" attribute (a pad value) is inside its range
  kAverage,               // an average: the input's, unless it is an int8 average over whole rows or
                          // images whose observed range is at least 4x narrower (2 of its 8 bits
                          // unused): then its own, and the sums are requantized (reduce_s8)
  kSoftmax,               // probabilities: scale 1/256, zero point -128 (int16: 1/32768, zero point 0)
  kWithinOne,             // a function with values in [-1, 1] (sigmoid, tanh, hardsigmoid): int8
                          // from the calibration range; int16 scale 1/32768, zero point 0, so that
                          // no input saturates the output whatever calibration saw
  kMask,                  // a mask (Element::kMask): scale 1, zero point 0
  kUnitRange,             // values in [0, 1] (a mask read as a number): scale 1/255, zero point -128,
                          // so 0 and 1 are exact whatever calibration saw
  kTable,                 // rows of its constant input 1 (an embedding table): that table's spec,
                          // the table quantized per tensor by its values' range
  kNone,                  // not quantized (int32 indices)
};

// How the quantizer gives the op's constant inputs their specs (docs/quantization.md).
enum class ConstantQuant {
  kNone,                   // none is read as integers (or lowering packs it into kernel tables)
  kWeightsPerChannel,      // input 1 symmetric per output channel (dim 0); input 2, the bias, int32
  kWeightsPerChannelDim1,  // the same with the output channels in dim 1 (transposed convolution)
  kWeightsPerTensor,       // input 1 symmetric per tensor; input 2, if any, the bias
  kOperandRange,           // each constant input by its values' range (an element-wise operand)
  kOutput,                 // each constant input in the output's spec (a constant piece of a cat)
};

// How lift_rows moves the op onto (N, C, 1, L) row views.
enum class RowLift {
  kNo,           // it stays on the rank-3 tensors
  kElementwise,  // element-wise: any rank
  kPerChannel,   // per-channel parameters (input 0 is the activation)
  kPad,          // "pad" lists (before, after) pairs from the last dim
  kDim,          // "dim" names a dim
  kDims,         // "dims" names dims
};

class Lowering;  // compiler/src/ops/lowering.h

// The output shape from the inputs and attributes; throws CompileError naming the op for
// attributes the kernels cannot honour and inconsistent shapes.
using ShapeRule = Shape (*)(const Graph& g, const Op& op);
// Emits the op's kernel ops into the program being lowered (int8, or float32 in a float
// program and in an int8 program's float fallback).
using LowerRule = void (*)(Lowering& l, const Op& op);
// The float values of the op's output (of `out_shape` elements, logical order) from its constant
// inputs' values: how fold_constants evaluates the op when every input is constant.
using FoldRule = std::vector<float> (*)(const Graph& g, const Op& op, const Shape& out_shape);
// Why an int8 kernel cannot take this op ("" when it can): the op then runs in float.
using Int8Rejection = std::string (*)(Lowering& l, const Op& op);
// Whether an int16 kernel (or a byte copy that moves int16 values exactly) takes this op: in an
// int16 program its activations are then int16 (quantizer.h assign_quantization).
using Int16Rule = bool (*)(const Graph& g, const Op& op);
// Why no int4-weight kernel takes this op ("" when one does): compiled with weights="int4", its
// weights then stay int8 (quantizer.h assign_quantization; mcuflow inspect shows the reason).
using Int4Rejection = std::string (*)(const Graph& g, const Op& op);

struct OpDef {
  const char* kind;
  ShapeRule shape;
  LowerRule lower;
  uint32_t traits = 0;
  OutputQuant output_quant = OutputQuant::kObserved;
  RowLift row_lift = RowLift::kNo;
  ConstantQuant constant_quant = ConstantQuant::kNone;
  Int8Rejection int8_rejection = nullptr;  // none: an int8 kernel takes every such op
  Int16Rule int16 = nullptr;               // none: only int8 kernels take it
  Int4Rejection int4 = nullptr;            // none: no int4-weight kernel for the kind
  FoldRule fold = nullptr;                 // none: fold_constants keeps the op
};

// An Int16Rule for the kinds whose int16 kernels take every such op.
bool always_int16(const Graph& g, const Op& op);

// OpDef::int4 of the op's kind, or that its kind has no int4-weight kernel.
std::string int4_rejection(const Graph& g, const Op& op);

// Every kind, grouped by family.
const std::vector<OpDef>& op_registry();

// The definition of `kind`, or nullptr.
const OpDef* find_op(const std::string& kind);

// False for kinds the registry does not know.
bool has_trait(const std::string& kind, OpTrait trait);

// The kinds a front end may send (all but kInternal ones), in registry order.
std::vector<std::string> frontend_kinds();

// What the elements of `op`'s outputs are: masks for comparisons, for where and cat picking
// between masks only, the input's for ops that move values without changing them (kInput),
// real values otherwise.
Element output_element(const Graph& g, const Op& op);

// Before `op` joins graph `g`: every mask it reads as a number (mul by a mask, mask.float()
// into a mean, a mask and a real value in one cat) is replaced by the mask's 0.0 / 1.0 values,
// through an internal mask_to_number op appended to `g` (compiler/src/ops/mask.cpp).
void read_masks_as_numbers(Graph& g, Op& op);

// relu and clamp: the bounds the op clamps its input to (relu: [0, +inf)); false for other ops.
bool clamp_bounds(const Op& op, float& lo, float& hi);

}  // namespace mcuflow::compiler
