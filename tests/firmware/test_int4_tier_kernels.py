"""The int4-weight tier kernels (conv_s8_w4_1x1, conv_s8_w4, dwconv_s8_w4, fc_s8_w4 on MVE and
DSP, kernels_mve.h / kernels_dsp.h) on qemu-m55 and qemu-m4, bit for bit against the w4
reference kernels the host runs: per board, programs of many randomly shaped single layers side
by side (odd weight counts, strides, paddings, dilations, groups, several linear rows), compiled
with weights="int4"; every layer must have been given its tier's int4 kernel, and every output of
every random int8 input must equal the host's."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import SideBySide, requires_cross  # noqa: E402
from test_mve_kernels import conv, dwconv, input_shapes, layer_kernels, linear, random_int8_samples  # noqa: E402

pytestmark = requires_cross

BOARDS = {"qemu-m55": ("cortex-m55", "mve"), "qemu-m4": ("cortex-m4", "dsp")}
SAMPLES = 4


def fixed_cases():
    """Shapes seed 0 adds: a grouped conv, strided convs, single-row and multi-row linears, a 5x5
    depthwise, an 8-channel 3x3 depthwise; each with its kernel family."""
    return [
        (conv(10, 15, (5, 6), 3, pad=1), "conv_s8_w4"),
        grouped_conv(),
        (conv(6, 9, (6, 5), 3, stride=2, pad=1), "conv_s8_w4"),
        (conv(7, 11, (7, 5), 1, stride=2), "conv_s8_w4_1x1"),
        (dwconv(13, (6, 7), 5, pad=2), "dwconv_s8_w4"),
        (dwconv(8, (5, 9), 3, pad=1), "dwconv_s8_w4"),  # MVE: two pixels a pass from the block it builds
        (linear(1, 37, 9), "fc_s8_w4"),
        (linear(5, 21, 13), "fc_s8_w4"),
    ]


def grouped_conv():
    return ("grouped conv 10->15 (5, 6) k=3 g=5", torch.nn.Conv2d(10, 15, 3, padding=1, groups=5), [(1, 10, 5, 6)]), "conv_s8_w4"


def random_cases(seed: int, count: int):
    """Randomly drawn shapes within both tiers' limits (DSP: windows of 4+ values, 25 taps)."""
    rng = np.random.RandomState(seed)
    cases = []
    for _ in range(count):
        kind = rng.choice(["conv1x1", "conv", "dw", "fc"])
        if kind == "fc":
            cases.append((linear(int(rng.randint(1, 4)), int(rng.randint(4, 200)), int(rng.randint(1, 30))), "fc_s8_w4"))
            continue
        hw = (int(rng.randint(1, 9)), int(rng.randint(1, 9)))
        if kind == "conv1x1":
            cin, cout = int(rng.randint(4, 90)), int(rng.randint(1, 30))
            cases.append((conv(cin, cout, hw, 1, stride=int(rng.randint(1, 3))), "conv_s8_w4_1x1"))
            continue
        k = (int(rng.randint(2, 5)), int(rng.randint(1, 5)))
        dil = (int(rng.randint(1, 3)), int(rng.randint(1, 3)))
        span = [(k[i] - 1) * dil[i] + 1 for i in range(2)]
        pad = tuple(int(rng.randint(0, span[i] // 2 + 1)) for i in range(2))
        hw = tuple(max(hw[i], span[i] - 2 * pad[i]) for i in range(2))
        stride = int(rng.randint(1, 3))
        if kind == "dw":
            cases.append((dwconv(int(rng.randint(2, 40)), hw, k, stride=stride, pad=pad, dil=dil), "dwconv_s8_w4"))
        else:
            cases.append((conv(int(rng.randint(2, 24)), int(rng.randint(1, 24)), hw, k, stride=stride, pad=pad, dil=dil),
                          "conv_s8_w4"))
    return cases


def compile_int4(cases, target):
    layers = [case for case, _ in cases]
    model = SideBySide([m for _, m, _ in layers], [len(shapes) for _, _, shapes in layers]).eval()
    rng = np.random.RandomState(1)
    calibration = [tuple(rng.standard_normal(shape).astype(np.float32) for shape in input_shapes(layers))
                   for _ in range(4)]
    ep = torch.export.export(model, tuple(torch.from_numpy(x) for x in calibration[0]))
    return mcuflow.compile(ep, target=target, calibration=calibration, io="int8", weights="int4")


@pytest.mark.parametrize("board", sorted(BOARDS))
@pytest.mark.parametrize("seed", [0, 1])
def test_int4_tier_kernels_match_host(board, seed):
    target, tier = BOARDS[board]
    cases = random_cases(seed, 10) + (fixed_cases() if seed == 0 else [])
    program = compile_int4(cases, target)
    assert layer_kernels(program) == sorted(f"{family}_{tier}" for _, family in cases)
    layers = [case for case, _ in cases]
    samples = random_int8_samples(layers, seed + 7, SAMPLES)
    on_board, _ = device.run_elf_on_inputs(device.cached_build(program, board), program, samples, board)
    bad = []
    for k, (sample, board_outs) in enumerate(zip(samples, on_board)):
        for (desc, _, _), b, h in zip(layers, board_outs, program.run(sample)):
            assert b.shape == h.shape and b.dtype == h.dtype == np.int8
            if not np.array_equal(b, h):
                bad.append(f"sample {k}, {desc}: {int((b != h).sum())} of {b.size} outputs differ")
    assert not bad, "\n".join(bad)
