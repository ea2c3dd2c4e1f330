// Lowering: IR ops → kernel ops with prepared parameters and constants (weights transposed,
// quantized, multipliers computed). Everything the device would otherwise compute is done here.
#pragma once
#include "mcuflow/compiler/ir.h"
#include "mcuflow/compiler/lowered.h"

namespace mcuflow::compiler {

// kInt16: int16 activations where an int16 kernel takes the op, int8 elsewhere (quantizer.h
// assign_quantization); lowering reads each tensor's width from its spec.
enum class Precision { kInt8, kInt16, kFloat32 };

// "int8", "int16", "fp32": the names the options and the program's metadata use.
const char* precision_name(Precision p);

struct LowerOptions {
  Precision precision = Precision::kInt8;
  bool int8_io = false;  // int8 programs: keep inputs/outputs int8 (no quantize/dequantize ops)
  bool allow_fallback = true;  // quantized programs: ops without a usable quantized kernel run in float32
  int weight_bits = 8;         // 4: int4 weights were asked for (quantizer.h); ops note why theirs stay int8
  // Per-layer choices (CompileOptions::layers): layer -> the note its ops' metadata carry
  // ("A16W8: why"); the program's precision is then "mixed".
  std::map<std::string, std::string> layer_notes;
};

// "A16W8", "A8W8", "A8W4": a layer's activation and weight widths, as notes and tools name them.
std::string layer_precision_name(int activation_bits, int weight_bits);

// Quantized lowering needs every activation's Quant assigned (quantizer.h).
LoweredProgram lower(const Graph& g, const LowerOptions& options);

// After lowering (fuse_permutes.cpp): a permute read only by another permute, directly or
// through a view, is folded into it (one gather instead of two).
void fuse_permutes(LoweredProgram& p);

// Memory order of a tensor's logical dims for a layout (e.g. NHWC: 0, 2, 3, 1).
std::vector<int> physical_order(format::Layout layout, size_t rank);

}  // namespace mcuflow::compiler
