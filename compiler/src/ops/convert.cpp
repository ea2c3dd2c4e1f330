// requantize: the quantizer's conversion of an activation to another width where an int8 and an
// int16 tensor meet in an int16 program (quantizer.h assign_quantization).
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

struct ConvertLowering : Lowering {
  using Lowering::Lowering;

  void lower_requantize(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    if (!is_quantized()) fail(op, "internal: a requantization in a float program");
    const int out = requantized(op, activation(op.inputs[0]), spec_of(x), spec_of(y));
    p_.tensors[out].name = y.name;
    p_.tensors[out].ir_tensor = op.outputs[0];
    program_of_[op.outputs[0]] = out;
  }
};

}  // namespace

std::vector<OpDef> convert_ops() {
  return {{"requantize", same_as_input, lower_with<ConvertLowering, &ConvertLowering::lower_requantize>,
           kInternal | kLayoutAgnostic}};
}

}  // namespace mcuflow::compiler
