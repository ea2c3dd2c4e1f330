// The .mfp program file: byte layout shared by the compiler's serializer and the runtime's
// verifier. Little-endian, read in place. docs/program_format.md describes it in prose.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/params.h"

namespace mcuflow::format {

constexpr uint8_t kMagic[4] = {'M', 'F', 'P', '1'};
constexpr uint16_t kVersion = 5;  // 2: memory regions, constants copied to RAM; 3: rank-6 tensors; 4: ConvParams.groups,
                                  // OutputStage; 5: two checksums, the structure's and the data's
constexpr uint32_t kConstantAlign = 16;
constexpr uint32_t kArenaAlign = 16;
constexpr uint32_t kMaxOpTensors = 8;
constexpr uint32_t kMaxRank = kernels::kMaxRank;  // dims of a tensor record
constexpr int32_t kMaxDim = kernels::kMaxDim;     // largest size of one dim (and of kernel extents)
constexpr uint32_t kMaxRegions = 4;  // memory regions an arena may be split into
// Two CRC-32s split the file: structure_crc32 covers bytes [16, constants_offset) (the header
// from byte 16 on, data_crc32 included, and every record and param the verifier reads; they all
// end before the constants), data_crc32 covers [constants_offset, file_bytes) (weights, tables,
// metadata). Program::load at Verify::kStructure checks the first only (docs/program_format.md).
constexpr uint32_t kChecksumStart = 16;

struct Header {
  uint8_t magic[4];
  uint16_t version;
  uint16_t header_bytes;
  uint32_t file_bytes;
  uint32_t structure_crc32;  // CRC-32 of bytes [kChecksumStart, constants_offset)
  uint32_t flags;            // Flags below
  uint16_t tensor_count;
  uint16_t op_count;
  uint16_t input_count;
  uint16_t output_count;
  uint32_t tensors_offset;   // TensorRecord[tensor_count]
  uint32_t ops_offset;       // OpRecord[op_count]
  uint32_t io_offset;        // uint16_t inputs[input_count], uint16_t outputs[output_count]
  uint32_t params_offset;    // op parameter structs, 4-byte aligned each
  uint32_t params_bytes;
  uint32_t constants_offset; // weights and tables, 16-byte aligned
  uint32_t constants_bytes;
  uint32_t metadata_offset;  // UTF-8 JSON for tools (names, shapes, reasons); never read on device
  uint32_t metadata_bytes;
  uint32_t arena_bytes;      // planned size of region 0, the default arena
  uint32_t arena_lower_bound;// largest total of tensors live at one step (all regions)
  uint32_t region_count;     // memory regions the arena is split into, fastest first (1 … kMaxRegions)
  uint32_t region_bytes[kMaxRegions - 1];  // planned sizes of regions 1, 2, 3 (0 when unused)
  uint32_t data_crc32;       // CRC-32 of bytes [constants_offset, file_bytes)
};
static_assert(sizeof(Header) == 92, "header layout");

enum Flags : uint32_t {
  kFlagFloatPrecision = 1u << 0,  // compiled with --precision fp32
  kFlagInt8Io = 1u << 1,          // inputs/outputs are int8 (no quantize/dequantize inside)
};

// Element types. kInt16 and kInt4 (packed: two elements a byte, the first in the low nibble)
// are valid tensor records for wider and narrower quantized tensors; a kernel's check decides
// which types it reads. kInt64: the biases of int16 kernels.
enum class DType : uint8_t { kInt8 = 1, kInt32 = 2, kFloat32 = 3, kInt16 = 4, kInt4 = 5, kInt64 = 6 };
// kCopiedConstant: a constant that Session::bind copies from the program into RAM region
// `region` at `copy_offset`; kernels read the copy (weights moved to fast memory).
// kStreamed: a program input that never exists whole in the program's memory: read_input_rows
// ops fetch its row bands from the application (Session::run's InputReader) as they are needed.
// kState: a tensor kept between runs (a module buffer updated in forward): it lives in `region` at
// `copy_offset`, which no other tensor's writes share; `offset` locates its initial value in the
// constants section, copied there by Session::bind and reset_state.
enum class Storage : uint8_t { kArena = 0, kConstant = 1, kCopiedConstant = 2, kStreamed = 3, kState = 4 };

// Params of read_input_rows (an op, not a kernel: Session::run copies the bytes through its
// InputReader): `bytes` bytes from byte `offset` of program input `input`, a kStreamed tensor.
struct InputRowsParams {
  uint32_t input;
  uint32_t offset;
  uint32_t bytes;
};
// How the physical dims relate to PyTorch's logical shape (tools convert I/O with it).
enum class Layout : uint8_t {
  kPlain = 0,     // physical order == logical order
  kNhwc = 1,      // logical [N, C, H, W] stored as [N, H, W, C]; at rank 3, [N, C, L] as [N, L, C]
  kFlatNhwc = 2,  // logical [N, C*H*W] holding the bytes of an NHWC tensor (internal only)
};

struct TensorRecord {
  DType dtype;
  uint8_t rank;
  Storage storage;
  Layout layout;
  int32_t dims[kMaxRank];    // physical (memory) order, unused dims are 1
  uint32_t offset;           // into its arena region or the constants section
  uint32_t bytes;
  float scale;               // per-tensor quantization of int8 activations (0 if none)
  int32_t zero_point;
  uint8_t region;            // arena tensors, copied constants, states: the memory region holding them
  uint8_t reserved[3];
  uint32_t copy_offset;      // copied constants and states: where in `region` the RAM bytes live
};
static_assert(sizeof(TensorRecord) == 52, "tensor record layout");

struct OpRecord {
  uint16_t kernel;           // KernelId
  uint8_t input_count;
  uint8_t output_count;
  uint16_t tensors[kMaxOpTensors];  // inputs, then outputs
  uint32_t params_offset;    // relative to the params section
  uint32_t params_bytes;
};
static_assert(sizeof(OpRecord) == 28, "op record layout");

// Bits of one element; 0 for a value that is no DType.
constexpr uint32_t dtype_bits(DType t) {
  switch (t) {
    case DType::kInt4: return 4;
    case DType::kInt8: return 8;
    case DType::kInt16: return 16;
    case DType::kInt32:
    case DType::kFloat32: return 32;
    case DType::kInt64: return 64;
  }
  return 0;
}

// Bytes that `count` elements occupy: ceil(bits * count / 8) (packed int4: an odd count leaves
// the last byte's high nibble 0).
constexpr uint64_t storage_bytes(DType t, uint64_t count) { return (uint64_t(dtype_bits(t)) * count + 7) / 8; }

// Bytes of one element of a byte-addressable type, which is also its alignment (packed int4:
// 1, the byte holding two elements).
constexpr uint32_t element_bytes(DType t) { return dtype_bits(t) < 8 ? 1u : dtype_bits(t) / 8; }

// Quantized integer types: signed, with a scale and a zero point in their own range.
constexpr bool quantized_dtype(DType t) { return t == DType::kInt4 || t == DType::kInt8 || t == DType::kInt16; }
// The range of a quantized integer type (32- and 64-bit types: int32's).
constexpr int32_t dtype_min(DType t) { return dtype_bits(t) >= 32 ? INT32_MIN : -(int32_t(1) << (dtype_bits(t) - 1)); }
constexpr int32_t dtype_max(DType t) { return dtype_bits(t) >= 32 ? INT32_MAX : (int32_t(1) << (dtype_bits(t) - 1)) - 1; }

// A record's zero point: within its quantized type's range, 0 for int32 and float32 tensors.
constexpr bool zero_point_valid(DType t, int32_t zero_point) {
  return quantized_dtype(t) ? zero_point >= dtype_min(t) && zero_point <= dtype_max(t) : zero_point == 0;
}

}  // namespace mcuflow::format
