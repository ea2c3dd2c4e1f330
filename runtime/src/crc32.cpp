#include <cstring>

#include "mcuflow/runtime/runtime.h"

namespace mcuflow {

namespace {

// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) with a 16-entry nibble table: 64 bytes
// of flash instead of 1 KiB.
const uint32_t kNibble[16] = {0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
                              0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
                              0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};

// The register after one byte (two nibbles) was xored into its low bits.
__attribute__((always_inline)) inline uint32_t two_nibbles(uint32_t crc) {
  crc = (crc >> 4) ^ kNibble[crc & 0xF];
  return (crc >> 4) ^ kNibble[crc & 0xF];
}

}  // namespace

// A word at a time: the reflected CRC takes a little-endian word's bytes in order, so the word
// goes into the register at once and eight nibble steps follow (about 7 instructions a byte on a
// Cortex-M, 10 byte by byte); the last bytes one by one.
uint32_t crc32(const uint8_t* data, uint32_t size) {
  uint32_t crc = 0xFFFFFFFFu, i = 0;
  for (; size - i >= 4; i += 4) {
    uint32_t word;  // little-endian, like every integer the runtime reads in place
    std::memcpy(&word, data + i, 4);
    crc ^= word;
    crc = two_nibbles(two_nibbles(two_nibbles(two_nibbles(crc))));
  }
  for (; i < size; ++i) crc = two_nibbles(crc ^ data[i]);
  return ~crc;
}

// The data's checksum first: the structure's covers the header field that holds it.
void write_checksums(uint8_t* file, uint32_t size) {
  if (size < sizeof(format::Header)) return;
  format::Header h;
  std::memcpy(&h, file, sizeof(h));
  if (h.file_bytes > size || h.constants_offset < format::kChecksumStart || h.constants_offset > h.file_bytes) return;
  h.data_crc32 = crc32(file + h.constants_offset, h.file_bytes - h.constants_offset);
  std::memcpy(file, &h, sizeof(h));
  h.structure_crc32 = crc32(file + format::kChecksumStart, h.constants_offset - format::kChecksumStart);
  std::memcpy(file, &h, sizeof(h));
}

}  // namespace mcuflow
