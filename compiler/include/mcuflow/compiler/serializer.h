// Writes a planned LoweredProgram as .mfp bytes (runtime/include/mcuflow/runtime/format.h).
#pragma once
#include <cstdint>
#include <vector>

#include "mcuflow/compiler/lowered.h"

namespace mcuflow::compiler {

std::vector<uint8_t> serialize(const LoweredProgram& p);

// The metadata JSON stored in the program (names, logical shapes, sources, kernel reasons).
std::string metadata_json(const LoweredProgram& p);

}  // namespace mcuflow::compiler
