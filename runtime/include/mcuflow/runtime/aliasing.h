// Each kernel's aliasing contract: how its output may overlap one of its inputs and still equal
// the output it computes from separate buffers. The verifier (Program::load) refuses every other
// overlap, on the host and on a board alike; the planner (compiler/src/planner.cpp) places
// outputs over dying inputs only as the contract allows (docs/memory_planning.md).
//
// The host runs a tier kernel's reference in its place, so a tier kernel's contract allows only
// overlaps under which both kernels give their separate-buffer result: then host and board agree.
#pragma once
#include <cstdint>

#include "mcuflow/runtime/kernel_id.h"

namespace mcuflow::aliasing {

enum class Walk : uint8_t {
  kNone,         // output and inputs share no byte
  kElementwise,  // elements (or steps of them) read before written, forwards: the output may
                 // start where an input of as many elements does, lower by the bytes it is wider
  kForward,      // raster-order window kernel walking forwards only: the output starts at least
                 // window_shift_below below input 0
  kBothWays,     // also backwards when its output starts above input 0 (kernels/reference/
                 // raster_order.h), then at least window_shift_above above it
  kOntoSource,   // a copy (one-block strided copy, cat slice of one row) exactly onto its source
  kExactlyInPlace,  // element i read before it is written, but elements after i read after it was
                    // (a normalization: a group's statistics first, then its outputs): the output
                    // may share bytes with its input only by lying exactly on it
};

enum class Geometry : uint8_t { kNone, kConv, kDwConv, kPool };  // the params of a window kernel

// A kernel's contract is stated once, in its entry of the kernel list (KernelEntry::access, read
// by the verifier and, through all_kernels(), by the planner), after its access order was read in
// its source. Two bytes: they sit in the entry's padding.
struct Contract {
  Walk walk;
  Geometry geometry;
  friend constexpr bool operator==(Contract a, Contract b) { return a.walk == b.walk && a.geometry == b.geometry; }
};

inline constexpr Contract kNoSharing{Walk::kNone, Geometry::kNone};
inline constexpr Contract kElementwise{Walk::kElementwise, Geometry::kNone};
inline constexpr Contract kOntoSource{Walk::kOntoSource, Geometry::kNone};
inline constexpr Contract kExactlyInPlace{Walk::kExactlyInPlace, Geometry::kNone};
inline constexpr Contract kConvForward{Walk::kForward, Geometry::kConv};
inline constexpr Contract kConvBothWays{Walk::kBothWays, Geometry::kConv};
inline constexpr Contract kDwConvForward{Walk::kForward, Geometry::kDwConv};
inline constexpr Contract kDwConvBothWays{Walk::kBothWays, Geometry::kDwConv};
inline constexpr Contract kPoolForward{Walk::kForward, Geometry::kPool};

// The geometry of a raster-order kernel: output pixels (all channels each) in row-major order,
// each reading the input pixels of its window.
struct Window {
  int32_t in_h, in_w, in_c, out_h, out_w, out_c;
  int32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
};

// `params`: the kernel's ConvParams, DwConvParams or PoolParams (by `g`, which is not kNone).
Window window_of(Geometry g, const void* params);

// Bytes the output of a forward walk must start below the input: while output pixel q is
// written, the kernel may still read any input pixel from first_unread(q) = min over q' >= q of
// the first pixel of q''s window, so all output bytes up to the end of pixel q lie below input
// byte first_unread(q) * in_c: max over q of (q + 1) * out_c - first_unread(q) * in_c elements.
// Windows of more than kMaxWindowElements input or output elements never overlap (kNever, more
// bytes than any region).
constexpr int64_t kMaxWindowElements = 1 << 24, kNever = INT32_MAX;
int64_t window_shift(const Window& w, uint32_t element_bytes, bool above);
inline int64_t window_shift_below(const Window& w, uint32_t element_bytes) {
  return window_shift(w, element_bytes, false);
}

// Bytes the output of a backward walk must start above the input: while output pixel q is
// written, the kernel may still read any input pixel up to last_unread(q) = max over q' <= q of
// the end of q''s window, and the output from pixel q on starts q * out_c elements above its
// start: max over q of last_unread(q) * in_c - q * out_c elements.
inline int64_t window_shift_above(const Window& w, uint32_t element_bytes) {
  return window_shift(w, element_bytes, true);
}

// Bytes an element-wise output of as many elements as its input must start below it: element i
// is written to [i * out_element, (i + 1) * out_element) after the input up to (i + 1) *
// in_element was read, so it may start where the input does unless its elements are wider.
inline int64_t elementwise_shift(uint32_t in_bytes, uint32_t out_bytes) {
  return out_bytes > in_bytes ? int64_t(out_bytes) - in_bytes : 0;
}

// A copy kernel (Walk::kOntoSource) whose every element lands on the byte it is read from when
// its output starts `*output_minus_input` bytes after its input: a strided copy of one contiguous
// block of its input (no stepping, no fill), lying inside the input at the block's offset, or a
// cat slice of one row (outer 1), its input lying inside the output at the slice's offset. False
// for other params. `params` are the kernel's StridedCopyParams or ConcatSliceParams, which
// count the kernel's own units (bytes for the _b8 and _s8 kernels, which move int16 tensors as
// byte pairs, 4 bytes otherwise).
bool onto_source_shift(KernelId k, const void* params, int64_t* output_minus_input);

// Whether the output of a window kernel (Walk::kForward, kBothWays) or a copy (kOntoSource)
// starting `output_minus_input` bytes from its input 0 keeps its separate-buffer result: the
// window leads above for a window kernel (input and output of one dtype, `in_element` bytes
// each), onto_source_shift for a copy. The verifier reaches it through the kernel's entry
// (KernelEntry::placement): a firmware without such a kernel links none of the geometry above.
bool placement_allowed(Contract c, KernelId kernel, const void* params, uint32_t in_element, bool same_dtype,
                       int64_t output_minus_input);
using PlacementRule = decltype(&placement_allowed);
constexpr PlacementRule placement_rule(Contract c) {
  return c.walk == Walk::kForward || c.walk == Walk::kBothWays || c.walk == Walk::kOntoSource ? &placement_allowed
                                                                                                : nullptr;
}

}  // namespace mcuflow::aliasing
