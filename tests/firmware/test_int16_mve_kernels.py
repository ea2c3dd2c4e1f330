"""int16-activation MVE kernels (conv_s16_1x1_mve, conv_s16_mve, dwconv_s16_mve, fc_s16_mve,
avgpool_s16_mve) on qemu-m55, bit for bit against the reference kernels the host runs.

Each family is one int16 program (precision="int16", float I/O) of many differently shaped
single layers side by side, one firmware build and one QEMU run per family; inputs reach three
times the calibration range, so the int16 inputs saturate at both ends. Both paths of every
kernel are exercised (kernels/mve/mve_s16_blocks.h): the int32 fast path, and the int64 path
with the reference output stage, taken when an accumulator could overflow int32 (weights of
equal magnitude over a deep window, a large bias) or when requantization shifts left
(cancelling weights) or divides by more than 2^32.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import SideBySide, assert_outputs_equal, requires_cross  # noqa: E402
from test_mve_kernels import (Cancelling, avgpool, conv, dwconv, input_shapes, layer_kernels, linear,  # noqa: E402
                              requantization_shifts)

pytestmark = requires_cross

BOARD = "qemu-m55"
SAMPLES = 4


class EqualMagnitude(nn.Module):
    """A layer whose weights all have one magnitude (random signs): sum |w| * 32768 over a deep
    window passes 2^31, so the kernel must accumulate in int64."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer
        with torch.no_grad():
            layer.weight.copy_(torch.sign(torch.randn_like(layer.weight)) * 0.05)

    def forward(self, x):
        return self.layer(x)


class LargeBias(nn.Module):
    """A depthwise conv with tiny weights and a large bias: the bias alone passes 2^31 in
    accumulator units, and requantization divides by more than 2^32."""

    def __init__(self, channels):
        super().__init__()
        self.layer = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
        with torch.no_grad():
            self.layer.weight.mul_(1e-3)
            self.layer.bias.copy_(torch.sign(torch.randn(channels)) * 50)

    def forward(self, x):
        return self.layer(x)


def families():
    torch.manual_seed(0)
    return {
        "conv_s16_1x1_mve": [
            conv(64, 64, (25, 5), 1, act=nn.ReLU),  # DS-CNN's pointwise layers
            conv(1, 1, (3, 3), 1), conv(3, 5, (4, 5), 1), conv(17, 3, (5, 4), 1), conv(31, 7, (3, 5), 1, stride=2),
            conv(65, 13, (3, 4), 1, act=nn.ReLU6), conv(8, 12, (7, 3), 1, stride=(2, 1), bias=False),
            conv(48, 33, (4, 4), 1, stride=3), conv(9, 6, (1, 1), 1),
            conv(23, 70, (3, 3), 1),  # two channel groups (64 + 6), the second's last two channels alone
            conv(16, 72, (3, 3), 1),  # rows in pairs (depth 16, 72 channels), two groups, a last row alone
        ],
        "conv_s16_mve": [
            conv(1, 64, (49, 10), (10, 4), stride=2, pad=(5, 1), act=nn.ReLU),  # DS-CNN's first layer
            conv(3, 5, (9, 9), 3, pad=1), conv(16, 30, (8, 8), 3, pad=1, act=nn.ReLU), conv(5, 7, (8, 11), (2, 3)),
            conv(17, 9, (9, 7), 5, stride=2, pad=2), conv(4, 6, (10, 10), 3, pad=2, dil=2),
            conv(1, 1, (5, 5), 3, stride=2, pad=1), conv(7, 3, (6, 5), (3, 1), pad=(1, 0)),
            conv(3, 4, (3, 3), 2, pad=3), conv(8, 12, (6, 5), 3, pad=1),  # rows in pairs: depth 72
            conv(32, 8, (4, 5), 4),  # rows in pairs at the deepest window, 512
            conv(6, 10, (7, 9), (3, 5), stride=(1, 2), pad=(0, 2), dil=(2, 1)),
        ],
        "dwconv_s16_mve": [
            dwconv(64, (25, 5), 3, pad=1, act=nn.ReLU),  # DS-CNN's depthwise layers
            dwconv(2, (5, 5), 3, pad=1), dwconv(7, (6, 6), 3, pad=1), dwconv(16, (5, 4), 3, stride=2, pad=1),
            dwconv(17, (7, 7), 3), dwconv(33, (6, 5), 5, pad=2), dwconv(24, (9, 9), 3, stride=2, pad=1, dil=2),
            dwconv(20, (8, 6), (3, 1), pad=(1, 0)), dwconv(5, (4, 4), 2), dwconv(3, (10, 10), 7, stride=3, pad=3),
            dwconv(31, (4, 7), (1, 3), pad=(0, 1), act=nn.ReLU6),
            dwconv(72, (4, 3), 3, pad=1),  # two channel groups (64 + 8)
            dwconv(9, (3, 3), 2, pad=2),  # corner windows of padding alone: no valid tap
            dwconv(13, (9, 9), 8, pad=1),  # 64 taps, the most the kernel lists
        ],
        "avgpool_s16_mve": [
            avgpool(64, (25, 5), (25, 5)),  # DS-CNN's global pool
            avgpool(16, (8, 8), 2), avgpool(5, (7, 6), 3, stride=2, pad=1), avgpool(17, (5, 5), 3, stride=1, pad=1),
            avgpool(3, (20, 20), 20), avgpool(33, (6, 4), (2, 3), stride=(2, 1)), avgpool(1, (3, 3), 3),
        ],
        "fc_s16_mve": [
            linear(1, 64, 12), linear(1, 1, 1), linear(1, 7, 5), linear(1, 16, 4, act=nn.ReLU), linear(1, 17, 33),
            linear(1, 200, 10), linear(3, 24, 9), linear(5, 33, 7, act=nn.ReLU), linear(2, 48, 16),
            linear(3, 32, 8),  # a pair of rows, then one alone
        ],
    }


def compile_int16(cases, target="cortex-m55"):
    model = SideBySide([m for _, m, _ in cases], [len(shapes) for _, _, shapes in cases]).eval()
    rng = np.random.RandomState(1)
    calibration = [tuple(rng.standard_normal(shape).astype(np.float32) for shape in input_shapes(cases))
                   for _ in range(4)]
    ep = torch.export.export(model, tuple(torch.from_numpy(x) for x in calibration[0]))
    return mcuflow.compile(ep, target=target, calibration=calibration, precision="int16")


def weighted_kernels(program):
    """layer_kernels without the float I/O's quantize and dequantize ops."""
    return [k for k in layer_kernels(program) if not k.startswith(("quantize", "dequantize"))]


def assert_board_matches_host(program, cases, seed, board=BOARD):
    rng = np.random.RandomState(seed)
    samples = [[(3 * rng.standard_normal(shape)).astype(np.float32) for shape in input_shapes(cases)]
               for _ in range(SAMPLES)]
    fw = device.cached_build(program, board)
    on_board, _ = device.run_elf_on_inputs(fw, program, samples, board)
    for sample, board_outs in zip(samples, on_board):
        assert_outputs_equal(board_outs, program.run(sample))


FAMILIES = families()


@pytest.mark.parametrize("kernel", sorted(FAMILIES))
def test_family_selects_mve_kernel_and_matches_host(kernel):
    program = compile_int16(FAMILIES[kernel])
    assert weighted_kernels(program) == [kernel] * len(FAMILIES[kernel])
    assert_board_matches_host(program, FAMILIES[kernel], seed=7)


def int64_and_left_shift_cases():
    """Layers whose accumulators could overflow int32 or whose requantization shifts left: two
    1x1 convs, two linear layers, a conv and a depthwise conv."""
    torch.manual_seed(3)
    return [("1x1 deep equal weights", EqualMagnitude(nn.Conv2d(640, 6, 1)), [(1, 640, 2, 3)]),
            ("depthwise large bias", LargeBias(12), [(1, 12, 5, 4)]),
            ("linear deep equal weights", EqualMagnitude(nn.Linear(700, 9)), [(1, 700)]),
            ("1x1 left shift", Cancelling(nn.Conv2d(32, 9, 1)), [(1, 16, 3, 5)]),
            ("conv left shift", Cancelling(nn.Conv2d(6, 5, 3, padding=1)), [(1, 3, 5, 4)]),
            ("linear left shift", Cancelling(nn.Linear(40, 14)), [(1, 3, 20)])]


def test_int64_and_left_shift_paths_match_host():
    cases = int64_and_left_shift_cases()
    program = compile_int16(cases)
    ops = program.metadata["ops"]
    weighted = [i for i, op in enumerate(ops)
                if op["kernel"].startswith(("conv", "dwconv", "fc")) and op["kernel"].endswith("_mve")]
    assert sorted(ops[i]["kernel"] for i in weighted) == sorted(
        ["conv_s16_1x1_mve", "fc_s16_mve"] * 2 + ["conv_s16_mve", "dwconv_s16_mve"])
    assert sum(requantization_shifts(program, i).max() >= 0 for i in weighted) >= 3
    assert_board_matches_host(program, cases, seed=5)


def test_depthwise_with_more_taps_than_listed_falls_back_with_a_reason():
    """dwconv_s16_mve lists a pixel's taps on the stack (kMveDwMaxTaps): a 9x9 window keeps
    another tier's kernel, and where that is the reference, inspect says what MVE needs."""
    torch.manual_seed(5)
    case = dwconv(3, (10, 10), 9, pad=4)
    (op,) = [op for op in compile_int16([case]).metadata["ops"] if op["kind"] == "conv2d"]
    assert op["kernel"] in ("dwconv_s16", "dwconv_s16_dsp")
    if op["kernel"] == "dwconv_s16":
        assert "needs at most 64 taps, got 9x9" in op["reason"]
