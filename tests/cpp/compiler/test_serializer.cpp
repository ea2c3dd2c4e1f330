// Serializer (compiler/src/serializer.cpp): the .mfp bytes of a planned LoweredProgram, read
// back field by field against runtime/include/mcuflow/runtime/format.h, with the CRC checked
// by mcuflow::crc32 and by an independent bitwise CRC-32.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "../test_programs.h"
#include "mcuflow/compiler/lower.h"
#include "mcuflow/compiler/passes.h"
#include "mcuflow/compiler/planner.h"
#include "mcuflow/compiler/quantizer.h"
#include "mcuflow/compiler/serializer.h"

namespace mcuflow::compiler {
namespace {

using format::Header;
using format::OpRecord;
using format::TensorRecord;

// CRC-32/ISO-HDLC, bit by bit: shares nothing with runtime/src/crc32.cpp.
uint32_t crc32_bitwise(const uint8_t* data, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

TEST(Serializer, Crc32CheckValues) {
  const char* check = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t*>(check), 9), 0xCBF43926u);
  EXPECT_EQ(crc32_bitwise(reinterpret_cast<const uint8_t*>(check), 9), 0xCBF43926u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
  tp::Rng rng(1);
  for (int len : {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 255, 1000, 4096}) {
    std::vector<uint8_t> v(static_cast<size_t>(len));
    for (auto& b : v) b = uint8_t(rng.uniform_int(0, 255));
    EXPECT_EQ(crc32(v.data(), uint32_t(len)), crc32_bitwise(v.data(), v.size())) << len;
    // words from an odd address, then a tail of every length
    EXPECT_EQ(crc32(v.data() + 1, uint32_t(len - 1)), crc32_bitwise(v.data() + 1, v.size() - 1)) << len;
  }
}

// A planned program from the mixed model (most kernels), int8 or fp32.
LoweredProgram planned(bool int8) {
  Graph g = tp::mixed_graph();
  run_graph_passes(g);
  if (int8) {
    calibrate(g, tp::random_calibration(g, 8, 1));
    assign_quantization(g);
  }
  LoweredProgram p = lower(g, LowerOptions{int8 ? Precision::kInt8 : Precision::kFloat32, false});
  p.target = "cortex-m55";
  p.tier = "mve";
  plan_memory(p);
  return p;
}

// The two checksums split the file at the constants (format.h), each by the bitwise CRC: the
// structure's covers the header from byte 16 (the data's checksum included) and every record and
// param, which all end before the constants; the data's covers the rest.
void expect_checksums(const std::vector<uint8_t>& bytes) {
  Header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  ASSERT_LE(h.constants_offset, bytes.size());
  EXPECT_LE(h.params_offset + h.params_bytes, h.constants_offset);
  EXPECT_LE(h.tensors_offset, h.ops_offset);
  EXPECT_LE(h.ops_offset, h.io_offset);
  EXPECT_LE(h.io_offset, h.params_offset);
  EXPECT_EQ(h.structure_crc32, crc32_bitwise(bytes.data() + 16, h.constants_offset - 16));
  EXPECT_EQ(h.data_crc32, crc32_bitwise(bytes.data() + h.constants_offset, bytes.size() - h.constants_offset));
}

void check_bytes_describe(const LoweredProgram& p, const std::vector<uint8_t>& bytes) {
  ASSERT_GE(bytes.size(), sizeof(Header));
  Header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  EXPECT_EQ(std::memcmp(bytes.data(), "MFP1", 4), 0);
  EXPECT_EQ(h.version, format::kVersion);
  EXPECT_EQ(h.header_bytes, sizeof(Header));
  EXPECT_EQ(h.file_bytes, bytes.size());
  EXPECT_EQ(bytes.size() % 4, 0u);
  expect_checksums(bytes);
  EXPECT_EQ(h.flags, p.flags);
  EXPECT_EQ(h.arena_bytes, p.arena_bytes);
  EXPECT_EQ(h.arena_lower_bound, p.arena_lower_bound);
  ASSERT_EQ(h.tensor_count, p.tensors.size());
  ASSERT_EQ(h.op_count, p.ops.size());
  ASSERT_EQ(h.input_count, p.inputs.size());
  ASSERT_EQ(h.output_count, p.outputs.size());

  // Sections: aligned, inside the file, in order, not overlapping.
  EXPECT_EQ(h.tensors_offset, sizeof(Header));
  EXPECT_EQ(h.tensors_offset % 4, 0u);
  EXPECT_EQ(h.ops_offset, h.tensors_offset + h.tensor_count * sizeof(TensorRecord));
  EXPECT_EQ(h.io_offset, h.ops_offset + h.op_count * sizeof(OpRecord));
  EXPECT_GE(h.params_offset, h.io_offset + 2u * (h.input_count + h.output_count));
  EXPECT_EQ(h.params_offset % 4, 0u);
  EXPECT_GE(h.constants_offset, h.params_offset + h.params_bytes);
  EXPECT_EQ(h.constants_offset % format::kConstantAlign, 0u);
  EXPECT_GE(h.metadata_offset, h.constants_offset + h.constants_bytes);
  EXPECT_LE(h.metadata_offset + h.metadata_bytes, h.file_bytes);
  EXPECT_LT(h.file_bytes - (h.metadata_offset + h.metadata_bytes), 4u) << "only alignment padding after the metadata";

  const uint8_t* base = bytes.data();
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const ProgramTensor& t = p.tensors[i];
    TensorRecord r;
    std::memcpy(&r, base + h.tensors_offset + i * sizeof(TensorRecord), sizeof(r));
    EXPECT_EQ(r.dtype, t.dtype) << t.name;
    EXPECT_EQ(r.rank, t.dims.size()) << t.name;
    EXPECT_EQ(r.storage, t.constant ? format::Storage::kConstant : format::Storage::kArena) << t.name;
    EXPECT_EQ(r.layout, t.layout) << t.name;
    for (size_t d = 0; d < 4; ++d) EXPECT_EQ(r.dims[d], d < t.dims.size() ? t.dims[d] : 1) << t.name;
    EXPECT_EQ(r.bytes, t.byte_size()) << t.name;
    EXPECT_EQ(r.scale, t.scale) << t.name;
    EXPECT_EQ(r.zero_point, t.zero_point) << t.name;
    if (t.constant) {
      EXPECT_EQ(r.offset % format::kConstantAlign, 0u) << t.name;
      ASSERT_LE(r.offset + r.bytes, h.constants_bytes) << t.name;
      EXPECT_EQ(std::memcmp(base + h.constants_offset + r.offset, t.bytes.data(), t.bytes.size()), 0) << t.name;
    } else {
      EXPECT_EQ(r.offset, t.offset) << t.name;
    }
  }
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const ProgramOp& op = p.ops[i];
    OpRecord r;
    std::memcpy(&r, base + h.ops_offset + i * sizeof(OpRecord), sizeof(r));
    EXPECT_EQ(r.kernel, uint16_t(op.kernel));
    ASSERT_EQ(r.input_count, op.inputs.size());
    ASSERT_EQ(r.output_count, op.outputs.size());
    for (size_t k = 0; k < op.inputs.size(); ++k) EXPECT_EQ(r.tensors[k], op.inputs[k]);
    for (size_t k = 0; k < op.outputs.size(); ++k) EXPECT_EQ(r.tensors[op.inputs.size() + k], op.outputs[k]);
    EXPECT_EQ(r.params_offset % 4, 0u);
    ASSERT_EQ(r.params_bytes, op.params.size());
    ASSERT_LE(r.params_offset + r.params_bytes, h.params_bytes);
    EXPECT_EQ(std::memcmp(base + h.params_offset + r.params_offset, op.params.data(), op.params.size()), 0);
  }
  for (size_t i = 0; i < p.inputs.size() + p.outputs.size(); ++i) {
    uint16_t v;
    std::memcpy(&v, base + h.io_offset + 2 * i, 2);
    EXPECT_EQ(v, i < p.inputs.size() ? p.inputs[i] : p.outputs[i - p.inputs.size()]);
  }
  const std::string meta(reinterpret_cast<const char*>(base + h.metadata_offset), h.metadata_bytes);
  EXPECT_EQ(meta, metadata_json(p));
}

TEST(Serializer, BytesDescribeTheProgram) {
  for (bool int8 : {true, false}) {
    SCOPED_TRACE(int8 ? "int8" : "fp32");
    const LoweredProgram p = planned(int8);
    const std::vector<uint8_t> bytes = serialize(p);
    check_bytes_describe(p, bytes);
    tp::Runner r(bytes);
    EXPECT_EQ(r.error(), Error::kOk);
    EXPECT_EQ(r.program().arena_bytes(), p.arena_bytes);
    EXPECT_EQ(r.program().arena_lower_bound(), p.arena_lower_bound);
    EXPECT_EQ(r.program().flags() & format::kFlagFloatPrecision, int8 ? 0u : uint32_t(format::kFlagFloatPrecision));
  }
}

TEST(Serializer, CompiledProgramsStartWithMagicAndCarryTheirCrc) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const Graph g = tp::random_graph(seed);
    for (const auto& bytes : {tp::compile_int8(g, seed, 4), tp::compile_fp32(g)}) {
      ASSERT_GE(bytes.size(), sizeof(Header));
      EXPECT_EQ(std::memcmp(bytes.data(), format::kMagic, 4), 0);
      Header h;
      std::memcpy(&h, bytes.data(), sizeof(h));
      EXPECT_EQ(h.file_bytes, bytes.size());
      expect_checksums(bytes);
    }
  }
}

TEST(Serializer, MetadataJson) {
  LoweredProgram p = planned(true);
  p.source = {{"model", "net \"v2\".pt"}, {"model_sha256", "abc"}};
  p.ops[0].reason = "line1\nline2\t\x01";
  const std::string meta = metadata_json(p);
  EXPECT_EQ(meta.rfind("{\"target\":\"cortex-m55\",\"tier\":\"mve\",\"precision\":\"int8\"", 0), 0u) << meta.substr(0, 80);
  EXPECT_NE(meta.find("\"source\":{\"model\":\"net \\\"v2\\\".pt\",\"model_sha256\":\"abc\"}"), std::string::npos);
  EXPECT_NE(meta.find("line1\\u000aline2\\u0009\\u0001"), std::string::npos) << "control characters are escaped";
  EXPECT_EQ(meta.find('\n'), std::string::npos);
  EXPECT_EQ(meta.back(), '}');
  // Balanced brackets outside strings: a cheap well-formedness check.
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < meta.size(); ++i) {
    const char c = meta[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ASSERT_GE(depth, 0) << i;
  }
  EXPECT_EQ(depth, 0);
  EXPECT_FALSE(in_string);
  for (const ProgramTensor& t : p.tensors) EXPECT_NE(meta.find("\"name\":\"" + t.name + "\""), std::string::npos) << t.name;
}

TEST(Serializer, Limits) {
  LoweredProgram p = planned(false);
  ProgramOp wide = p.ops[0];
  wide.inputs.assign(8, wide.inputs[0]);  // 8 inputs + 1 output > kMaxOpTensors
  LoweredProgram q = p;
  q.ops.push_back(wide);
  EXPECT_THROW(serialize(q), CompileError);
  LoweredProgram many = p;
  many.tensors.resize(0x10000, p.tensors[0]);
  EXPECT_THROW(serialize(many), CompileError);
  // The largest allowed counts still serialize.
  LoweredProgram max = p;
  max.tensors.resize(0xFFFF, p.tensors[0]);
  EXPECT_NO_THROW(serialize(max));
}

}  // namespace
}  // namespace mcuflow::compiler
