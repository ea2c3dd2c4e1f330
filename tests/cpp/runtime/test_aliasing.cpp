// The aliasing contracts (mcuflow/runtime/aliasing.h) as Program::load enforces them: an op's
// output may share bytes with its input only where the kernel still computes its
// separate-buffer result. Every op of several programs is moved over its input byte by byte;
// each placement the verifier accepts must give the separate-buffer output, and the
// placements that host and board kernels would compute differently are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "../test_programs.h"
#include "mcuflow/runtime/aliasing.h"

namespace mcuflow {
namespace {

using format::DType;
using format::Storage;
using namespace tp;

// The contract the kernel list states for `kernel`, as the verifier and the planner read it.
aliasing::Contract contract_of(uint16_t kernel) { return all_kernels().entries[kernel]->access; }

// Moves op `op`'s output to `offset` in region 0, CRC fixed.
AlignedBytes with_output_at(const std::vector<uint8_t>& base, uint32_t op, uint32_t offset) {
  AlignedBytes f(base);
  const auto& rec = op_record(f.data(), op);
  tensor_record(f.data(), rec.tensors[rec.input_count]).offset = offset;
  fix_crc(f);
  return f;
}

// Float inputs stay finite (a random bit pattern may be NaN, which Session refuses at op 0).
std::vector<uint8_t> random_input(const format::TensorRecord& t, Rng& rng) {
  std::vector<uint8_t> bytes(t.bytes);
  if (t.dtype == DType::kFloat32) {
    for (uint32_t i = 0; i < t.bytes; i += 4) {
      const float v = float(rng.uniform(-2, 2));
      std::memcpy(&bytes[i], &v, 4);
    }
  } else {
    for (auto& b : bytes) b = uint8_t(rng.uniform_int(0, 255));
  }
  return bytes;
}

// Runs op `op` alone on `inputs` (bytes per input slot; empty: not in the arena) and returns its
// output bytes. The output holds zeros before (a cat slice writes only its part of it), then the
// inputs are written: where the output overlaps one, the input's bytes are there.
std::vector<uint8_t> run_alone(const AlignedBytes& file, uint32_t op, const std::vector<std::vector<uint8_t>>& inputs) {
  auto p = Program::load(file.cspan(), all_kernels());
  EXPECT_TRUE(p.ok());
  GuardedArena arena(p.value().arena_bytes());
  Rng rng(99);
  for (size_t i = 0; i < arena.size(); ++i) arena.data()[i] = uint8_t(rng.uniform_int(0, 255));
  auto s = Session::bind(p.value(), arena.span());
  const auto& rec = op_record(const_cast<uint8_t*>(file.cspan().data), op);
  const auto out = s.value().tensor_buffer(rec.tensors[rec.input_count]).value();
  std::memset(out.data, 0, out.size);
  for (uint32_t slot = 0; slot < inputs.size(); ++slot) {
    if (!inputs[slot].empty())
      std::memcpy(s.value().tensor_buffer(rec.tensors[slot]).value().data, inputs[slot].data(), inputs[slot].size());
  }
  EXPECT_EQ(s.value().run_op(op), Error::kOk);
  EXPECT_TRUE(arena.guards_intact());
  return std::vector<uint8_t>(out.data, out.data + out.size);
}

struct Sweep {
  int accepted_overlaps = 0, refused = 0;
};

// Every output placement from entirely below to entirely above input `slot` of op `op`.
Sweep sweep_op(const std::vector<uint8_t>& base, uint32_t op, uint32_t slot) {
  AlignedBytes probe(base);
  const auto rec = op_record(probe.data(), op);
  const auto in = tensor_record(probe.data(), rec.tensors[slot]);
  const auto out = tensor_record(probe.data(), rec.tensors[rec.input_count]);
  const uint32_t arena = header(probe.data()).arena_bytes, align = format::element_bytes(out.dtype);
  Rng rng(op * 7 + slot);
  std::vector<std::vector<uint8_t>> inputs(rec.input_count);
  for (uint32_t s = 0; s < rec.input_count; ++s) {
    const auto t = tensor_record(probe.data(), rec.tensors[s]);
    if (t.storage == Storage::kArena) inputs[s] = random_input(t, rng);
  }
  // The separate-buffer output: the output where it touches none of the op's arena inputs.
  auto touches_an_input = [&](uint32_t o) {
    for (uint32_t s = 0; s < rec.input_count; ++s) {
      const auto t = tensor_record(probe.data(), rec.tensors[s]);
      if (t.storage == Storage::kArena && o < t.offset + t.bytes && t.offset < o + out.bytes) return true;
    }
    return false;
  };
  std::vector<uint8_t> expected;
  for (uint32_t o = 0; o + out.bytes <= arena && expected.empty(); o += 16) {
    if (touches_an_input(o)) continue;
    const AlignedBytes f = with_output_at(base, op, o);
    if (Program::load(f.cspan(), all_kernels()).ok()) expected = run_alone(f, op, inputs);
  }
  Sweep sweep;
  if (expected.empty()) return sweep;  // no room beside the inputs in this arena
  const int64_t lo = (int64_t(in.offset) - out.bytes + align) / align * align, hi = int64_t(in.offset) + in.bytes - 1;
  const int64_t step = std::max<int64_t>(align, (hi - lo) / 160 / align * align);
  for (int64_t o = lo; o <= hi; o += step) {
    if (o < 0 || o + out.bytes > arena) continue;
    const AlignedBytes f = with_output_at(base, op, uint32_t(o));
    const Error e = Program::load(f.cspan(), all_kernels()).error();
    if (e == Error::kBadAliasing) {
      ++sweep.refused;
      continue;
    }
    EXPECT_EQ(e, Error::kOk) << "op " << op << " output at " << o;
    if (e != Error::kOk) continue;
    ++sweep.accepted_overlaps;
    EXPECT_NE(contract_of(rec.kernel).walk, aliasing::Walk::kNone)
        << "op " << op << " (kernel " << rec.kernel << ") slot " << slot << " output at " << o << " input at " << in.offset;
    EXPECT_EQ(run_alone(f, op, inputs), expected)
        << "op " << op << " (kernel " << rec.kernel << ") accepted with its output at " << o << ", input at "
        << in.offset << ", and computed something else";
  }
  return sweep;
}

const std::vector<std::vector<uint8_t>>& programs() {
  static const std::vector<std::vector<uint8_t>> p = {
      compile_int8(mixed_graph()),
      compile_int8(conv_relu_pool_linear_graph()),
      compile_fp32(mixed_graph()),
      compile_int8(mixed_graph(), 1, 8, false, "cortex-m55"),
      compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, "cortex-m4"),
      compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, "cortex-m0"),
      compile_int8(extended_graph(), 1, 8),
  };
  return p;
}

// On the host every kernel id runs its reference: what the verifier accepts must be what the
// reference computes from separate buffers (the tier kernels are held to the same placements on
// the boards: tests/firmware/test_window_kernels_in_place.py and the in-place cases of the
// element-wise, pool and softmax kernel tests).
TEST(Aliasing, EveryAcceptedOverlapComputesTheSeparateBufferResult) {
  std::map<aliasing::Walk, int> accepted;
  int refused = 0;
  for (const auto& base : programs()) {
    AlignedBytes probe(base);
    for (uint32_t op = 0; op < header(probe.data()).op_count; ++op) {
      const auto rec = op_record(probe.data(), op);
      if (rec.output_count != 1) continue;
      for (uint32_t slot = 0; slot < rec.input_count; ++slot) {
        if (tensor_record(probe.data(), rec.tensors[slot]).storage != Storage::kArena) continue;
        if (rec.kernel == uint16_t(KernelId::read_input_rows)) continue;
        const Sweep s = sweep_op(base, op, slot);
        accepted[contract_of(rec.kernel).walk] += s.accepted_overlaps;
        refused += s.refused;
      }
    }
  }
  // Every kind of in-place walk was exercised, and overlaps of every kernel were refused.
  EXPECT_GT(accepted[aliasing::Walk::kElementwise], 0);
  EXPECT_GT(accepted[aliasing::Walk::kForward], 0);
  EXPECT_GT(accepted[aliasing::Walk::kBothWays], 0);
  EXPECT_GT(accepted[aliasing::Walk::kExactlyInPlace], 0);
  EXPECT_EQ(accepted[aliasing::Walk::kNone], 0);
  EXPECT_GT(refused, 100);
}

int find_kernel(const std::vector<uint8_t>& bytes, KernelId k) {
  AlignedBytes probe(bytes);
  return find_op(probe.data(), k);
}

// Found by the bit-flip campaign: the dequantize output moved to overlap the end of its own input. The reference writes
// float i over input bytes 4i..4i+3 one at a time, the MVE kernel four floats at a time: host and
// board computed different floats. Only an output that ends where the input does (or lower) is
// allowed: each float is then written after the input bytes under it were read.
TEST(Aliasing, DequantizeOverlappingItsInputIsRefused) {
  Builder b;
  Rng rng(3);
  const int x = b.input("x", {1, 8});
  const int w = b.random_constant("w", {32, 8}, rng);
  const int bias = b.random_constant("b", {32}, rng, -0.1, 0.1);
  b.outputs({b.linear(x, w, bias)});
  for (const char* target : {"reference", "cortex-m55"}) {
    const std::vector<uint8_t> base = compile_int8(b.g, 1, 8, false, target);
    const KernelId kernel = std::string(target) == "reference" ? KernelId::dequantize_s8_f32 : KernelId::dequantize_s8_f32_mve;
    const int op = find_kernel(base, kernel);
    ASSERT_GE(op, 0) << target;
    AlignedBytes probe(base);
    const auto rec = op_record(probe.data(), uint32_t(op));
    const auto in = tensor_record(probe.data(), rec.tensors[0]);
    const uint32_t n = in.bytes;  // int8 elements; the output is 4n bytes
    ASSERT_EQ(n, 32u);
    auto placed = [&](int64_t in_offset, int64_t out_offset) {
      AlignedBytes f(base);
      header(f.data()).arena_bytes = 1024;
      tensor_record(f.data(), rec.tensors[0]).offset = uint32_t(in_offset);
      tensor_record(f.data(), rec.tensors[1]).offset = uint32_t(out_offset);
      fix_crc(f);
      return Program::load(f.cspan(), all_kernels()).error();
    };
    const int64_t input_at = 512;
    EXPECT_EQ(placed(input_at, input_at - 3 * n), Error::kOk) << target << ": ends where the input ends";
    EXPECT_EQ(placed(input_at, input_at - 3 * n - 4), Error::kOk) << target;
    EXPECT_EQ(placed(input_at, input_at - 4 * n), Error::kOk) << target << ": just below";
    EXPECT_EQ(placed(input_at, input_at - 3 * n + 4), Error::kBadAliasing) << target;
    EXPECT_EQ(placed(input_at, input_at), Error::kBadAliasing) << target;
    EXPECT_EQ(placed(input_at, input_at - 4 * n + 4 * (n / 2)), Error::kBadAliasing) << target;
    EXPECT_EQ(placed(input_at, input_at + n), Error::kOk) << target << ": just above";
    EXPECT_EQ(placed(input_at, input_at + 16), Error::kBadAliasing) << target;
  }
}

// A forward-only tier kernel (conv_s8_mve) with its output above its input: its reference, which
// the host runs in its place, walks backwards there and gets it right; the MVE kernel walks
// forwards and overwrites input rows it still needs. Refused; the same placement of the
// reference conv_s8 (both ways) is accepted.
TEST(Aliasing, ForwardOnlyTierKernelsRefuseOutputsAboveTheirInput) {
  Builder b;
  Rng rng(5);
  const int x = b.input("x", {1, 8, 6, 6});
  const int w = b.random_constant("w", {8, 8, 3, 3}, rng, -0.5, 0.5);
  const int bias = b.random_constant("b", {8}, rng, -0.1, 0.1);
  b.outputs({b.relu(b.conv(x, w, bias, 1, 1))});
  for (const char* target : {"reference", "cortex-m55"}) {
    const std::vector<uint8_t> base = compile_int8(b.g, 1, 8, true, target);
    AlignedBytes probe(base);
    int op = -1;
    for (uint32_t i = 0; i < header(probe.data()).op_count && op < 0; ++i) {
      if (reference_of(op_record(probe.data(), i).kernel) == KernelId::conv_s8) op = int(i);
    }
    ASSERT_GE(op, 0);
    const auto rec = op_record(probe.data(), uint32_t(op));
    const KernelId kernel = KernelId(rec.kernel);
    ASSERT_EQ(kernel, std::string(target) == "reference" ? KernelId::conv_s8 : KernelId::conv_s8_mve);
    const auto in = tensor_record(probe.data(), rec.tensors[0]);
    const int64_t above = aliasing::window_shift_above(
        aliasing::window_of(aliasing::Geometry::kConv, op_params(probe.data(), uint32_t(op))), 1);
    ASSERT_GT(above, 0);
    AlignedBytes f(base);
    header(f.data()).arena_bytes = 2048;
    tensor_record(f.data(), rec.tensors[0]).offset = 0;
    for (uint32_t s = 1; s < rec.input_count; ++s) {  // a scratch goes out of the way
      if (tensor_record(f.data(), rec.tensors[s]).storage == Storage::kArena) tensor_record(f.data(), rec.tensors[s]).offset = 1536;
    }
    tensor_record(f.data(), rec.tensors[rec.input_count]).offset = uint32_t((above + 15) / 16 * 16);
    ASSERT_LT(tensor_record(f.data(), rec.tensors[rec.input_count]).offset, in.bytes) << "the output overlaps";
    fix_crc(f);
    EXPECT_EQ(Program::load(f.cspan(), all_kernels()).error(),
              kernel == KernelId::conv_s8 ? Error::kOk : Error::kBadAliasing) << target;
  }
}

// A tier kernel's scratch is written by the board's kernel and never by the host's reference:
// it must share no byte with the op's input, output or other slots.
TEST(Aliasing, ScratchSharesNoByteWithTheOpsOtherTensors) {
  const std::vector<uint8_t> base = compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, "cortex-m55");
  AlignedBytes probe(base);
  int op = -1;
  for (uint32_t i = 0; i < header(probe.data()).op_count && op < 0; ++i) {
    const auto& r = op_record(probe.data(), i);
    if (r.kernel == uint16_t(KernelId::conv_s8_mve) || r.kernel == uint16_t(KernelId::conv_s8_1x1_mve)) op = int(i);
  }
  ASSERT_GE(op, 0);
  const auto rec = op_record(probe.data(), uint32_t(op));
  ASSERT_GT(rec.input_count, 6);
  ASSERT_EQ(tensor_record(probe.data(), rec.tensors[6]).storage, Storage::kArena);
  ASSERT_EQ(Program::load(probe.cspan(), all_kernels()).error(), Error::kOk);
  for (uint32_t onto : {0u, uint32_t(rec.input_count)}) {  // the input, the output
    AlignedBytes f(base);
    tensor_record(f.data(), rec.tensors[6]).offset = tensor_record(f.data(), rec.tensors[onto]).offset;
    fix_crc(f);
    EXPECT_EQ(Program::load(f.cspan(), all_kernels()).error(), Error::kBadAliasing) << "slot " << onto;
  }
}

// window_shift from its definition (aliasing.h), pixel by pixel and tap by tap: the lowest
// (forward) or highest (backward) input pixel any tap of the windows still to come touches.
int64_t window_shift_by_pixel(const aliasing::Window& w, bool above) {
  const int64_t pixels = int64_t(w.out_h) * w.out_w;
  int64_t unread = above ? 0 : int64_t(w.in_h) * w.in_w, shift = 0;
  for (int64_t k = 0; k < pixels; ++k) {
    const int64_t q = above ? k : pixels - 1 - k;
    const int64_t oy = q / w.out_w, ox = q % w.out_w;
    for (int64_t ty = 0; ty < w.k_h; ++ty) {
      for (int64_t tx = 0; tx < w.k_w; ++tx) {
        const int64_t iy = oy * w.stride_h - w.pad_top + ty * w.dil_h, ix = ox * w.stride_w - w.pad_left + tx * w.dil_w;
        if (iy < 0 || iy >= w.in_h || ix < 0 || ix >= w.in_w) continue;
        const int64_t pixel = iy * w.in_w + ix;
        unread = above ? std::max(unread, pixel + 1) : std::min(unread, pixel);
      }
    }
    shift = std::max(shift, above ? unread * w.in_c - q * w.out_c : (q + 1) * w.out_c - unread * w.in_c);
  }
  return shift;
}

// The verifier's window_shift visits rows and columns, not pixels: it must give the per-pixel
// result for every geometry, dilation and padding beyond the kernel included (windows all in
// padding, first taps that move back as the window moves on).
TEST(Aliasing, WindowShiftEqualsItsPixelByPixelDefinition) {
  int compared = 0;
  for (int32_t in_h : {1, 3, 6}) for (int32_t in_w : {1, 2, 5}) for (int32_t k : {1, 2, 3})
  for (int32_t stride : {1, 2, 3}) for (int32_t pad : {0, 1, 3}) for (int32_t dil : {1, 2})
  for (int32_t extra : {-1, 0, 1}) for (int32_t in_c : {1, 3}) for (int32_t out_c : {1, 2, 4}) {
    const int32_t out_h = (in_h + 2 * pad - dil * (k - 1) - 1) / stride + 1 + extra;
    const int32_t out_w = (in_w + pad - dil * (k - 1) - 1) / stride + 1;  // padding on the left only
    if (out_h < 1 || out_w < 1) continue;
    // Rows and columns of different kernels, strides and dilations.
    const aliasing::Window w{in_h, in_w, in_c, out_h, out_w, out_c, k, 4 - k, stride, 4 - stride, pad, (pad + 1) % 3,
                             dil, 3 - dil};
    for (bool above : {false, true}) {
      for (uint32_t element : {1u, 4u}) {
        ASSERT_EQ(aliasing::window_shift(w, element, above), window_shift_by_pixel(w, above) * element)
            << "in " << in_h << "x" << in_w << "x" << in_c << " out " << out_h << "x" << out_w << "x" << out_c
            << " k " << k << " stride " << stride << " pad " << pad << " dil " << dil << (above ? " above" : " below");
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

// The host runs a tier kernel's reference in its place: a placement the tier kernel's contract
// allows must be one its reference computes right too (same geometry, a walk the reference's
// allows), else host and board would differ.
TEST(Aliasing, TierContractsAreNoLooserThanTheirReferences) {
  auto allows = [](aliasing::Walk reference, aliasing::Walk tier) {
    return tier == aliasing::Walk::kNone || tier == reference ||
           (tier == aliasing::Walk::kForward && reference == aliasing::Walk::kBothWays);
  };
  int checked = 0;
#define MCUFLOW_CHECK_TIER_CONTRACT(name, id, reference)                                               \
  {                                                                                                    \
    const aliasing::Contract tier = contract_of(id), ref = contract_of(uint16_t(KernelId::reference)); \
    EXPECT_TRUE(allows(ref.walk, tier.walk)) << #name << " walks more ways than " << #reference;       \
    if (tier.walk != aliasing::Walk::kNone) EXPECT_EQ(tier.geometry, ref.geometry) << #name;           \
    ++checked;                                                                                         \
  }
  MCUFLOW_TIER_KERNELS(MCUFLOW_CHECK_TIER_CONTRACT)
#undef MCUFLOW_CHECK_TIER_CONTRACT
  EXPECT_GT(checked, 30);
}

// A window contract's geometry names the params the verifier reads the window from: the entry
// must take exactly those params; a walk without windows has no geometry.
TEST(Aliasing, ContractGeometryMatchesTheKernelsParams) {
  const KernelTable kernels = all_kernels();
  int windows = 0;
  for (uint16_t id = 0; id < kernels.count; ++id) {
    if (kernels.entries[id] == nullptr) continue;
    const KernelEntry& k = *kernels.entries[id];
    const bool window = k.access.walk == aliasing::Walk::kForward || k.access.walk == aliasing::Walk::kBothWays;
    EXPECT_EQ(window, k.access.geometry != aliasing::Geometry::kNone) << "kernel " << id;
    if (k.access.walk == aliasing::Walk::kOntoSource)
      EXPECT_TRUE(k.params_bytes == sizeof(kernels::StridedCopyParams) ||
                  k.params_bytes == sizeof(kernels::ConcatSliceParams))
          << "kernel " << id;
    if (!window) continue;
    ++windows;
    const uint32_t expected = k.access.geometry == aliasing::Geometry::kConv     ? sizeof(kernels::ConvParams)
                              : k.access.geometry == aliasing::Geometry::kDwConv ? sizeof(kernels::DwConvParams)
                                                                                 : sizeof(kernels::PoolParams);
    EXPECT_EQ(k.params_bytes, expected) << "kernel " << id;
  }
  EXPECT_GT(windows, 20);
}

}  // namespace
}  // namespace mcuflow
