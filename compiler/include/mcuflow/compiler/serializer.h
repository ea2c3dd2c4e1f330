// Writes a planned LoweredProgram as .mfp bytes (runtime/include/mcuflow/runtime/format.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mcuflow/compiler/lowered.h"

namespace mcuflow::compiler {

std::vector<uint8_t> serialize(const LoweredProgram& p);

// The program as the device stores it: the same bytes without the metadata section (the device
// never reads it), checksum renewed. Throws std::invalid_argument for bytes that do not match
// their checksum.
std::vector<uint8_t> strip_metadata(const std::vector<uint8_t>& program);

// The metadata JSON stored in the program (names, logical shapes, sources, kernel reasons).
std::string metadata_json(const LoweredProgram& p);

// `s` as a quoted JSON string.
std::string json_string(const std::string& s);

}  // namespace mcuflow::compiler
