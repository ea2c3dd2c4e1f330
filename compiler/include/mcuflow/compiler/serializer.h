// Writes a planned LoweredProgram as .mfp bytes (runtime/include/mcuflow/runtime/format.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mcuflow/compiler/lowered.h"

namespace mcuflow::compiler {

std::vector<uint8_t> serialize(const LoweredProgram& p);

// The metadata JSON stored in the program (names, logical shapes, sources, kernel reasons).
std::string metadata_json(const LoweredProgram& p);

// `s` as a quoted JSON string.
std::string json_string(const std::string& s);

}  // namespace mcuflow::compiler
