"""MVE (Helium) kernels on qemu-m55, bit for bit against the reference kernels the host runs.

Each family (1x1 conv, general conv, depthwise conv, linear, add, average pool) is one program
of many differently shaped single layers side by side (odd channel counts, tails, strides,
paddings, dilations, broadcasts, fused activations), int8 in and out, compiled for cortex-m55:
one firmware build and one QEMU run per family. Every layer must have been given its MVE kernel, and every output
of every random input must equal the host's. The requantization helper is also checked alone
on edge cases (ties, saturation, every shift) by a small firmware.

MCUFLOW_LARGE_SWEEP=1 adds a family of randomly drawn shapes and more samples.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import crossbuild, device, qemu  # noqa: E402
from fwutil import REPO, SideBySide, rejected_on_host_sent_to_board, requires_cross  # noqa: E402
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

BOARD = "qemu-m55"
LARGE_SWEEP = os.environ.get("MCUFLOW_LARGE_SWEEP") == "1"
SAMPLES = 24 if LARGE_SWEEP else 6


# --- layer families -------------------------------------------------------------------------
# Each case: (description, module, input shapes). Activations after a layer are fused into it.

def conv(cin, cout, hw, k, stride=1, pad=0, dil=1, act=None, bias=True):
    layer = nn.Conv2d(cin, cout, k, stride=stride, padding=pad, dilation=dil, bias=bias)
    desc = f"conv {cin}->{cout} {hw} k={k} s={stride} p={pad} d={dil}{' ' + act.__name__ if act else ''}"
    return desc, nn.Sequential(layer, act()) if act else layer, [(1, cin) + tuple(hw)]


def dwconv(c, hw, k, stride=1, pad=0, dil=1, act=None):
    layer = nn.Conv2d(c, c, k, stride=stride, padding=pad, dilation=dil, groups=c)
    desc = f"dwconv {c} {hw} k={k} s={stride} p={pad} d={dil}{' ' + act.__name__ if act else ''}"
    return desc, nn.Sequential(layer, act()) if act else layer, [(1, c) + tuple(hw)]


def linear(rows, cin, cout, act=None):
    layer = nn.Linear(cin, cout)
    shape = (1, cin) if rows == 1 else (1, rows, cin)
    desc = f"linear {rows}x{cin}->{cout}{' ' + act.__name__ if act else ''}"
    return desc, nn.Sequential(layer, act()) if act else layer, [shape]


class Add(nn.Module):
    """x + y: y a second input, a constant per channel, or a scalar."""

    def __init__(self, shape, other, relu):
        super().__init__()
        self.relu = relu
        if other == "channel":
            self.register_buffer("y", torch.randn(1, shape[1], 1, 1) * 2)
        elif other == "scalar":
            self.y = 0.75
        else:
            self.y = None

    def forward(self, x, y=None):
        out = x + (self.y if y is None else y)
        return torch.relu(out) if self.relu else out


def add(shape, other="input", relu=False, other_shape=None):
    """other: "input" (same shape, or other_shape to broadcast), "channel" or "scalar" constant."""
    shapes = [shape] + ([other_shape or shape] if other == "input" else [])
    desc = f"add {shape} + {other} {other_shape or ''}{' relu' if relu else ''}"
    return desc, Add(shape, other, relu), shapes


def avgpool(c, hw, k, stride=None, pad=0):
    layer = nn.AvgPool2d(k, stride=stride, padding=pad, count_include_pad=False)
    return f"avgpool {c} {hw} k={k} s={stride} p={pad}", layer, [(1, c) + tuple(hw)]


def families():
    torch.manual_seed(0)
    return {
        "conv_s8_1x1_mve": [
            conv(1, 1, (3, 3), 1), conv(3, 5, (4, 5), 1), conv(16, 4, (3, 3), 1, act=nn.ReLU),
            conv(17, 3, (5, 4), 1), conv(31, 7, (3, 5), 1, stride=2), conv(64, 64, (5, 5), 1),
            conv(65, 13, (3, 4), 1, act=nn.ReLU6), conv(128, 9, (2, 3), 1), conv(130, 6, (3, 3), 1, stride=2),
            conv(48, 33, (4, 4), 1, stride=3), conv(8, 12, (7, 3), 1, stride=(2, 1), bias=False),
            conv(15, 2, (1, 1), 1), conv(33, 5, (3, 2), 1, act=nn.ReLU),
            conv(3, 257, (3, 3), 1),  # a last block of one channel, an odd pixel count, chunks past depth
        ],
        "conv_s8_mve": [
            conv(1, 64, (49, 10), (10, 4), stride=2, pad=(5, 1)),  # DS-CNN's first layer
            conv(3, 5, (9, 9), 3, pad=1), conv(16, 32, (12, 12), 3, pad=1, act=nn.ReLU),
            conv(5, 7, (8, 11), (2, 3)), conv(17, 9, (9, 7), 5, stride=2, pad=2),
            conv(4, 6, (10, 10), 3, pad=2, dil=2), conv(2, 3, (6, 6), 3, stride=3),
            conv(33, 17, (5, 5), 3, pad=1, act=nn.ReLU6), conv(8, 8, (6, 6), 1, pad=1),
            conv(1, 1, (5, 5), 3, stride=2, pad=1), conv(7, 1, (6, 5), (3, 1), pad=(1, 0)),
            conv(3, 4, (3, 3), 2, pad=3), conv(6, 10, (7, 9), (3, 5), stride=(1, 2), pad=(0, 2), dil=(2, 1)),
        ],
        "dwconv_s8_mve": [
            dwconv(64, (25, 5), 3, pad=1, act=nn.ReLU),  # DS-CNN's depthwise layers
            dwconv(2, (5, 5), 3, pad=1), dwconv(7, (6, 6), 3, pad=1), dwconv(16, (5, 4), 3, stride=2, pad=1),
            dwconv(17, (7, 7), 3), dwconv(33, (6, 5), 5, pad=2), dwconv(24, (9, 9), 3, stride=2, pad=1, dil=2),
            dwconv(20, (8, 6), (3, 1), pad=(1, 0)), dwconv(5, (4, 4), 2), dwconv(48, (3, 3), 3, pad=2),
            dwconv(3, (10, 10), 7, stride=3, pad=3, act=nn.ReLU6), dwconv(31, (4, 7), (1, 3), pad=(0, 1)),
            dwconv(35, (6, 6), 3, pad=1, act=nn.ReLU6), dwconv(32, (4, 9), 3, stride=2, pad=1, act=nn.ReLU),
            # 3x3 windows as runs of pixels (dilation, stride 2, a clamp, no padding, partial blocks
            # of 8 channels alone and after whole ones)
            dwconv(32, (9, 9), 3, stride=2, pad=2, dil=2), dwconv(16, (6, 7), 3, pad=1, act=nn.ReLU6),
            dwconv(48, (5, 6), 3, stride=(1, 2)), dwconv(8, (12, 12), 3, pad=1), dwconv(8, (9, 10), 3, stride=2, pad=1),
            dwconv(24, (7, 5), 3, pad=1, act=nn.ReLU6),
            # 2, 4 and 8 channels: 8, 4 and 2 pixels a pass, a pixel left over after the passes
            dwconv(4, (6, 11), 3, pad=1), dwconv(2, (5, 19), 3, pad=1, act=nn.ReLU6),
            dwconv(8, (7, 12), 3, stride=(2, 1), pad=(1, 2), dil=(1, 2)),
        ],
        "add_s8_mve": [
            add((1, 16, 8, 8)), add((1, 3, 5, 7)), add((1, 1, 1, 1)), add((1, 32, 4, 4), relu=True),
            add((1, 17, 3, 5), other="channel"), add((1, 64, 2, 3), other="channel", relu=True),
            add((1, 5, 4, 4), other="scalar"), add((1, 13, 6, 6), other="input", other_shape=(1, 13, 1, 1)),
            add((1, 7, 9), other="input"),
        ],
        "avgpool_s8_mve": [
            # Windows of nearly the whole image: a whole-image average of these random inputs has an
            # output range over 4x narrower, so it gets a spec of its own and reduce_s8 (docs/quantization.md).
            avgpool(64, (25, 5), (24, 5), stride=1),  # DS-CNN's pool window
            avgpool(16, (8, 8), 2), avgpool(5, (7, 6), 3, stride=2, pad=1), avgpool(17, (5, 5), 3, stride=1, pad=1),
            avgpool(3, (20, 20), (19, 20), stride=1), avgpool(33, (6, 4), (2, 3), stride=(2, 1)),
            avgpool(1, (3, 3), (2, 3), stride=1),
        ],
        "fc_s8_mve": [
            linear(1, 64, 12), linear(1, 1, 1), linear(1, 7, 5), linear(1, 16, 4, act=nn.ReLU),
            linear(1, 17, 33), linear(1, 200, 10), linear(3, 24, 9), linear(5, 33, 7, act=nn.ReLU),
            linear(1, 255, 3), linear(2, 48, 16),
        ],
    }


def random_family(seed: int, count: int):
    """Randomly drawn conv / depthwise / linear shapes (large sweep)."""
    rng = np.random.RandomState(seed)
    cases, kernels = [], []
    for _ in range(count):
        kind = rng.choice(["conv1x1", "conv", "dw", "fc"])
        if kind == "fc":
            cases.append(linear(int(rng.randint(1, 4)), int(rng.randint(1, 300)), int(rng.randint(1, 40))))
            kernels.append("fc_s8_mve")
            continue
        hw = (int(rng.randint(1, 12)), int(rng.randint(1, 12)))
        if kind == "conv1x1":
            cases.append(conv(int(rng.randint(1, 160)), int(rng.randint(1, 40)), hw, 1, stride=int(rng.randint(1, 3))))
            kernels.append("conv_s8_1x1_mve")
            continue
        k = (int(rng.randint(1, 6)), int(rng.randint(1, 6)))
        dil = (int(rng.randint(1, 3)), int(rng.randint(1, 3)))
        span = [(k[i] - 1) * dil[i] + 1 for i in range(2)]
        pad = tuple(int(rng.randint(0, span[i] // 2 + 1)) for i in range(2))
        hw = tuple(max(hw[i], span[i] - 2 * pad[i]) for i in range(2))
        stride = int(rng.randint(1, 4))
        if kind == "dw":
            cases.append(dwconv(int(rng.randint(2, 70)), hw, k, stride=stride, pad=pad, dil=dil))
            kernels.append("dwconv_s8_mve")
        else:
            cases.append(conv(int(rng.randint(1, 40)), int(rng.randint(1, 40)), hw, k, stride=stride, pad=pad, dil=dil))
            kernels.append("conv_s8_1x1_mve" if k == (1, 1) and pad == (0, 0) else "conv_s8_mve")
    return cases, kernels


def input_shapes(cases):
    return [shape for _, _, shapes in cases for shape in shapes]


def compile_cases(cases, target="cortex-m55"):
    model = SideBySide([m for _, m, _ in cases], [len(shapes) for _, _, shapes in cases]).eval()
    rng = np.random.RandomState(1)
    calibration = [tuple(rng.standard_normal(shape).astype(np.float32) for shape in input_shapes(cases))
                   for _ in range(4)]
    ep = torch.export.export(model, tuple(torch.from_numpy(x) for x in calibration[0]))
    return mcuflow.compile(ep, target=target, calibration=calibration, io="int8")


def layer_kernels(program):
    """The kernel of every op, sorted (the compiler may schedule the side-by-side layers in any order)."""
    return sorted(op["kernel"] for op in program.metadata["ops"])


def random_int8_samples(cases, seed, n):
    rng = np.random.RandomState(seed)
    return [[rng.randint(-128, 128, size=shape).astype(np.int8) for shape in input_shapes(cases)] for _ in range(n)]


def assert_board_matches_host(program, cases, seed):
    samples = random_int8_samples(cases, seed, SAMPLES)
    fw = device.cached_build(program, BOARD)
    on_board, _ = device.run_elf_on_inputs(fw, program, samples, BOARD)
    bad = []
    for k, (sample, board_outs) in enumerate(zip(samples, on_board)):
        for (desc, _, _), b, h in zip(cases, board_outs, program.run(sample)):
            assert b.shape == h.shape and b.dtype == h.dtype == np.int8
            if not np.array_equal(b, h):
                bad.append(f"sample {k}, {desc}: {int((b != h).sum())} of {b.size} outputs differ")
    assert not bad, "\n".join(bad)


FAMILIES = families()


@pytest.fixture(scope="module")
def programs():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = compile_cases(FAMILIES[name])
        return cache[name]

    return get


@pytest.mark.parametrize("kernel", sorted(FAMILIES))
def test_family_selects_mve_kernel_and_matches_host(programs, kernel):
    program = programs(kernel)
    assert layer_kernels(program) == [kernel] * len(FAMILIES[kernel])
    assert_board_matches_host(program, FAMILIES[kernel], seed=hash(kernel) % 1000)


@pytest.mark.skipif(not LARGE_SWEEP, reason="set MCUFLOW_LARGE_SWEEP=1")
@pytest.mark.parametrize("seed", range(4))
def test_random_shapes_match_host(seed):
    torch.manual_seed(seed)
    cases, kernels = random_family(seed, 40)
    program = compile_cases(cases)
    assert layer_kernels(program) == sorted(kernels)
    assert_board_matches_host(program, cases, seed)


class Cancelling(nn.Module):
    """A conv or linear layer over its input twice (channels concatenated), the second copy's
    weights nearly the negated first's: its outputs are far smaller than single products, so
    requantization shifts left (which the GEMM kernels skip for ops that never do)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer
        with torch.no_grad():
            half = layer.weight.shape[1] // 2
            layer.weight[:, half:] = -0.999 * layer.weight[:, :half]
            layer.bias.mul_(1e-3)

    def forward(self, x):
        return self.layer(torch.cat([x, x], dim=1 if isinstance(self.layer, nn.Conv2d) else -1))


def requantization_shifts(program, op_index):
    """The op's int32 shift table (input 4), from the program's constants."""
    record = program._host.tensors[program._host.ops[op_index]["inputs"][4]]
    at = constants_offset(program.data) + record["offset"]
    return np.frombuffer(program.data, np.int32, record["bytes"] // 4, at)


def test_left_shifting_requantization_matches_host():
    torch.manual_seed(3)
    cases = [("1x1 left shift", Cancelling(nn.Conv2d(32, 9, 1)), [(1, 16, 3, 5)]),
             ("conv left shift", Cancelling(nn.Conv2d(6, 5, 3, padding=1)), [(1, 3, 5, 4)]),
             ("linear left shift", Cancelling(nn.Linear(40, 14)), [(1, 3, 20)])]
    program = compile_cases(cases)
    gemm = [i for i, op in enumerate(program.metadata["ops"])
            if op["kernel"].startswith(("conv", "fc")) and op["kernel"].endswith("_mve")]
    assert sorted(program.metadata["ops"][i]["kernel"] for i in gemm) == ["conv_s8_1x1_mve", "conv_s8_mve", "fc_s8_mve"]
    assert all(requantization_shifts(program, i).max() > 0 for i in gemm)
    assert_board_matches_host(program, cases, seed=5)


class CancellingDepthwise(nn.Module):
    """A 3x3 depthwise conv whose middle column nearly cancels its left one and whose right one
    is zero, padded along the height only: on inputs constant along the width (its calibration)
    the outputs are far smaller
    than single products, so requantization shifts left (which the 3x3 kernel skips for ops
    that never do)."""

    def __init__(self, channels):
        super().__init__()
        self.layer = nn.Conv2d(channels, channels, 3, padding=(1, 0), groups=channels)
        with torch.no_grad():
            self.layer.weight[..., 1] = -0.999 * self.layer.weight[..., 0]
            self.layer.weight[..., 2] = 0
            self.layer.bias.mul_(1e-3)

    def forward(self, x):
        return self.layer(x)


def test_left_shifting_depthwise_requantization_matches_host():
    torch.manual_seed(4)
    cases = [("dwconv 3x3 left shift", CancellingDepthwise(40), [(1, 40, 5, 6)])]
    rng = np.random.RandomState(2)
    calibration = [(np.repeat(rng.standard_normal((1, 40, 5, 1)), 6, axis=3).astype(np.float32),) for _ in range(4)]
    ep = torch.export.export(cases[0][1].eval(), (torch.from_numpy(calibration[0][0]),))
    program = mcuflow.compile(ep, target="cortex-m55", calibration=calibration, io="int8")
    assert layer_kernels(program) == ["dwconv_s8_mve"]
    assert requantization_shifts(program, 0).max() > 0
    assert_board_matches_host(program, cases, seed=6)


# --- selection ------------------------------------------------------------------------------

@pytest.mark.parametrize("case, reason", [
    (("dwconv ch_mult 2", nn.Conv2d(4, 8, 3, padding=1, groups=4), [(1, 4, 5, 5)]), "needs channel multiplier 1, got 2"),
    (dwconv(3, (10, 10), 9, pad=4), "needs at most 64 taps, got 9x9"),
])
def test_unsupported_shapes_fall_back_with_a_reason(case, reason):
    """The op keeps a kernel of another tier (MVE cores also run the DSP tier's), and when
    that is the reference kernel, inspect's reason names what the MVE kernel needs."""
    (op,) = compile_cases([case]).metadata["ops"]
    assert op["kernel"] in ("dwconv_s8", "dwconv_s8_dsp")
    if op["kernel"] == "dwconv_s8":
        assert reason in op["reason"]


def test_scalar_and_dsp_targets_do_not_get_mve_kernels():
    cases = [conv(16, 8, (4, 4), 1), conv(3, 4, (6, 6), 3, pad=1), linear(1, 16, 4)]
    for target in ("cortex-m0", "cortex-m4", "cortex-m33"):
        assert not any(k.endswith("_mve") for k in layer_kernels(compile_cases(cases, target=target)))


# --- the device verifies the prepared inputs -----------------------------------------------


@pytest.mark.parametrize("case, byte", [
    (conv(16, 8, (4, 4), 1), 0),  # the low byte of channel 0's folded bias
    (dwconv(20, (5, 5), 3, pad=1), -1),  # the depthwise zero point row's last byte
])
def test_device_rejects_prepared_inputs_that_disagree_with_the_reference_inputs(case, byte):
    """A program whose prepared input disagrees with its reference inputs would make the
    board compute something else than the host: the device verifier refuses it, and so does the
    host's."""
    program = compile_cases([case])
    packed = program._host.ops[0]["inputs"][5]
    record = program._host.tensors[packed]
    data = bytearray(program.data)
    at = constants_offset(data) + record["offset"] + byte % record["bytes"]
    data[at] = (data[at] + 1) % 256
    data = with_crc(data)
    tampered = rejected_on_host_sent_to_board(program, bytes(data))
    x = random_int8_samples([case], 0, 1)[0]
    with pytest.raises(device.DeviceError, match="bad_params"):
        device.run_on_board(tampered, x, BOARD)


# --- requantization on edge cases -----------------------------------------------------------

REQUANTIZE_CHECK = r"""
// mve::requantize against the reference arithmetic (arith.h) on four lanes at a time, with the
// channel table rows the compiler prepares (mve_table_value): every
// shift, multipliers 0 ... 2^31-1 (2^30 makes every odd accumulator a rounding tie of the
// doubling high multiply), accumulators at the int32 limits, random ones, and ties of the
// rounding right shift.
#include <cstdint>
#include "mcuflow/board.h"
#include "mcuflow/kernels/arith.h"
#include "mve_blocks.h"

namespace k = mcuflow::kernels;

namespace {
uint32_t g_state = 0x9e3779b9u;
uint32_t next() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 17;
  g_state ^= g_state << 5;
  return g_state;
}
void put_int(int64_t v) {
  char buf[24];
  int i = 23;
  buf[i] = '\0';
  const bool neg = v < 0;
  uint64_t u = neg ? uint64_t(-v) : uint64_t(v);
  do { buf[--i] = char('0' + u % 10); u /= 10; } while (u);
  if (neg) buf[--i] = '-';
  board_puts(&buf[i]);
}
int32_t multiplier() {
  switch (next() % 6) {
    case 0: return int32_t(1) << 30;
    case 1: return INT32_MAX;
    case 2: return int32_t(next() % 3);
    case 3: return int32_t(next() & 0x7fffffffu);
    default: return int32_t((1u << 30) | (next() & 0x3fffffffu));
  }
}
int32_t accumulator(int32_t shift) {
  const int32_t right = shift < 0 ? -shift : 0;
  switch (next() % 7) {
    case 0: { const int32_t e[] = {INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 1, 0, 1, -1}; return e[next() % 7]; }
    case 1: return int32_t(next());
    case 2: return int32_t(next() % 131072) - 65536;
    case 3: case 4: {
      // 2 * (q * 2^right + 2^(right-1)): with multiplier 2^30 the high multiply halves it exactly.
      const int64_t q = int64_t(int32_t(next() % 64) - 32);
      const int64_t half = right > 0 ? (int64_t(1) << (right - 1)) : 0;
      const int64_t v = 2 * (q * (int64_t(1) << right) + half);
      return v > INT32_MAX || v < INT32_MIN ? int32_t(v >> 1) : int32_t(v);
    }
    default: return int32_t(next()) >> (next() % 31);
  }
}
}  // namespace

int main() {
  uint32_t checked = 0, mismatches = 0;
  for (int32_t shift = -31; shift <= 30; ++shift) {
    for (int32_t round = 0; round < ROUNDS; ++round) {
      int32_t acc[4], mult[4], sh[4], expected[4], got[4];
      alignas(16) int32_t table[k::kMveTableRows][4];  // a GEMM block's channel table
      const int32_t lo = int32_t(next() % 256) - 128, hi = int32_t(next() % 256) - 128;
      const int32_t act_min = lo < hi ? lo : hi, act_max = lo < hi ? hi : lo;
      const bool full_range = next() % 2;
      const int32_t out_offset = int32_t(next() % 256) - 128;
      for (int l = 0; l < 4; ++l) {
        sh[l] = l == 0 ? shift : int32_t(next() % 62) - 31;
        acc[l] = accumulator(sh[l]);
        mult[l] = (next() % 3 == 0 && l != 0) ? int32_t(1) << 30 : multiplier();
        for (int32_t row = 0; row < k::kMveTableRows; ++row) table[row][l] = k::mve_table_value(row, 0, 0, 0, mult[l], sh[l]);
        const int32_t x = k::multiply_by_quantized_multiplier(acc[l], mult[l], sh[l]) + out_offset;
        expected[l] = full_range ? k::clamp_i32(x, -128, 127) : k::clamp_i32(x, act_min, act_max);
      }
      constexpr int32_t kRow = 16;  // bytes
      const int32x4_t y = k::mve::requantize<k::kMveMultiplier * kRow, k::kMveLeftShift * kRow, k::kMveMinusRightShift * kRow>(
          vld1q_s32(acc), &table[0][0], out_offset, vdupq_n_s32(full_range ? -128 : act_min),
          vdupq_n_s32(full_range ? 127 : act_max));
      vst1q_s32(got, y);
      for (int l = 0; l < 4; ++l) {
        ++checked;
        if (got[l] == expected[l]) continue;
        if (++mismatches <= 5) {
          board_puts("mismatch acc="); put_int(acc[l]); board_puts(" mult="); put_int(mult[l]);
          board_puts(" shift="); put_int(sh[l]); board_puts(" got="); put_int(got[l]);
          board_puts(" expected="); put_int(expected[l]); board_puts("\n");
        }
      }
    }
  }
  board_puts("requantize checked="); put_int(checked); board_puts(" mismatches="); put_int(mismatches);
  board_puts("\n");
  return mismatches == 0 ? 0 : 1;
}
"""


def test_requantize_matches_reference_arithmetic_on_edge_cases(tmp_path):
    source = tmp_path / "requantize_check.cpp"
    source.write_text(REQUANTIZE_CHECK)
    rounds = 4000 if LARGE_SWEEP else 400
    fw = crossbuild.build_firmware(BOARD, [source], tmp_path / "fw", o3_sources=[source],
                                   include_dirs=[REPO / "kernels" / "include", REPO / "kernels" / "mve"],
                                   defines={"ROUNDS": rounds})
    rc, out = qemu.run_elf(fw.elf, BOARD, timeout_s=120, cwd=tmp_path)
    assert f"requantize checked={62 * rounds * 4} mismatches=0" in out, out
    assert rc == 0
