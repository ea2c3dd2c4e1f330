// Clamp, int8, Armv6-M (kernels_scalar.h): four bytes per word, without a multiply or a branch.
//
// Byte lane v (signed) against a threshold T in [-127, 127]: v >= T iff u + c >= 256 with
// u = v + 128 (the byte with its top bit flipped) and c = 128 - T in [1, 255], i.e. iff adding c
// carries out of the byte. That carry is the majority of u's top bit (= not v's top bit), c's top
// bit (the same in every lane, so it picks the formula below once) and the carry into bit 7,
// which is bit 7 of (v & 0x7F) + (c & 0x7F) <= 0xFE, computed for all four lanes by one add that
// never carries between them. Lanes with the bit set become 0xFF by (bits << 1) - (bits >> 7)
// (each lane's 0x100 - 0x01; the top lane's 0x100 wraps away), and the clamp bound replaces
// the lanes it should: max(v, lo) keeps v where v >= lo, min(v, hi) takes hi where v >= hi + 1.
// Words are read and written in increasing order, each read before it is written; bytes before
// the first aligned word and after the last take the reference's per-byte clamp.
#include <cstdint>

#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {
namespace {

// int8 buffers read and written as words (the alias tells GCC they may be the same bytes).
using Word = uint32_t __attribute__((may_alias));
constexpr uint32_t kLanes = 0x01010101u;
constexpr uint32_t kTopBits = 0x80808080u;

// The lanes v >= threshold of a word, threshold in [-127, 127].
class AtLeast {
 public:
  explicit AtLeast(int32_t threshold)
      : c_low_(uint32_t((128 - threshold) & 0x7F) * kLanes), c_top_(128 - threshold >= 128) {}
  uint32_t operator()(uint32_t w) const {
    const uint32_t into_top = (w & ~kTopBits) + c_low_;
    const uint32_t carry = c_top_ ? (~w | into_top) : (into_top & ~w);
    const uint32_t bits = carry & kTopBits;
    return (bits << 1) - (bits >> 7);
  }

 private:
  uint32_t c_low_;
  bool c_top_;
};

template <bool kLow, bool kHigh>
void clamp_words(const Word* in, Word* out, Word* end, int32_t act_min, int32_t act_max) {
  const uint32_t lo = uint32_t(uint8_t(act_min)) * kLanes, hi = uint32_t(uint8_t(act_max)) * kLanes;
  const AtLeast at_least_lo(kLow ? act_min : 0), above_hi(kHigh ? act_max + 1 : 0);
  while (out != end) {
    uint32_t w = *in++;
    if (kLow) w = lo ^ ((w ^ lo) & at_least_lo(w));
    if (kHigh) w ^= (w ^ hi) & above_hi(w);
    *out++ = w;
  }
}

}  // namespace

void clamp_s8_scalar(const ClampParams& p, const int8_t* input, int8_t* output) {
  int32_t head = p.n;  // bytes before the first aligned word (all of them when the two differ)
  if (((uintptr_t(input) ^ uintptr_t(output)) & 3) == 0) {
    const int32_t to_aligned = int32_t(-uintptr_t(input) & 3);
    head = to_aligned < p.n ? to_aligned : p.n;
  }
  const int32_t words = (p.n - head) / 4, tail = head + 4 * words;
  for (int32_t i = 0; i < head; ++i) output[i] = int8_t(clamp_i32(input[i], p.act_min, p.act_max));
  const auto* in = reinterpret_cast<const Word*>(input + head);
  auto* out = reinterpret_cast<Word*>(output + head);
  const bool low = p.act_min > -128, high = p.act_max < 127;
  if (low && high) {
    clamp_words<true, true>(in, out, out + words, p.act_min, p.act_max);
  } else if (low) {
    clamp_words<true, false>(in, out, out + words, p.act_min, p.act_max);
  } else if (high) {
    clamp_words<false, true>(in, out, out + words, p.act_min, p.act_max);
  } else {
    clamp_words<false, false>(in, out, out + words, p.act_min, p.act_max);
  }
  for (int32_t i = tail; i < p.n; ++i) output[i] = int8_t(clamp_i32(input[i], p.act_min, p.act_max));
}

}  // namespace mcuflow::kernels
