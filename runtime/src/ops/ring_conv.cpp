// Adapters for ring_conv_s8 / ring_conv_f32 and ring_dwconv_s8 / ring_dwconv_f32: a convolution
// whose window is the ring state (output 1) the op appends its input frames to, the ring's head
// a one-element int32 state (output 2).
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using format::Storage;
using kernels::RingConvParams;
using kernels::RingDwConvParams;
using kernels::RingParams;

// The ring holds `slots` frames twice over and the window is `slots` frames; the run's frames
// are fewer than the window (the rest is history) and fill the input.
template <typename P>
Error check_ring(const OpCheck& c, const P& p, bool quantized) {
  const RingParams& r = p.ring;
  const DType act = quantized ? DType::kInt8 : DType::kFloat32;
  if (!positive(r.frame_elements) || !positive(r.frames) || !positive(r.slots) || r.frames >= r.slots)
    return Error::kBadParams;
  const uint64_t window = uint64_t(p.conv.in_h) * p.conv.in_w * p.conv.in_c;
  if (window != uint64_t(r.slots) * uint64_t(r.frame_elements)) return Error::kBadParams;
  const format::TensorRecord& ring = output(c, 1);
  const format::TensorRecord& head = output(c, 2);
  if (ring.storage != Storage::kState || ring.dtype != act || elements(ring) != 2 * window) return Error::kBadParams;
  if (head.storage != Storage::kState || head.dtype != DType::kInt32 || elements(head) != 1) return Error::kBadParams;
  if (quantized && (ring.scale != c.tensor(0).scale || ring.zero_point != c.tensor(0).zero_point))
    return Error::kBadParams;  // the ring stores the frames as they come
  return Error::kOk;
}

template <bool kQuantized>
Error check_ring_conv(const OpCheck& c) {
  const auto& p = c.get_params<RingConvParams>();
  const Error e = check_ring(c, p, kQuantized);
  return e != Error::kOk ? e : check_conv_input(c, kQuantized, uint64_t(p.ring.frames) * p.ring.frame_elements);
}

template <bool kQuantized>
Error check_ring_dwconv(const OpCheck& c) {
  const auto& p = c.get_params<RingDwConvParams>();
  const Error e = check_ring(c, p, kQuantized);
  return e != Error::kOk ? e : check_dwconv_input(c, kQuantized, uint64_t(p.ring.frames) * p.ring.frame_elements);
}

void eval_ring_conv_s8(const OpCall& c) {
  kernels::ring_conv_s8(c.get_params<RingConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                        c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0), c.out<int8_t>(1), c.out<int32_t>(2));
}
void eval_ring_dwconv_s8(const OpCall& c) {
  kernels::ring_dwconv_s8(c.get_params<RingDwConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                          c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0), c.out<int8_t>(1), c.out<int32_t>(2));
}
void eval_ring_conv_f32(const OpCall& c) {
  kernels::ring_conv_f32(c.get_params<RingConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                         c.out<float>(0), c.out<float>(1), c.out<int32_t>(2));
}
void eval_ring_dwconv_f32(const OpCall& c) {
  kernels::ring_dwconv_f32(c.get_params<RingDwConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                           c.out<float>(0), c.out<float>(1), c.out<int32_t>(2));
}

}  // namespace

// The output never shares the input's bytes (no access contract): the frames are read while
// the window, which holds their copies, is convolved.
extern const KernelEntry kernel_entry_ring_conv_s8 = {sizeof(RingConvParams), 5, 3, check_ring_conv<true>,
                                                      eval_ring_conv_s8};
extern const KernelEntry kernel_entry_ring_dwconv_s8 = {sizeof(RingDwConvParams), 5, 3, check_ring_dwconv<true>,
                                                        eval_ring_dwconv_s8};
extern const KernelEntry kernel_entry_ring_conv_f32 = {sizeof(RingConvParams), 3, 3, check_ring_conv<false>,
                                                       eval_ring_conv_f32};
extern const KernelEntry kernel_entry_ring_dwconv_f32 = {sizeof(RingDwConvParams), 3, 3, check_ring_dwconv<false>,
                                                         eval_ring_dwconv_f32};

}  // namespace mcuflow::ops
