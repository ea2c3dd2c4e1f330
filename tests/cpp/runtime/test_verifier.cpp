// The program verifier (runtime/src/program.cpp and the per-op checks in runtime/src/ops): a
// valid program loads and runs; truncated, bit-flipped and structurally corrupted programs are
// rejected with the exact error code; nothing that loads can touch memory outside its buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "../test_programs.h"
#include "mcuflow/kernels/kernels_dsp.h"
#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow {
namespace {

using format::DType;
using format::Header;
using format::OpRecord;
using format::Storage;
using format::TensorRecord;
using namespace tp;

// Compiled once per process: the programs every test below starts from.
const std::vector<uint8_t>& tiny_int8() {
  static const std::vector<uint8_t> p = compile_int8(tiny_graph());
  return p;
}
const std::vector<uint8_t>& conv_int8() {
  static const std::vector<uint8_t> p = compile_int8(conv_relu_pool_linear_graph());
  return p;
}
const std::vector<uint8_t>& mixed_int8() {
  static const std::vector<uint8_t> p = compile_int8(mixed_graph());
  return p;
}
const std::vector<uint8_t>& mixed_fp32() {
  static const std::vector<uint8_t> p = compile_fp32(mixed_graph());
  return p;
}

// A corruption applied to a copy of `base`, optionally followed by a CRC fix-up, then loaded.
template <typename F>
Error corrupt_and_load(const std::vector<uint8_t>& base, F&& corrupt, bool fix = true,
                       KernelTable kernels = all_kernels()) {
  AlignedBytes copy(base);
  corrupt(copy.data());
  if (fix) fix_crc(copy);
  return Program::load(copy.cspan(), kernels).error();
}

int first_arena_tensor(uint8_t* f, DType dtype) {
  for (uint32_t i = 0; i < header(f).tensor_count; ++i) {
    if (tensor_record(f, i).storage == Storage::kArena && tensor_record(f, i).dtype == dtype) return int(i);
  }
  return -1;
}
int first_constant_tensor(uint8_t* f) {
  for (uint32_t i = 0; i < header(f).tensor_count; ++i) {
    if (tensor_record(f, i).storage == Storage::kConstant) return int(i);
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Valid programs

TEST(Verifier, ValidProgramsLoadAndRun) {
  static const std::vector<uint8_t> extended_int8 = compile_int8(extended_graph(), 1, 8);
  static const std::vector<uint8_t> extended_fp32 = compile_fp32(extended_graph());
  for (const auto* bytes : {&tiny_int8(), &conv_int8(), &mixed_int8(), &mixed_fp32(), &extended_int8, &extended_fp32}) {
    Runner r(*bytes);
    ASSERT_TRUE(r.ok()) << error_name(r.error());
    Rng rng(3);
    for (uint32_t i = 0; i < r.program().input_count(); ++i) {
      r.set_input(i, rng.floats(r.program().input(i).bytes / 4, -1, 1));
    }
    ASSERT_EQ(r.run(), Error::kOk);
    EXPECT_TRUE(r.arena().guards_intact());
    for (uint32_t o = 0; o < r.program().output_count(); ++o) {
      if (r.program().output(o).dtype != DType::kFloat32) continue;  // argmax indices
      for (float v : r.output(o)) EXPECT_TRUE(std::isfinite(v));
    }
    // One op at a time gives the same as run() (inputs set again: the planner reuses their bytes).
    const std::vector<float> whole = r.output(0);
    Rng again(3);
    for (uint32_t i = 0; i < r.program().input_count(); ++i) {
      r.set_input(i, again.floats(r.program().input(i).bytes / 4, -1, 1));
    }
    for (uint32_t i = 0; i < r.program().op_count(); ++i) ASSERT_EQ(r.session().run_op(i), Error::kOk);
    EXPECT_EQ(r.output(0), whole);
  }
}

TEST(Verifier, MixedProgramSoftmaxOutputIsADistribution) {
  Runner r(mixed_int8());
  ASSERT_TRUE(r.ok());
  r.set_input(0, Rng(5).floats(4 * 6 * 6, -1, 1));
  ASSERT_EQ(r.run(), Error::kOk);
  const auto probs = r.output(0);
  ASSERT_EQ(probs.size(), 10u);
  double sum = 0;
  for (float p : probs) {
    EXPECT_GE(p, 0.0f);
    EXPECT_LE(p, 1.0f);
    sum += p;
  }
  EXPECT_NEAR(sum, 1.0, 10.0 / 256.0);
}

TEST(Verifier, LoadRejectsNullAndMisalignedSpans) {
  EXPECT_EQ(Program::load(Span<const uint8_t>{nullptr, 1000}, all_kernels()).error(), Error::kTruncated);
  const auto& bytes = tiny_int8();
  AlignedBytes shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  EXPECT_EQ(Program::load(Span<const uint8_t>{shifted.data() + 1, uint32_t(bytes.size())}, all_kernels()).error(),
            Error::kBadArgument);
  // A longer span than the file is fine: the header states the file size.
  AlignedBytes longer(bytes.size() + 64);
  std::memcpy(longer.data(), bytes.data(), bytes.size());
  EXPECT_EQ(Program::load(longer.cspan(), all_kernels()).error(), Error::kOk);
}

// ---------------------------------------------------------------------------------------------
// Truncation: every prefix of the file is rejected. Shorter than the header: the loader cannot
// even read the header (kTruncated before the magic); from the header on, verify_header sees
// file_bytes > span and says kTruncated too (the header itself is never "bad" when merely cut).

TEST(Verifier, EveryTruncationIsRejectedAsTruncated) {
  for (const auto* bytes : {&tiny_int8(), &conv_int8()}) {
    for (size_t len = 0; len < bytes->size(); ++len) {
      AlignedBytes cut(bytes->data(), len);  // exactly `len` bytes: ASan catches reads beyond
      const Error e = Program::load(cut.cspan(), all_kernels()).error();
      ASSERT_EQ(e, Error::kTruncated) << "length " << len << " of " << bytes->size() << ": " << error_name(e);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Single-byte flips: every one is rejected (CRC32 detects every burst up to 32 bits); the ones in
// the magic/version/header-size fields are caught earlier, with their own codes.

TEST(Verifier, EverySingleByteFlipIsRejected) {
  const auto& bytes = tiny_int8();
  const uint8_t masks[] = {0x01, 0x02, 0x10, 0x80, 0xFF, 0x5A};
  const std::set<Error> header_field_errors = {Error::kTruncated, Error::kBadHeader, Error::kBadSection,
                                               Error::kBadChecksum};
  size_t flips = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t mask : masks) {
      AlignedBytes copy(bytes);
      copy.data()[i] ^= mask;
      const Error e = Program::load(copy.cspan(), all_kernels()).error();
      ++flips;
      ASSERT_NE(e, Error::kOk) << "byte " << i << " ^ " << int(mask);
      if (i < 4) {
        EXPECT_EQ(e, Error::kBadMagic) << i;
      } else if (i < 6) {
        EXPECT_EQ(e, Error::kBadVersion) << i;
      } else if (i < 8) {
        EXPECT_EQ(e, Error::kBadHeader) << i;
      } else if (i >= 12 && i < 16) {
        EXPECT_EQ(e, Error::kBadChecksum) << i;
      } else if (i >= sizeof(Header)) {
        EXPECT_EQ(e, Error::kBadChecksum) << "byte " << i << " ^ " << int(mask) << ": " << error_name(e);
      } else {
        EXPECT_TRUE(header_field_errors.count(e)) << "byte " << i << ": " << error_name(e);
      }
    }
  }
  EXPECT_EQ(flips, bytes.size() * sizeof(masks));
}

TEST(Verifier, SingleByteFlipsOfALargerProgramAreRejected) {
  const auto& bytes = mixed_int8();
  for (size_t i = 0; i < bytes.size(); ++i) {
    AlignedBytes copy(bytes);
    copy.data()[i] ^= 0x40;
    ASSERT_NE(Program::load(copy.cspan(), all_kernels()).error(), Error::kOk) << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Structural corruption with the CRC recomputed, so the corruption reaches the checks behind it.

TEST(Verifier, Header) {
  const auto& b = tiny_int8();
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { f[0] = 'X'; }), Error::kBadMagic);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { f[3] = '2'; }), Error::kBadMagic);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).version = 1; }), Error::kBadVersion);  // before regions
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).version = 2; }), Error::kBadVersion);  // rank-4 records
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).version = 3; }), Error::kBadVersion);  // ungrouped ConvParams
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).version = format::kVersion + 1; }), Error::kBadVersion);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).version = 0; }), Error::kBadVersion);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).header_bytes = 64; }), Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).file_bytes = 16; }, false), Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [&](uint8_t* f) { header(f).file_bytes = uint32_t(b.size()) + 4; }, false),
            Error::kTruncated);
  // Zero ops is allowed (an identity model); the op records are then never looked at.
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) {
              header(f).op_count = 0;
              std::memset(&op_record(f, 0), 0xEE, sizeof(OpRecord));
            }),
            Error::kOk);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).input_count = 0; }), Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).output_count = 0; }), Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).arena_bytes += 8; }), Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).arena_lower_bound = header(f).arena_bytes + 16; }),
            Error::kBadHeader);
  // Memory regions: 1 to 4, sizes 16-aligned, unused ones 0; the bound covers all of them.
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).region_count = 0; }), Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).region_count = 5; }), Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).region_bytes[0] = 16; }), Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) {
              header(f).region_count = 2;
              header(f).region_bytes[0] = 8;
            }),
            Error::kBadHeader);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) {
              header(f).region_count = 2;
              header(f).region_bytes[0] = 32;
              header(f).arena_lower_bound = header(f).arena_bytes + 32;
            }),
            Error::kOk);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).structure_crc32 ^= 1; }, false), Error::kBadChecksum);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).data_crc32 ^= 1; }, false), Error::kBadChecksum);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).flags ^= 4; }, false), Error::kBadChecksum);
  // A header change with a fixed-up CRC that keeps everything consistent still loads.
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).arena_bytes += 16; }), Error::kOk);
  EXPECT_EQ(corrupt_and_load(b, [](uint8_t* f) { header(f).arena_lower_bound = 0; }), Error::kOk);
}

TEST(Verifier, SectionsOutOfRange) {
  const auto& b = conv_int8();
  const uint32_t n = uint32_t(b.size());
  auto load = [&](auto corrupt) { return corrupt_and_load(b, corrupt); };
  EXPECT_EQ(load([&](uint8_t* f) { header(f).tensors_offset = n; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).tensors_offset = 0; }), Error::kBadSection);  // inside the header
  EXPECT_EQ(load([&](uint8_t* f) { header(f).tensors_offset += 2; }), Error::kBadSection);  // misaligned
  EXPECT_EQ(load([&](uint8_t* f) { header(f).tensor_count = 0xFFFF; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).ops_offset = n - 4; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).ops_offset = 0xFFFFFFF0u; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).op_count = 0xFFFF; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).io_offset = n; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).io_offset += 1; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).output_count = 0xFFFF; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).params_offset = n; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).params_bytes = n; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).params_offset += 2; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).constants_offset += 4; }), Error::kBadSection);  // not 16-aligned
  EXPECT_EQ(load([&](uint8_t* f) { header(f).constants_offset = n + 16; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).constants_bytes = 0xFFFFFFFFu; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).metadata_bytes = n - header(f).metadata_offset + 1; }),
            Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).metadata_offset = 0xFFFFFFFFu; }), Error::kBadSection);
  EXPECT_EQ(load([&](uint8_t* f) { header(f).metadata_offset = 8; }), Error::kBadSection);
  // Sections exactly at the end of the file are fine.
  EXPECT_EQ(load([&](uint8_t* f) {
              header(f).metadata_offset = n;
              header(f).metadata_bytes = 0;
            }),
            Error::kOk);
}

// The records and params end before the constants, so that the structure's checksum covers them.
TEST(Verifier, RecordsAndParamsComeBeforeTheConstants) {
  const auto& b = conv_int8();
  auto load = [&](auto corrupt) { return corrupt_and_load(b, corrupt); };
  EXPECT_EQ(load([](uint8_t* f) { header(f).params_offset = header(f).constants_offset; }), Error::kBadSection);
  EXPECT_EQ(load([](uint8_t* f) { header(f).params_bytes += 16; }), Error::kBadSection);  // into the constants
  EXPECT_EQ(load([](uint8_t* f) { header(f).constants_offset = header(f).params_offset; }), Error::kBadSection);
}

// Verify::kStructure checks the structure's checksum and all that memory safety needs; it skips
// only the data's checksum and the recomputation of the MVE kernels' prepared values.
TEST(Verifier, StructureLevelSkipsOnlyTheDataChecksumAndMvePreparedValues) {
  const std::vector<uint8_t> base = compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, "cortex-m55");
  AlignedBytes probe(base);
  const int op = find_op(probe.data(), KernelId::conv_s8_mve);
  ASSERT_GE(op, 0);
  const auto rec = op_record(probe.data(), uint32_t(op));
  const uint16_t weights = rec.tensors[kernels::kWeightsSlot], prepared = rec.tensors[kernels::kMvePreparedSlot];
  auto load_at = [&](Verify level, auto corrupt, bool fix) {
    AlignedBytes f(base);
    corrupt(f.data());
    if (fix) fix_crc(f);
    return Program::load(f.cspan(), all_kernels(), nullptr, level).error();
  };
  auto both = [&](auto corrupt, bool fix) {
    return std::pair{load_at(Verify::kFull, corrupt, fix), load_at(Verify::kStructure, corrupt, fix)};
  };
  using Levels = std::pair<Error, Error>;
  EXPECT_EQ(both([](uint8_t*) {}, false), Levels(Error::kOk, Error::kOk));
  // A weight byte flipped, checksums as written: the data's checksum catches it, at kFull only.
  EXPECT_EQ(both([&](uint8_t* f) { constant_data(f, weights)[0] ^= 1; }, false), Levels(Error::kBadChecksum, Error::kOk));
  // A record's byte flipped: the structure's checksum, at both levels.
  EXPECT_EQ(both([&](uint8_t* f) { tensor_record(f, weights).offset ^= 16; }, false),
            Levels(Error::kBadChecksum, Error::kBadChecksum));
  EXPECT_EQ(both([](uint8_t* f) { header(f).data_crc32 ^= 1; }, false), Levels(Error::kBadChecksum, Error::kBadChecksum));
  // A prepared value changed, checksums renewed: its recomputation refuses it, at kFull only.
  EXPECT_EQ(both([&](uint8_t* f) { constant_data(f, prepared)[0] ^= 1; }, true), Levels(Error::kBadParams, Error::kOk));
  // Its record, which the kernel's addresses follow, at both levels.
  EXPECT_EQ(both([&](uint8_t* f) { op_record(f, uint32_t(op)).tensors[kernels::kMvePreparedSlot] = weights; }, true),
            Levels(Error::kBadParams, Error::kBadParams));
  // Off a 16-byte boundary (the kernels load the tables as words), its values moved with it:
  // refused at both levels.
  EXPECT_EQ(both([&](uint8_t* f) {
              auto& t = tensor_record(f, prepared);
              uint8_t* values = constant_data(f, prepared);
              std::memmove(values + 4, values, t.bytes - 4);
              t.offset += 4;
            }, true),
            Levels(Error::kBadParams, Error::kBadParams));
}

// A product's later wakes (docs/program_format.md, "Verification levels"): the data checksum
// kept from a kFull boot names the program a kStructure load finds, whose header's data
// checksum the structure's covers.
TEST(Verifier, DataChecksumTellsAWakeWhetherItsProgramPassedKFull) {
  const std::vector<uint8_t> base = compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, "cortex-m55");
  AlignedBytes first(base);
  auto full = Program::load(first.cspan(), all_kernels(), nullptr, Verify::kFull);
  ASSERT_TRUE(full.ok());
  const uint32_t kept = full.value().data_crc32();
  EXPECT_EQ(kept, crc32(first.data() + header(first.data()).constants_offset,
                        header(first.data()).file_bytes - header(first.data()).constants_offset));
  auto wake = Program::load(first.cspan(), all_kernels(), nullptr, Verify::kStructure);
  ASSERT_TRUE(wake.ok());
  EXPECT_EQ(wake.value().data_crc32(), kept);
  // Another program in its place (a weight changed, checksums renewed): kStructure accepts it, its
  // checksum differs from the one kept, and kFull is what it needs.
  AlignedBytes updated(base);
  const int op = find_op(updated.data(), KernelId::conv_s8_mve);
  ASSERT_GE(op, 0);
  constant_data(updated.data(), op_record(updated.data(), uint32_t(op)).tensors[kernels::kWeightsSlot])[0] ^= 1;
  fix_crc(updated);
  auto other = Program::load(updated.cspan(), all_kernels(), nullptr, Verify::kStructure);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other.value().data_crc32(), kept);
  EXPECT_EQ(Program().data_crc32(), 0u);
}

// The DSP tier's walked prepared inputs (dwconv_s8_3x3_dsp's, conv_s8_1x1_dsp's: weights and
// requantization values the kernels compute with, shifts masked) are compared at kFull only; the
// general depthwise kernel's are recomputed at every level.
TEST(Verifier, StructureLevelSkipsOnlyTheWalkedDspPreparedValues) {
  const std::vector<uint8_t> base = compile_int8(mixed_graph(), 1, 8, false, "cortex-m4");
  AlignedBytes probe(base);
  bool seen = false;
  for (const KernelId kernel : {KernelId::dwconv_s8_dsp, KernelId::dwconv_s8_3x3_dsp}) {
    const int op = find_op(probe.data(), kernel);
    if (op < 0) continue;
    seen = true;
    AlignedBytes f(base);
    constant_data(f.data(), op_record(f.data(), uint32_t(op)).tensors[kernels::kDspDwPreparedSlot])[0] ^= 1;
    fix_crc(f);
    EXPECT_EQ(Program::load(f.cspan(), all_kernels(), nullptr, Verify::kFull).error(), Error::kBadParams);
    EXPECT_EQ(Program::load(f.cspan(), all_kernels(), nullptr, Verify::kStructure).error(),
              kernel == KernelId::dwconv_s8_3x3_dsp ? Error::kOk : Error::kBadParams);
  }
  EXPECT_TRUE(seen);
}

TEST(Verifier, TensorRecords) {
  const auto& b = conv_int8();
  AlignedBytes probe(b);
  uint8_t* pf = probe.data();
  const int act = first_arena_tensor(pf, DType::kInt8);
  const int fl = first_arena_tensor(pf, DType::kFloat32);
  const int cst = first_constant_tensor(pf);
  ASSERT_GE(act, 0);
  ASSERT_GE(fl, 0);
  ASSERT_GE(cst, 0);
  const uint32_t arena = header(pf).arena_bytes, constants = header(pf).constants_bytes;
  auto load = [&](auto corrupt) { return corrupt_and_load(b, corrupt); };

  // Offset/bytes beyond the arena: the record is self-consistent, only the limit is exceeded.
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).offset = arena; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).offset = arena - tensor_record(f, act).bytes + 1; }),
            Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).offset = 0xFFFFFFF0u; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) {
              TensorRecord& t = tensor_record(f, act);
              const uint32_t per_row = t.bytes / uint32_t(t.dims[0]);
              t.dims[0] = int32_t(arena / per_row + 1);
              t.bytes = uint32_t(t.dims[0]) * per_row;
              t.offset = 0;
            }),
            Error::kBadTensor);
  // Ending exactly at the arena's end is allowed (an arena grown for it: the tensor then shares
  // no byte with the others of its ops).
  EXPECT_EQ(load([&](uint8_t* f) {
              const uint32_t bytes = tensor_record(f, act).bytes, grown = arena + (bytes + 15) / 16 * 16;
              header(f).arena_bytes = grown;
              tensor_record(f, act).offset = grown - bytes;
            }),
            Error::kOk);
  // Offset/bytes beyond the constants section.
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, cst).offset = (constants + 15) / 16 * 16; }),
            Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) {
              TensorRecord& t = tensor_record(f, cst);
              t.offset = (constants - t.bytes / 2) / 4 * 4;
            }),
            Error::kBadTensor);
  // Malformed records.
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).bytes += 1; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).dims[0] = 0; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).dims[0] = -4; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).rank = uint8_t(format::kMaxRank + 1); }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) {
              TensorRecord& t = tensor_record(f, act);  // a dim beyond the rank that is not 1
              t.rank = 1;
            }),
            Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).dtype = DType(0); }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).dtype = DType(6); }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).dtype = DType::kInt16; }), Error::kBadTensor)
      << "an int16 record of an int8 record's bytes";
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).storage = Storage(5); }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).region = 1; }), Error::kBadTensor);  // one region only
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).reserved[1] = 1; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).copy_offset = 16; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, cst).copy_offset = 16; }), Error::kBadTensor);
  // A constant copied into RAM: its copy must lie inside its region, its source inside the
  // constants, and it can never be an op's output. Bind copies it before the caller fills the
  // inputs and the ops run: it shares no byte with a program input, another copy or any op's
  // write (the bytes would not be the constant's when a kernel reads them). The room past the
  // planned arena holds nothing else.
  const int conv = find_op(pf, KernelId::conv_s8);
  ASSERT_GE(conv, 0);
  const uint16_t weights = op_record(pf, uint32_t(conv)).tensors[1], bias = op_record(pf, uint32_t(conv)).tensors[2];
  const uint32_t weight_room = (tensor_record(pf, weights).bytes + 15) / 16 * 16;
  auto copied = [&](uint16_t t, uint32_t copy_offset, uint32_t more_arena = 0) {
    return load([&](uint8_t* f) {
      header(f).arena_bytes += more_arena;
      tensor_record(f, t).storage = Storage::kCopiedConstant;
      tensor_record(f, t).copy_offset = copy_offset;
    });
  };
  EXPECT_EQ(copied(weights, arena, weight_room), Error::kOk);
  EXPECT_EQ(copied(weights, arena - tensor_record(pf, weights).bytes + 16), Error::kBadTensor);
  EXPECT_EQ(copied(bias, 2), Error::kBadTensor);  // a misaligned int32 copy
  const TensorRecord& input = tensor_record(pf, io_table(pf)[0]);
  ASSERT_EQ(input.storage, Storage::kArena);
  EXPECT_EQ(copied(weights, input.offset), Error::kBadIo) << "the copy on the program input";
  int other = -1;  // a second constant that may be copied
  for (uint32_t t = 0; other < 0 && t < header(pf).tensor_count; ++t) {
    const uint32_t room = (tensor_record(pf, t).bytes + 15) / 16 * 16;
    if (t != weights && tensor_record(pf, t).storage == Storage::kConstant && copied(uint16_t(t), arena, room) == Error::kOk)
      other = int(t);
  }
  ASSERT_GE(other, 0);
  EXPECT_EQ(load([&](uint8_t* f) {  // both in the same room
              header(f).arena_bytes += weight_room + (tensor_record(f, other).bytes + 15) / 16 * 16;
              for (const int t : {int(weights), other}) {
                tensor_record(f, t).storage = Storage::kCopiedConstant;
                tensor_record(f, t).copy_offset = arena;
              }
            }),
            Error::kBadTensor);
  // On the program output, moved into the room past the planned arena: the last op writes it.
  const int output = io_table(pf)[header(pf).input_count];
  EXPECT_EQ(load([&](uint8_t* f) {  // the output alone there
              header(f).arena_bytes += weight_room + (tensor_record(f, output).bytes + 15) / 16 * 16;
              tensor_record(f, output).offset = arena;
            }),
            Error::kOk);
  EXPECT_EQ(load([&](uint8_t* f) {
              header(f).arena_bytes += weight_room + (tensor_record(f, output).bytes + 15) / 16 * 16;
              tensor_record(f, output).offset = arena;
              tensor_record(f, weights).storage = Storage::kCopiedConstant;
              tensor_record(f, weights).copy_offset = arena;
            }),
            Error::kBadAliasing);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).storage = Storage::kCopiedConstant; }), Error::kBadOp);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).layout = format::Layout(3); }), Error::kBadTensor);
  // NHWC is [N, H, W, C] (or [N, L, C] at rank 3): the host reads the dims as such (a bit flip
  // in a rank-2 output's layout made it read past them).
  EXPECT_EQ(load([&](uint8_t* f) {
              const int out = io_table(f)[header(f).input_count];
              tensor_record(f, out).layout = format::Layout::kNhwc;
            }),
            Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).scale = -1.0f; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).scale = std::nanf(""); }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).zero_point = 128; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, act).zero_point = -129; }), Error::kBadTensor);
  EXPECT_EQ(load([&](uint8_t* f) { tensor_record(f, fl).offset += 2; }), Error::kBadTensor);  // misaligned float
}

// int16 and packed int4 records: their bytes follow the bit width (ceil(bits * count / 8)), their
// zero points the type's range. A record the verifier accepts reaches its op's check, which
// refuses the type (kBadParams); a malformed one stops at the record (kBadTensor).
TEST(Verifier, TensorRecordsOfOtherWidths) {
  static_assert(format::storage_bytes(DType::kInt4, 3) == 2 && format::storage_bytes(DType::kInt16, 3) == 6);
  static_assert(format::dtype_min(DType::kInt4) == -8 && format::dtype_max(DType::kInt16) == 32767);
  const auto& b = conv_int8();
  AlignedBytes probe(b);
  const int act = first_arena_tensor(probe.data(), DType::kInt8);
  ASSERT_GE(act, 0);
  const uint32_t arena = header(probe.data()).arena_bytes;
  uint64_t count = 1;
  for (int32_t d : tensor_record(probe.data(), act).dims) count *= uint64_t(d);
  const auto as = [&](DType dtype, uint64_t bytes, int32_t zero_point) {
    return corrupt_and_load(b, [&](uint8_t* f) {
      TensorRecord& t = tensor_record(f, act);  // moved past the arena's end, which grows for it
      t.dtype = dtype;
      t.bytes = uint32_t(bytes);
      t.zero_point = zero_point;
      t.offset = arena;
      header(f).arena_bytes = arena + uint32_t(bytes + 15) / 16 * 16;
    });
  };
  EXPECT_EQ(as(DType::kInt8, count, -128), Error::kOk) << "the record as it was, moved";
  EXPECT_EQ(as(DType::kInt16, 2 * count, -32768), Error::kBadParams);
  EXPECT_EQ(as(DType::kInt16, 2 * count, 32767), Error::kBadParams);
  EXPECT_EQ(as(DType::kInt16, 2 * count, 32768), Error::kBadTensor);
  EXPECT_EQ(as(DType::kInt16, 2 * count - 1, 0), Error::kBadTensor);
  EXPECT_EQ(as(DType::kInt4, (count + 1) / 2, -8), Error::kBadParams);
  EXPECT_EQ(as(DType::kInt4, (count + 1) / 2, 7), Error::kBadParams);
  EXPECT_EQ(as(DType::kInt4, (count + 1) / 2, 8), Error::kBadTensor);
  EXPECT_EQ(as(DType::kInt4, count, 0), Error::kBadTensor) << "int4 is packed two a byte";
  EXPECT_EQ(as(DType::kInt4, (count + 1) / 2 + 1, 0), Error::kBadTensor);
  // Float and int32 tensors have no zero point.
  const int fl = first_arena_tensor(probe.data(), DType::kFloat32);
  ASSERT_GE(fl, 0);
  EXPECT_EQ(corrupt_and_load(b, [&](uint8_t* f) { tensor_record(f, fl).zero_point = 1; }), Error::kBadTensor);
}

TEST(Verifier, IoTable) {
  const auto& b = tiny_int8();
  auto load = [&](auto corrupt) { return corrupt_and_load(b, corrupt); };
  EXPECT_EQ(load([](uint8_t* f) { io_table(f)[0] = header(f).tensor_count; }), Error::kBadIo);
  EXPECT_EQ(load([](uint8_t* f) { io_table(f)[1] = 0xFFFF; }), Error::kBadIo);
  EXPECT_EQ(load([](uint8_t* f) { io_table(f)[1] = uint16_t(first_constant_tensor(f)); }), Error::kBadIo);
}

// Storage::kStreamed: only a program input, never read by an op (read_input_rows fetches its
// rows), with no offset of its own.
TEST(Verifier, StreamedTensors) {
  const auto& b = conv_int8();
  auto load = [&](auto corrupt) { return corrupt_and_load(b, corrupt); };
  auto streamed = [](uint8_t* f, uint16_t t) {
    tensor_record(f, t).storage = Storage::kStreamed;
    tensor_record(f, t).offset = 0;
  };
  // The program's input is read by its first op: as a streamed tensor it could not be.
  EXPECT_EQ(load([&](uint8_t* f) { streamed(f, io_table(f)[0]); }), Error::kBadOp);
  // An output, or a tensor that is not an input at all.
  EXPECT_EQ(load([&](uint8_t* f) { streamed(f, io_table(f)[header(f).input_count]); }), Error::kBadIo);
  EXPECT_EQ(load([&](uint8_t* f) {
              const int cst = first_constant_tensor(f);
              tensor_record(f, uint16_t(cst)).storage = Storage::kStreamed;
              tensor_record(f, uint16_t(cst)).offset = 0;
            }),
            Error::kBadIo);
  EXPECT_EQ(load([&](uint8_t* f) {
              streamed(f, io_table(f)[0]);
              tensor_record(f, io_table(f)[0]).offset = 16;
            }),
            Error::kBadTensor);
}

TEST(Verifier, OpRecords) {
  const auto& b = conv_int8();
  AlignedBytes probe(b);
  const int conv = find_op(probe.data(), KernelId::conv_s8);
  ASSERT_GE(conv, 0);
  const int cst = first_constant_tensor(probe.data());
  auto load = [&](auto corrupt) { return corrupt_and_load(b, corrupt); };

  // Tensor index out of range, in an input slot and in the output slot.
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).tensors[0] = header(f).tensor_count; }), Error::kBadOp);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).tensors[5] = 0xFFFF; }), Error::kBadOp);
  // The output is a constant: kernels would write into flash.
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).tensors[5] = uint16_t(cst); }), Error::kBadOp);
  // Counts that disagree with the kernel: fewer inputs, other output counts, more than 8 slots.
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).input_count = 4; }), Error::kBadOp);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).output_count = 2; }), Error::kBadOp);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).output_count = 0; }), Error::kBadOp);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).input_count = 8; }), Error::kBadOp);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).input_count = 0xFF; }), Error::kBadOp);
  // Extra trailing inputs (constants an optimized kernel precomputed) are allowed; the output
  // then follows them.
  {
    AlignedBytes extra(b);
    uint8_t* f = extra.data();
    OpRecord& op = op_record(f, conv);
    op.tensors[6] = op.tensors[5];
    op.tensors[5] = uint16_t(cst);
    op.input_count = 6;
    fix_crc(extra);
    Runner r(extra.data(), extra.size());
    ASSERT_EQ(r.error(), Error::kOk);
    r.set_input(0, Rng(4).floats(3 * 8 * 8, -1, 1));
    EXPECT_EQ(r.run(), Error::kOk);
    EXPECT_TRUE(r.arena().guards_intact());
    // ...but the output must still be the right tensor, in the slot after the inputs.
    EXPECT_EQ(corrupt_and_load(b, [&](uint8_t* g) {
                OpRecord& o = op_record(g, conv);
                o.tensors[6] = o.tensors[0];
                o.input_count = 6;
              }),
              Error::kBadParams);
  }
  // Kernel ids.
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).kernel = 0; }), Error::kUnknownKernel);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).kernel = kKernelIdCount; }), Error::kUnknownKernel);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).kernel = 0xFFFF; }), Error::kUnknownKernel);
  // Another known kernel with other counts/params: caught, whichever check comes first.
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).kernel = uint16_t(KernelId::conv_f32); }), Error::kBadParams);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).kernel = uint16_t(KernelId::fc_s8); }), Error::kBadParams);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).kernel = uint16_t(KernelId::clamp_s8); }), Error::kBadParams);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).kernel = uint16_t(KernelId::dwconv_s8); }),
            Error::kBadParams);
  // Params: size, alignment, range within the section.
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).params_bytes += 4; }), Error::kBadParams);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).params_bytes -= 4; }), Error::kBadParams);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).params_offset += 2; }), Error::kBadParams);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).params_offset = header(f).params_bytes; }), Error::kBadParams);
  EXPECT_EQ(load([&](uint8_t* f) { op_record(f, conv).params_offset = 0xFFFFFFFCu; }), Error::kBadParams);
}

bool known_kernel(uint32_t id) {
  switch (id) {
#define MCUFLOW_TEST_KNOWN(name, value) case value:
#define MCUFLOW_TEST_KNOWN_TIER(name, value, reference) case value:
    MCUFLOW_KERNELS(MCUFLOW_TEST_KNOWN)
    MCUFLOW_TIER_KERNELS(MCUFLOW_TEST_KNOWN_TIER)
#undef MCUFLOW_TEST_KNOWN
#undef MCUFLOW_TEST_KNOWN_TIER
    return true;
    default:
      return false;
  }
}

// Every id the runtime does not define is kUnknownKernel, including ids in the gaps of the id
// space (reference kernels count up from 1, tier kernels from 64); every id it defines is
// linked in the host table, so it fails (if at all) on the op's counts or params instead.
TEST(Verifier, EveryKernelIdIsKnownOrUnknown) {
  const auto& b = tiny_int8();
  AlignedBytes probe(b);
  const int fc = find_op(probe.data(), KernelId::fc_s8);
  ASSERT_GE(fc, 0);
  for (uint32_t id = 0; id <= 0xFFFF; id = id < 512 ? id + 1 : id * 2 + 1) {
    const Error e = corrupt_and_load(b, [&](uint8_t* f) { op_record(f, fc).kernel = uint16_t(id); });
    if (known_kernel(id)) {
      EXPECT_NE(e, Error::kUnknownKernel) << id;
      EXPECT_NE(e, Error::kKernelNotLinked) << id;
    } else {
      EXPECT_EQ(e, Error::kUnknownKernel) << id;
    }
  }
}

// A table with every kernel but the ones listed.
struct PartialTable {
  std::vector<const KernelEntry*> entries;
  PartialTable(std::initializer_list<KernelId> missing, uint16_t count = kKernelIdCount) {
    const KernelTable all = all_kernels();
    entries.assign(all.entries, all.entries + all.count);
    for (KernelId id : missing) entries[size_t(id)] = nullptr;
    entries.resize(count);
  }
  KernelTable table() const { return KernelTable{entries.data(), uint16_t(entries.size())}; }
};

TEST(Verifier, KernelNotLinked) {
  const auto& b = conv_int8();
  EXPECT_EQ(load_error(b, PartialTable({}).table()), Error::kOk);
  EXPECT_EQ(load_error(b, PartialTable({KernelId::fc_s8}).table()), Error::kKernelNotLinked);
  EXPECT_EQ(load_error(b, PartialTable({KernelId::maxpool_s8}).table()), Error::kKernelNotLinked);
  EXPECT_EQ(load_error(b, PartialTable({KernelId::quantize_f32_s8}).table()), Error::kKernelNotLinked);
  // Kernels the program does not use may be missing (selective build).
  EXPECT_EQ(load_error(b, PartialTable({KernelId::softmax_s8, KernelId::conv_f32, KernelId::add_s8}).table()),
            Error::kOk);
  // A shorter table (a firmware built before newer kernels existed).
  EXPECT_EQ(load_error(b, PartialTable({}, uint16_t(KernelId::conv_s8)).table()), Error::kKernelNotLinked);
  EXPECT_EQ(load_error(b, KernelTable{nullptr, 0}), Error::kKernelNotLinked);
}

TEST(Verifier, ConvParamsInconsistentWithTensors) {
  using kernels::ConvParams;
  const auto& b = conv_int8();
  AlignedBytes probe(b);
  const int conv = find_op(probe.data(), KernelId::conv_s8);
  ASSERT_GE(conv, 0);
  auto load = [&](auto edit) {
    return corrupt_and_load(b, [&](uint8_t* f) { edit(params_as<ConvParams>(f, conv)); });
  };
  EXPECT_EQ(load([](ConvParams&) {}), Error::kOk);
  EXPECT_EQ(load([](ConvParams& p) { p.in_c += 1; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.in_h += 1; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.out_w += 1; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.out_c += 1; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.k_h += 1; }), Error::kBadParams);
  // Swapped dims with the same products still describe other buffers than the tensors'.
  EXPECT_EQ(load([](ConvParams& p) { std::swap(p.in_c, p.out_c); }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.stride_h = 0; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.dil_w = 0; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.pad_top = -1; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.input_offset = 129; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.out.output_offset = 128; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.out.act_min = 100, p.out.act_max = 50; }), Error::kBadParams);
  EXPECT_EQ(load([](ConvParams& p) { p.out.act_max = 200; }), Error::kBadParams);
  // Geometry that changes results but not buffer extents stays valid (the kernel clips).
  EXPECT_EQ(load([](ConvParams& p) { p.stride_h = 7; p.pad_left = 9; p.dil_h = 5; }), Error::kOk);
}

TEST(Verifier, RequantTables) {
  const auto& b = conv_int8();
  AlignedBytes probe(b);
  uint8_t* pf = probe.data();
  const int conv = find_op(pf, KernelId::conv_s8);
  const int fc = find_op(pf, KernelId::fc_s8);
  ASSERT_GE(conv, 0);
  ASSERT_GE(fc, 0);
  const uint16_t conv_shift = op_record(pf, conv).tensors[4], conv_mult = op_record(pf, conv).tensors[3];
  const uint16_t fc_shift = op_record(pf, fc).tensors[4];
  auto set_i32 = [](uint8_t* f, uint16_t t, int index, int32_t v) {
    std::memcpy(constant_data(f, t) + 4 * index, &v, 4);
  };
  auto load = [&](uint16_t t, int index, int32_t v) {
    return corrupt_and_load(b, [&](uint8_t* f) { set_i32(f, t, index, v); });
  };
  EXPECT_EQ(load(conv_shift, 0, 31), Error::kBadParams);
  EXPECT_EQ(load(conv_shift, 3, -32), Error::kBadParams);
  EXPECT_EQ(load(conv_shift, 2, INT32_MIN), Error::kBadParams);
  EXPECT_EQ(load(conv_mult, 1, -1), Error::kBadParams);
  EXPECT_EQ(load(fc_shift, 0, 1000), Error::kBadParams);
  EXPECT_EQ(load(conv_shift, 0, 30), Error::kOk);  // the extremes are valid
  EXPECT_EQ(load(conv_shift, 0, -31), Error::kOk);
  // Tables must be constants of the right dtype and length.
  EXPECT_EQ(corrupt_and_load(b, [&](uint8_t* f) { op_record(f, conv).tensors[4] = op_record(f, conv).tensors[0]; }),
            Error::kBadParams);
  EXPECT_EQ(corrupt_and_load(b, [&](uint8_t* f) { op_record(f, conv).tensors[4] = op_record(f, conv).tensors[1]; }),
            Error::kBadParams);
  EXPECT_EQ(corrupt_and_load(b, [&](uint8_t* f) { op_record(f, conv).tensors[3] = op_record(f, fc).tensors[3]; }),
            Error::kBadParams);
}

// An int32 bias must leave room for the largest accumulator the op can produce
// (in_c * k_h * k_w * 255 * 128 for conv, in_c * 255 * 128 for linear): acc + bias never overflows.
TEST(Verifier, BiasMustFitTheAccumulator) {
  const auto& b = conv_int8();
  AlignedBytes probe(b);
  uint8_t* pf = probe.data();
  const int conv = find_op(pf, KernelId::conv_s8);
  const int fc = find_op(pf, KernelId::fc_s8);
  ASSERT_GE(conv, 0);
  ASSERT_GE(fc, 0);
  const auto& cp = params_as<kernels::ConvParams>(pf, conv);
  const int64_t conv_acc = int64_t(cp.in_c) * cp.k_h * cp.k_w * 255 * 128;
  const int64_t fc_acc = int64_t(params_as<kernels::FcParams>(pf, fc).in_c) * 255 * 128;
  auto load = [&](int op, int index, int64_t v) {
    return corrupt_and_load(b, [&](uint8_t* f) {
      const int32_t x = int32_t(v);
      std::memcpy(constant_data(f, op_record(f, op).tensors[2]) + 4 * index, &x, 4);
    });
  };
  EXPECT_EQ(load(conv, 0, INT32_MAX - conv_acc), Error::kOk);
  EXPECT_EQ(load(conv, 0, INT32_MAX - conv_acc + 1), Error::kBadParams);
  EXPECT_EQ(load(conv, 3, -(INT32_MAX - conv_acc)), Error::kOk);
  EXPECT_EQ(load(conv, 3, -(INT32_MAX - conv_acc) - 1), Error::kBadParams);
  EXPECT_EQ(load(conv, 1, INT32_MIN), Error::kBadParams);
  EXPECT_EQ(load(fc, 4, INT32_MAX - fc_acc), Error::kOk);
  EXPECT_EQ(load(fc, 4, INT32_MAX - fc_acc + 1), Error::kBadParams);
  // The largest allowed bias runs without overflow (UBSan in the sanitizer build).
  AlignedBytes edge(b);
  const int32_t x = int32_t(INT32_MAX - conv_acc);
  for (int c = 0; c < cp.out_c; ++c) std::memcpy(constant_data(edge.data(), op_record(edge.data(), conv).tensors[2]) + 4 * c, &x, 4);
  fix_crc(edge);
  Runner r(edge.data(), edge.size());
  ASSERT_TRUE(r.ok());
  r.set_input(0, std::vector<float>(192, 1.0f));
  EXPECT_EQ(r.run(), Error::kOk);
}

TEST(Verifier, PoolWindows) {
  using kernels::PoolParams;
  const auto& b = conv_int8();
  AlignedBytes probe(b);
  const int pool = find_op(probe.data(), KernelId::maxpool_s8);
  ASSERT_GE(pool, 0);
  const PoolParams orig = params_as<PoolParams>(probe.data(), pool);
  ASSERT_EQ(orig.in_h, 8);
  ASSERT_EQ(orig.out_h, 4);
  ASSERT_EQ(orig.k_h, 2);
  ASSERT_EQ(orig.stride_h, 2);
  auto edited = [&](auto edit) {
    AlignedBytes copy(b);
    edit(params_as<PoolParams>(copy.data(), pool));
    fix_crc(copy);
    return copy;
  };
  auto load = [&](auto edit) { return Program::load(edited(edit).cspan(), all_kernels()).error(); };
  // Tensor sizes unchanged; only the window placement differs.
  // The last output row's window starts at (4-1)*3 = 9 >= in_h: it lies entirely in padding.
  EXPECT_EQ(load([](PoolParams& p) { p.stride_h = 3; }), Error::kBadParams);
  EXPECT_EQ(load([](PoolParams& p) { p.stride_w = 3; }), Error::kBadParams);
  // (4-1)*3 - 1 = 8 >= 8 with one row of top padding: still entirely below the input.
  EXPECT_EQ(load([](PoolParams& p) { p.stride_h = 3, p.pad_top = 1; }), Error::kBadParams);
  // Padding of a whole window or more.
  EXPECT_EQ(load([](PoolParams& p) { p.pad_top = 2; }), Error::kBadParams);
  EXPECT_EQ(load([](PoolParams& p) { p.pad_left = -1; }), Error::kBadParams);
  // Other range checks.
  EXPECT_EQ(load([](PoolParams& p) { p.k_w = 0; }), Error::kBadParams);
  EXPECT_EQ(load([](PoolParams& p) { p.c += 1; }), Error::kBadParams);
  EXPECT_EQ(load([](PoolParams& p) { p.out_h -= 1; }), Error::kBadParams);
  EXPECT_EQ(load([](PoolParams& p) { p.act_min = -129; }), Error::kBadParams);
  // Windows that only partly leave the input are valid, and the kernel clips them.
  for (auto edit : std::vector<void (*)(PoolParams&)>{[](PoolParams& p) { p.pad_top = 1, p.pad_left = 1; },
                                                      [](PoolParams& p) { p.k_h = 5, p.k_w = 7; },
                                                      [](PoolParams& p) { p.k_h = 9, p.pad_top = 8, p.stride_h = 5; }}) {
    AlignedBytes copy = edited(edit);
    Runner r(copy.data(), copy.size());
    ASSERT_TRUE(r.ok()) << error_name(r.error());
    r.set_input(0, Rng(9).floats(3 * 8 * 8, -1, 1));
    EXPECT_EQ(r.run(), Error::kOk);
    EXPECT_TRUE(r.arena().guards_intact());
  }
}

TEST(Verifier, OtherOpParams) {
  const auto& b = mixed_int8();
  AlignedBytes probe(b);
  uint8_t* pf = probe.data();
  auto load = [&](KernelId k, auto edit) {
    const int op = find_op(pf, k);
    EXPECT_GE(op, 0) << int(k);
    if (op < 0) return Error::kOk;
    return corrupt_and_load(b, [&](uint8_t* f) { edit(f, op); });
  };
  using namespace kernels;
  EXPECT_EQ(load(KernelId::dwconv_s8, [](uint8_t* f, int op) { params_as<DwConvParams>(f, op).ch_mult = 2; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::fc_s8, [](uint8_t* f, int op) { params_as<FcParams>(f, op).per_channel = 1; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::fc_s8, [](uint8_t* f, int op) { params_as<FcParams>(f, op).rows = 2; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::add_s8, [](uint8_t* f, int op) { params_as<BinaryParams>(f, op).left_shift = 21; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::add_s8, [](uint8_t* f, int op) { params_as<BinaryParams>(f, op).in2_mode = 3; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::add_s8, [](uint8_t* f, int op) { params_as<BinaryParams>(f, op).input1_shift = 31; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::mul_s8, [](uint8_t* f, int op) { params_as<BinaryParams>(f, op).in2_mode = 0; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::mul_s8,
                 [](uint8_t* f, int op) { params_as<BinaryParams>(f, op).output_multiplier = -5; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::softmax_s8, [](uint8_t* f, int op) { params_as<SoftmaxParams>(f, op).depth = 5; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::softmax_s8, [](uint8_t* f, int op) { params_as<SoftmaxParams>(f, op).diff_min = 1; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::softmax_s8,
                 [](uint8_t* f, int op) { params_as<SoftmaxParams>(f, op).input_left_shift = 32; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::concat_slice_s8,
                 [](uint8_t* f, int op) {
                   ConcatSliceParams& p = params_as<ConcatSliceParams>(f, op);
                   p.offset_c = p.out_c - p.in_c + 1;
                 }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::concat_slice_s8,
                 [](uint8_t* f, int op) { params_as<ConcatSliceParams>(f, op).offset_c = -1; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::clamp_s8, [](uint8_t* f, int op) { params_as<ClampParams>(f, op).n += 1; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::permute_b8, [](uint8_t* f, int op) { params_as<PermuteParams>(f, op).perm[0] = 1; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::permute_b8, [](uint8_t* f, int op) { params_as<PermuteParams>(f, op).in_dims[3] += 1; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::quantize_f32_s8, [](uint8_t* f, int op) { params_as<QuantizeParams>(f, op).scale = 0; }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::quantize_f32_s8,
                 [](uint8_t* f, int op) { params_as<QuantizeParams>(f, op).scale = std::nanf(""); }),
            Error::kBadParams);
  EXPECT_EQ(load(KernelId::dequantize_s8_f32,
                 [](uint8_t* f, int op) { params_as<QuantizeParams>(f, op).zero_point = 128; }),
            Error::kBadParams);
  // A quantize op whose float input is swapped for an int8 tensor of the same element count.
  EXPECT_EQ(load(KernelId::quantize_f32_s8, [](uint8_t* f, int op) { op_record(f, op).tensors[0] = op_record(f, op).tensors[1]; }),
            Error::kBadParams);
}

// Dims of up to 2^16 each: four of them multiply to 2^64, which wrapped to 0 in 64 bits and matched
// a 0-byte record; a permute over such tensors (in_dims 2^16 x 4 or more, wrapping the same way) then
// loaded, and permute_b8 wrote 2^64 elements into a 0-byte output (fixed in 811ce63).
TEST(Verifier, ElementCountsCannotWrapAround) {
  using kernels::PermuteParams;
  const auto& b = mixed_int8();
  AlignedBytes probe(b);
  const int perm = find_op(probe.data(), KernelId::permute_b8);
  ASSERT_GE(perm, 0);
  // Never run these: a program that loads with them would write far outside the arena.
  auto huge = [](TensorRecord& t) {
    t.rank = uint8_t(format::kMaxRank);
    for (uint32_t d = 0; d < format::kMaxRank; ++d) t.dims[d] = 1 << 16;
    t.bytes = 0;
    t.offset = 0;
  };
  // The tensor record alone.
  const Error tensor_only = corrupt_and_load(b, [&](uint8_t* f) { huge(tensor_record(f, op_record(f, perm).tensors[1])); });
  // ...and wired to a permute whose params describe 2^64 elements (in place: the permute's
  // output feeds only a view, so no other op sees the record).
  const Error with_permute = corrupt_and_load(b, [&](uint8_t* f) {
    OpRecord& op = op_record(f, perm);
    huge(tensor_record(f, op.tensors[1]));
    op.tensors[0] = op.tensors[1];
    PermuteParams& p = params_as<PermuteParams>(f, perm);
    for (int d = 0; d < int(kernels::kMaxRank); ++d) p.in_dims[d] = 1 << 16, p.perm[d] = d;
  });
  EXPECT_EQ(tensor_only, Error::kBadTensor);
  EXPECT_NE(with_permute, Error::kOk);
}

// ---------------------------------------------------------------------------------------------
// Session

TEST(Verifier, SessionBind) {
  AlignedBytes file(conv_int8());
  auto p = Program::load(file.cspan(), all_kernels());
  ASSERT_TRUE(p.ok());
  const Program& program = p.value();
  const uint32_t need = program.arena_bytes();
  ASSERT_GT(need, 0u);
  ASSERT_GE(need, program.arena_lower_bound());
  AlignedBytes arena(need + 16);
  EXPECT_EQ(Session::bind(program, Span<uint8_t>{arena.data(), need - 1}).error(), Error::kArenaTooSmall);
  EXPECT_EQ(Session::bind(program, Span<uint8_t>{arena.data(), 0}).error(), Error::kArenaTooSmall);
  for (uint32_t shift : {1u, 4u, 8u, 15u}) {
    EXPECT_EQ(Session::bind(program, Span<uint8_t>{arena.data() + shift, need}).error(), Error::kArenaMisaligned)
        << shift;
  }
  EXPECT_EQ(Session::bind(program, Span<uint8_t>{arena.data(), need}).error(), Error::kOk);
  EXPECT_EQ(Session::bind(program, Span<uint8_t>{arena.data() + 16, need}).error(), Error::kOk);
  EXPECT_EQ(Session::bind(Program{}, Span<uint8_t>{arena.data(), need}).error(), Error::kNotBound);
}

TEST(Verifier, SessionArguments) {
  Runner r(conv_int8());
  ASSERT_TRUE(r.ok());
  const Session& s = r.session();
  const Program& p = r.program();
  EXPECT_TRUE(s.input_buffer(0).ok());
  EXPECT_EQ(s.input_buffer(0).value().size, 3u * 8 * 8 * 4);
  EXPECT_EQ(s.input_buffer(p.input_count()).error(), Error::kBadArgument);
  EXPECT_EQ(s.input_buffer(0xFFFFFFFFu).error(), Error::kBadArgument);
  EXPECT_TRUE(s.output_buffer(0).ok());
  EXPECT_EQ(s.output_buffer(0).value().size, 5u * 4);
  EXPECT_EQ(s.output_buffer(p.output_count()).error(), Error::kBadArgument);
  EXPECT_EQ(s.tensor_buffer(p.tensor_count()).error(), Error::kBadArgument);
  EXPECT_EQ(s.run_op(p.op_count()), Error::kBadArgument);
  EXPECT_EQ(s.run_op(0xFFFFFFFFu), Error::kBadArgument);
  EXPECT_EQ(s.run_op(0), Error::kOk);

  const Session unbound;
  EXPECT_EQ(unbound.input_buffer(0).error(), Error::kNotBound);
  EXPECT_EQ(unbound.output_buffer(0).error(), Error::kNotBound);
  EXPECT_EQ(unbound.tensor_buffer(0).error(), Error::kNotBound);
  EXPECT_EQ(unbound.run(), Error::kNotBound);
  EXPECT_EQ(unbound.run_op(0), Error::kNotBound);
}

// ---------------------------------------------------------------------------------------------
// Structural fuzz: random multi-byte corruptions of the structured parts of a program, CRC fixed
// up. Every load must return (an error or success); every program that loads must run without
// touching memory outside the file and the arena (ASan in the sanitizer build; guard bytes and
// an unchanged file everywhere).

struct Region {
  uint32_t begin, end;
};

void corrupt_randomly(uint8_t* f, size_t size, Rng& rng) {
  const Header h = header(f);
  const Region regions[] = {
      {16, uint32_t(sizeof(Header))},
      {h.tensors_offset, h.tensors_offset + h.tensor_count * uint32_t(sizeof(TensorRecord))},
      {h.ops_offset, h.ops_offset + h.op_count * uint32_t(sizeof(OpRecord))},
      {h.io_offset, h.io_offset + 2u * (h.input_count + h.output_count)},
      {h.params_offset, h.params_offset + h.params_bytes},
      {h.constants_offset, h.constants_offset + h.constants_bytes},
  };
  const int weights[] = {6, 25, 15, 4, 35, 15};
  static const int32_t kInteresting[] = {0, 1, -1, 2, 3, 7, 16, 127, 128, -128, 255, 256, 0xFFFF, 0x10000, 0x10001,
                                         INT32_MAX, INT32_MIN, 0x7FFFFFF0, 1 << 30, -(1 << 30)};
  const int edits = rng.uniform_int(1, 4);
  for (int e = 0; e < edits; ++e) {
    int pick = rng.uniform_int(0, 99), r = 0;
    while (pick >= weights[r]) pick -= weights[r++];
    const Region reg = regions[r];
    if (reg.end <= reg.begin || reg.end > size) continue;
    const uint32_t at = uint32_t(rng.uniform_int(int(reg.begin), int(reg.end) - 1));
    switch (rng.uniform_int(0, 4)) {
      case 0:  // one random byte
        f[at] = uint8_t(rng.uniform_int(0, 255));
        break;
      case 1:  // one bit
        f[at] ^= uint8_t(1u << rng.uniform_int(0, 7));
        break;
      case 2: {  // an aligned 32-bit field set to an interesting value
        const uint32_t a = at & ~3u;
        if (a + 4 > reg.end) break;
        const int32_t v = kInteresting[rng.uniform_int(0, int(sizeof(kInteresting) / 4) - 1)];
        std::memcpy(f + a, &v, 4);
        break;
      }
      case 3: {  // an aligned 32-bit field nudged by a small amount
        const uint32_t a = at & ~3u;
        if (a + 4 > reg.end) break;
        int32_t v;
        std::memcpy(&v, f + a, 4);
        v = int32_t(uint32_t(v) + uint32_t(rng.uniform_int(-3, 3)));
        std::memcpy(f + a, &v, 4);
        break;
      }
      default: {  // an aligned 16-bit field (tensor indices, counts, kernel ids)
        const uint32_t a = at & ~1u;
        if (a + 2 > reg.end) break;
        const uint16_t v = uint16_t(rng.coin() ? rng.uniform_int(0, 40) : rng.uniform_int(0, 0xFFFF));
        std::memcpy(f + a, &v, 2);
        break;
      }
    }
  }
}

// One rule for float inputs, on the host and on a board (the same Session code): NaN or Inf in a
// float32 program input is refused before op 0 runs, through run() and run_op() alike.
TEST(Verifier, NonFiniteFloatInputsAreRefusedBeforeAnyOpRuns) {
  const uint32_t nan_bits = 0x7FC00000u, inf_bits = 0x7F800000u, minus_inf_bits = 0xFF800000u;
  for (const auto* bytes : {&conv_int8(), &mixed_fp32()}) {
    for (uint32_t bits : {nan_bits, inf_bits, minus_inf_bits}) {
      Runner r(*bytes);
      ASSERT_TRUE(r.ok());
      r.set_input(0, Rng(4).floats(r.program().input(0).bytes / 4, -1, 1));
      ASSERT_EQ(r.run(), Error::kOk);
      const std::vector<float> before = r.output(0);
      uint8_t* input = r.session().input_buffer(0).value().data;
      std::memcpy(input + r.program().input(0).bytes - 4, &bits, 4);  // the last value
      EXPECT_EQ(r.run(), Error::kNonFiniteInput);
      EXPECT_EQ(r.session().run_op(0), Error::kNonFiniteInput);
      EXPECT_EQ(r.output(0), before) << "no op ran";
      const float largest = 3.4028235e38f;  // finite, however large
      std::memcpy(input + r.program().input(0).bytes - 4, &largest, 4);
      EXPECT_EQ(r.run(), Error::kOk);
    }
  }
  // int8 inputs have no NaN: every byte is a value.
  static const std::vector<uint8_t> int8_io = compile_int8(conv_relu_pool_linear_graph(), 1, 8, true);
  Runner r(int8_io);
  ASSERT_TRUE(r.ok());
  auto input = r.session().input_buffer(0).value();
  std::memset(input.data, 0xFF, input.size);
  EXPECT_EQ(r.run(), Error::kOk);
}

TEST(Verifier, StructuralFuzz) {
  // Reference-kernel programs, and the same models compiled for an MVE core (tier kernels and
  // their trailing constant inputs, where the compiler selects them).
  static const std::vector<uint8_t> mixed_int8_mve = compile_int8(mixed_graph(), 1, 8, false, "cortex-m55");
  static const std::vector<uint8_t> conv_int8_dsp = compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, "cortex-m4");
  // ...and the operator-coverage kernels (strided copy, LUT, reduce, argmax, transposed conv,
  // batch matmul, group norm, min/max/sub).
  static const std::vector<uint8_t> extended_int8 = compile_int8(extended_graph(), 1, 8);
  static const std::vector<uint8_t> extended_fp32 = compile_fp32(extended_graph());
  const std::vector<const std::vector<uint8_t>*> bases = {&mixed_int8(),    &mixed_fp32(),   &conv_int8(),
                                                          &tiny_int8(),     &mixed_int8_mve, &conv_int8_dsp,
                                                          &extended_int8, &extended_fp32};
  // Fixed seeds (each corrupts other fields) and one new seed per run, printed with its counts so
  // a failure can be replayed: MCUFLOW_FUZZ_SEED=<seed> (MCUFLOW_FUZZ_ITERATIONS runs longer).
  const char* env_iterations = std::getenv("MCUFLOW_FUZZ_ITERATIONS");
  const char* env_seed = std::getenv("MCUFLOW_FUZZ_SEED");
  const std::vector<uint32_t> seeds =
      env_seed ? std::vector<uint32_t>{uint32_t(std::strtoul(env_seed, nullptr, 10))}
               : std::vector<uint32_t>{20240607u, 1, 3, 4, 8, std::random_device{}()};
  const int kIterations = env_iterations ? std::atoi(env_iterations) : 1000;
  constexpr uint32_t kMaxArena = 32u << 20;
  for (const uint32_t seed : seeds) {
    Rng rng(seed);
    int loaded = 0, ran = 0, unchanged_loads = 0;
    std::map<Error, int> errors;
    for (int it = 0; it < kIterations; ++it) {
      const std::vector<uint8_t>& base = *bases[size_t(it) % bases.size()];
      AlignedBytes file(base);
      corrupt_randomly(file.data(), file.size(), rng);
      fix_crc(file);
      unchanged_loads += std::memcmp(file.data(), base.data(), base.size()) == 0;
      const std::vector<uint8_t> before(file.data(), file.data() + file.size());
      auto p = Program::load(file.cspan(), all_kernels());
      if (!p.ok()) {
        ASSERT_GE(int(p.error()), int(Error::kTruncated)) << it;
        const bool load_error = int(p.error()) <= int(Error::kBadAliasing) || p.error() == Error::kUndefinedRead;
        ASSERT_TRUE(load_error) << it << ": " << error_name(p.error());  // never a run or bind one
        ++errors[p.error()];
        continue;
      }
      ++loaded;
      const Program& program = p.value();
      uint64_t total = 0;
      for (uint32_t r = 0; r < program.region_count(); ++r) total += program.region_bytes(r);
      if (total > kMaxArena) continue;
      // One span per region, as the program states (bind refuses another count: kBadArgument);
      // whatever the program says, bind finds nothing more wrong with it than load did.
      std::vector<std::unique_ptr<GuardedArena>> arenas;
      std::vector<Span<uint8_t>> spans;
      for (uint32_t r = 0; r < program.region_count(); ++r) {
        arenas.push_back(std::make_unique<GuardedArena>(program.region_bytes(r)));
        spans.push_back(arenas.back()->span());
      }
      auto s = Session::bind(program, spans.data(), uint32_t(spans.size()));
      ASSERT_TRUE(s.ok()) << "seed " << seed << " iteration " << it << ": " << error_name(s.error());
      fill_inputs_randomly(program, s.value(), rng);
      ASSERT_EQ(s.value().run(), Error::kOk) << "seed " << seed << " iteration " << it;
      ++ran;
      for (const auto& a : arenas) ASSERT_TRUE(a->guards_intact()) << "seed " << seed << " iteration " << it << " wrote outside its arena";
      ASSERT_EQ(std::memcmp(before.data(), file.data(), file.size()), 0)
          << "seed " << seed << " iteration " << it << " wrote into the program";
    }
    std::string summary;
    for (const auto& [e, n] : errors) summary += std::string(error_name(e)) + "=" + std::to_string(n) + " ";
    std::printf("structural fuzz, seed %u: %d iterations, %d loaded (%d unchanged), %d ran; rejected: %s\n", seed,
                kIterations, loaded, unchanged_loads, ran, summary.c_str());
    // The corruptions must reach both sides: many rejections, and enough accepted programs run.
    EXPECT_GT(kIterations - loaded, kIterations / 4);
    EXPECT_GT(ran - unchanged_loads, kIterations / 10);
  }
}

}  // namespace
}  // namespace mcuflow
