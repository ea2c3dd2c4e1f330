"""int16-activation DSP kernels (conv_s16_1x1_dsp, conv_s16_dsp, dwconv_s16_dsp, fc_s16_dsp,
avgpool_s16_dsp) on qemu-m4 and qemu-m33, bit for bit against the reference kernels the host runs.

The layer families are the MVE int16 kernels' (test_int16_mve_kernels: many differently shaped
single layers side by side, one int16 program per family, inputs reaching three times the
calibration range so that the int16 inputs saturate at both ends). Both paths of every weighted
kernel are exercised (kernels/include/mcuflow/kernels/s16_tiers.h): the int32 path, and the
reference's int64 arithmetic the kernel falls back to where an accumulator could overflow int32
(weights of equal magnitude over a deep window, a large bias) or requantization shifts left.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from fwutil import requires_cross  # noqa: E402
from test_int16_mve_kernels import (assert_board_matches_host, compile_int16, families,  # noqa: E402
                                    int64_and_left_shift_cases, weighted_kernels)
from test_mve_kernels import conv, dwconv, linear, requantization_shifts  # noqa: E402

pytestmark = requires_cross

BOARDS = {"qemu-m4": "cortex-m4", "qemu-m33": "cortex-m33"}  # board: the core compiled for


def dsp_takes(module):
    """Whether the DSP kernels take a case's layer (kernels_dsp.h): conv and linear windows of at
    least four values, depthwise windows of at most 25 taps."""
    layer = module[0] if isinstance(module, nn.Sequential) else module
    if isinstance(layer, nn.Linear):
        return layer.in_features >= 4
    if not isinstance(layer, nn.Conv2d):
        return True
    taps = layer.kernel_size[0] * layer.kernel_size[1]
    return taps <= 25 if layer.groups > 1 else layer.in_channels * taps >= 4


def dsp_families():
    """The MVE families under their DSP kernels' names (without the layers the DSP kernels
    refuse: test_refused_layers_stay_on_reference), plus the shapes only the DSP kernels treat
    apart: depths and channel counts that are not multiples of four (the scalar tails), more
    output channels than one table chunk (kS16ChannelChunk, dsp_s16_blocks.h)."""
    cases = {name.replace("_mve", "_dsp"): [c for c in layers if dsp_takes(c[1])]
             for name, layers in families().items()}
    torch.manual_seed(1)
    cases["conv_s16_1x1_dsp"] += [conv(6, 5, (3, 3), 1), conv(7, 9, (2, 5), 1), conv(8, 70, (3, 3), 1)]
    cases["conv_s16_dsp"] += [conv(2, 3, (5, 5), (1, 3), pad=(0, 1)), conv(5, 2, (4, 4), 3, stride=2),
                              conv(3, 70, (5, 5), 3, pad=1)]
    cases["dwconv_s16_dsp"] += [dwconv(72, (4, 4), 3, pad=1)]
    cases["fc_s16_dsp"] += [linear(2, 16, 70)]
    return cases


FAMILIES = dsp_families()


@pytest.mark.parametrize("kernel", sorted(FAMILIES))
def test_family_selects_dsp_kernel_and_matches_host_on_m4(kernel):
    program = compile_int16(FAMILIES[kernel], BOARDS["qemu-m4"])
    assert weighted_kernels(program) == [kernel] * len(FAMILIES[kernel])
    assert_board_matches_host(program, FAMILIES[kernel], seed=7, board="qemu-m4")


@pytest.mark.parametrize("kernel", ["conv_s16_1x1_dsp", "dwconv_s16_dsp"])
def test_family_matches_host_on_m33(kernel):
    program = compile_int16(FAMILIES[kernel], BOARDS["qemu-m33"])
    assert weighted_kernels(program) == [kernel] * len(FAMILIES[kernel])
    assert_board_matches_host(program, FAMILIES[kernel], seed=11, board="qemu-m33")


def test_int64_and_left_shift_paths_match_host():
    cases = int64_and_left_shift_cases()
    program = compile_int16(cases, BOARDS["qemu-m4"])
    ops = program.metadata["ops"]
    weighted = [i for i, op in enumerate(ops)
                if op["kernel"].startswith(("conv", "dwconv", "fc")) and op["kernel"].endswith("_dsp")]
    assert sorted(ops[i]["kernel"] for i in weighted) == sorted(
        ["conv_s16_1x1_dsp", "fc_s16_dsp"] * 2 + ["conv_s16_dsp", "dwconv_s16_dsp"])
    assert sum(requantization_shifts(program, i).max() >= 0 for i in weighted) >= 3
    assert_board_matches_host(program, cases, seed=5, board="qemu-m4")


def test_refused_layers_stay_on_reference():
    torch.manual_seed(4)
    cases = [conv(3, 5, (4, 5), 1), ("linear 1x3->4", nn.Linear(3, 4), [(1, 3)]), conv(8, 4, (3, 3), 1),
             dwconv(4, (8, 8), (5, 6)), dwconv(4, (8, 8), 5)]
    program = compile_int16(cases, BOARDS["qemu-m4"])
    assert weighted_kernels(program) == sorted(["conv_s16", "fc_s16", "conv_s16_1x1_dsp", "dwconv_s16", "dwconv_s16_dsp"])
