"""Float32 DSP-tier kernels for cores with an FPU (conv_f32_dsp, conv_f32_1x1_dsp, dwconv_f32_dsp,
fc_f32_dsp) on qemu-m4 and qemu-m33, bit for bit against the float reference kernels the host runs.

One program holds every family's layers side by side (the digits demo's and DS-CNN's layers, channel
tails, strides, paddings, dilations, no bias, ReLU / ReLU6 clamps, and random shapes), compiled with
precision fp32: one firmware build and one QEMU run per board. Outputs are compared as bits (so -0
and +0 differ). VMLA.F32 rounds as the reference's multiply then add, so denormal products and
sums and overflowing sums must match the host too (the FPU keeps denormals, as the host does).
Some layers run in place (output one pixel below the input), where a two-pixel pass must hold its
second pixel's outputs back.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from mcuflow import device  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from fwutil import requires_cross  # noqa: E402
from test_float_kernels import (assert_board_bits_match_host, compile_fp32, normal_samples, scaled,  # noqa: E402
                                tiny_samples)
from test_mve_kernels import conv, dwconv, input_shapes, layer_kernels, linear  # noqa: E402

pytestmark = requires_cross

BOARDS = {"qemu-m4": "cortex-m4", "qemu-m33": "cortex-m33"}


def random_cases(rng, n):
    """n random layers of each family: (kernel, case)."""
    cases = []
    for _ in range(n):
        cin, cout = rng.randint(1, 40, size=2)
        h, w = rng.randint(3, 12, size=2)
        k = (int(rng.randint(1, min(h, 5) + 1)), int(rng.randint(1, min(w, 5) + 1)))
        stride, pad = int(rng.randint(1, 3)), int(rng.randint(0, 2))
        act = [None, nn.ReLU, nn.ReLU6][rng.randint(3)]
        cases.append(("conv_f32_dsp" if k != (1, 1) or pad else "conv_f32_1x1_dsp",
                      conv(int(cin), int(cout), (int(h), int(w)), k, stride=stride, pad=pad, act=act,
                           bias=bool(rng.randint(2)))))
        cases.append(("conv_f32_1x1_dsp", conv(int(cin), int(cout), (int(h), int(w)), 1, stride=stride, act=act)))
        dil = int(rng.randint(1, 3))
        dk = int(rng.randint(1, 4))
        cases.append(("dwconv_f32_dsp", dwconv(int(rng.randint(1, 40)), (int(h) + 2 * dil, int(w) + 2 * dil), dk,
                                               stride=stride, pad=pad, dil=dil, act=act)))
        cases.append(("fc_f32_dsp", linear(int(rng.randint(1, 5)), int(rng.randint(1, 80)), int(cout), act=act)))
    return cases


def families():
    torch.manual_seed(0)
    fixed = [
        ("conv_f32_dsp", conv(1, 16, (8, 8), 3, pad=1, act=nn.ReLU, bias=False)),  # the digits demo's layers
        ("conv_f32_dsp", conv(16, 32, (8, 8), 3, pad=1, act=nn.ReLU)),
        ("conv_f32_dsp", conv(32, 32, (4, 4), 3, pad=1, act=nn.ReLU)),
        ("conv_f32_dsp", conv(1, 64, (49, 10), (10, 4), stride=2, pad=(5, 1))),  # DS-CNN's first layer
        ("conv_f32_dsp", conv(17, 9, (9, 7), 5, stride=2, pad=2)), ("conv_f32_dsp", conv(4, 6, (10, 10), 3, pad=2, dil=2)),
        ("conv_f32_dsp", conv(6, 10, (7, 9), (3, 5), stride=(1, 2), pad=(0, 2), dil=(2, 1))),
        ("conv_f32_dsp", conv(3, 4, (3, 3), 2, pad=3)), ("conv_f32_dsp", conv(33, 13, (5, 5), 3, pad=1, act=nn.ReLU6)),
        ("conv_f32_1x1_dsp", conv(64, 64, (5, 5), 1, act=nn.ReLU)),  # DS-CNN's pointwise layers
        ("conv_f32_1x1_dsp", conv(1, 1, (3, 3), 1)), ("conv_f32_1x1_dsp", conv(17, 3, (5, 4), 1, stride=2)),
        ("conv_f32_1x1_dsp", conv(8, 12, (7, 3), 1, stride=(2, 1), bias=False)),
        ("dwconv_f32_dsp", dwconv(64, (25, 5), 3, pad=1, act=nn.ReLU)),  # DS-CNN's depthwise layers
        ("dwconv_f32_dsp", dwconv(2, (5, 5), 3, pad=1)), ("dwconv_f32_dsp", dwconv(17, (7, 7), 3)),
        ("dwconv_f32_dsp", dwconv(24, (9, 9), 3, stride=2, pad=1, dil=2)), ("dwconv_f32_dsp", dwconv(8, (4, 4), 2)),
        ("dwconv_f32_dsp", dwconv(3, (10, 10), 7, stride=3, pad=3, act=nn.ReLU6)),
        # in place: the planner lays these outputs on their inputs, one pixel lower
        ("conv_f32_1x1_dsp", conv(8, 8, (4, 4), 1)), ("conv_f32_1x1_dsp", conv(8, 6, (4, 4), 1, bias=False)),
        ("conv_f32_dsp", conv(8, 6, (5, 5), 3, pad=1)), ("dwconv_f32_dsp", dwconv(16, (5, 5), 3, pad=1)),
        ("fc_f32_dsp", linear(1, 32, 10)), ("fc_f32_dsp", linear(1, 64, 12)), ("fc_f32_dsp", linear(1, 1, 1)),
        ("fc_f32_dsp", linear(3, 24, 9)), ("fc_f32_dsp", linear(5, 33, 7, act=nn.ReLU6)), ("fc_f32_dsp", linear(2, 48, 16)),
    ]
    return fixed + random_cases(np.random.RandomState(17), 4)


CASES = families()


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_layers_select_float_dsp_kernels_and_match_host_bits(board):
    cases = [case for _, case in CASES]
    program = compile_fp32(cases, BOARDS[board])
    assert layer_kernels(program) == sorted(kernel for kernel, _ in CASES)
    samples = normal_samples(cases, seed=5, n=3)
    # A sample of zeros and negative zeros: a bias-less output is +0 (0.0f + -0 products), not -0.
    samples.append([np.where(np.arange(np.prod(s)).reshape(s) % 2 == 0, np.float32(0), np.float32(-0.0)).astype(np.float32)
                    for s in input_shapes(cases)])
    assert_board_bits_match_host(program, cases, samples, board)


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_denormal_and_overflowing_sums_match_host_bits(board):
    """Tiny inputs times tiny weights (and denormal biases) give denormal products and sums, which
    the FPU keeps (FPSCR.FZ clear) as the host does; huge ones overflow to infinity (positive
    weights: inf - inf = NaN has other bits on x86), brought back by the clamp of a layer without
    activation."""
    torch.manual_seed(7)
    tiny = [scaled(conv(8, 6, (5, 5), 3, pad=1), 1e-20, 1e-40), scaled(conv(8, 6, (4, 4), 1), 1e-20, 1e-40),
            scaled(dwconv(12, (5, 5), 3, pad=1), 1e-20, 0.0), scaled(linear(1, 40, 9), 1e-20, 1e-40)]
    huge = [scaled(conv(3, 6, (5, 5), 3, pad=1), 1e30, positive=True), scaled(conv(4, 5, (4, 4), 1), 1e30, positive=True),
            scaled(dwconv(9, (4, 4), 3, pad=1), 1e30, positive=True), scaled(linear(2, 16, 6), 1e30, positive=True)]
    for cases, samples in ((tiny, tiny_samples(tiny)),
                           (huge, [[(np.abs(np.random.RandomState(4).standard_normal(s)) * 1e10).astype(np.float32)
                                    for s in input_shapes(huge)]])):
        program = compile_fp32(cases, BOARDS[board])
        assert layer_kernels(program) == sorted(["conv_f32_dsp", "conv_f32_1x1_dsp", "dwconv_f32_dsp", "fc_f32_dsp"])
        outs = program.run(samples[0])
        tiniest = np.finfo(np.float32).tiny
        assert (any(np.any((o != 0) & (np.abs(o) < tiniest)) for o in outs) if cases is tiny
                else all(np.any(o >= np.float32(3.4e38)) for o in outs)), "no denormal or overflowing outputs"
        assert_board_bits_match_host(program, cases, samples, board)


def test_unsupported_shapes_keep_the_reference():
    cases = [("grouped conv", nn.Conv2d(4, 6, 3, padding=1, groups=2), [(1, 4, 5, 5)]),
             ("dwconv ch_mult 2", nn.Conv2d(4, 8, 3, padding=1, groups=4), [(1, 4, 5, 5)])]
    ops = compile_fp32(cases, "cortex-m4").metadata["ops"]
    assert sorted(op["kernel"] for op in ops) == ["conv_f32", "dwconv_f32"]
    reasons = " / ".join(op["reason"] for op in ops)
    assert "needs an ungrouped convolution" in reasons and "needs channel multiplier 1" in reasons


def test_only_cores_with_an_fpu_and_no_mve_float_get_them():
    cases = [conv(16, 8, (4, 4), 3), dwconv(8, (4, 4), 3), linear(1, 16, 4)]
    kernels = {t: layer_kernels(compile_fp32(cases, t)) for t in ("cortex-m3", "cortex-m7", "cortex-m55")}
    assert kernels == {"cortex-m3": ["conv_f32", "dwconv_f32", "fc_f32"],
                       "cortex-m7": ["conv_f32_dsp", "dwconv_f32_dsp", "fc_f32_dsp"],
                       "cortex-m55": ["conv_f32_mve", "dwconv_f32_mve", "fc_f32_mve"]}


def test_a_soft_float_board_refuses_them():
    """A board built with -mfloat-abi=soft has no FPU instructions to run VMLA.F32 with."""
    program = compile_fp32([linear(1, 16, 4)], "cortex-m4")
    soft = dataclasses.replace(get_board("qemu-m4"), has_fpu=False)
    device.check_tiers(program, get_board("qemu-m4"))
    with pytest.raises(device.DeviceError, match="without hardware float"):
        device.check_tiers(program, soft)
