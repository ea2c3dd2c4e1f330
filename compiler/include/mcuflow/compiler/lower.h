// Lowering: IR ops → kernel ops with prepared parameters and constants (weights transposed,
// quantized, multipliers computed). Everything the device would otherwise compute is done here.
#pragma once
#include "mcuflow/compiler/ir.h"
#include "mcuflow/compiler/lowered.h"

namespace mcuflow::compiler {

enum class Precision { kInt8, kFloat32 };

struct LowerOptions {
  Precision precision = Precision::kInt8;
  bool int8_io = false;  // int8 programs: keep inputs/outputs int8 (no quantize/dequantize ops)
  bool allow_fallback = true;  // int8 programs: ops without a usable int8 kernel run in float32
};

// int8 lowering needs every activation's Quant assigned (quantizer.h).
LoweredProgram lower(const Graph& g, const LowerOptions& options);

// Memory order of a tensor's logical dims for a layout (e.g. NHWC: 0, 2, 3, 1).
std::vector<int> physical_order(format::Layout layout, size_t rank);

}  // namespace mcuflow::compiler
