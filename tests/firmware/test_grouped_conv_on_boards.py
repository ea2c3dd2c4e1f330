"""Grouped convolution on the boards: the tier window kernels (conv_s8_scalar on qemu-m0,
conv_s8_dsp on qemu-m4, conv_s8_mve on qemu-m55) against the host reference bit for bit, over one
program of many randomly shaped grouped layers (groups, channels per group, windows, strides,
dilations, padding, activations; requantization shifts across the DSP fast path's range) fed
random and extreme int8 inputs; and the zoo's RegNetX (python/mcuflow/zoo/families.py) host ==
board on qemu-m3 (scalar), m4 and m55."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device, zoo  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from fwutil import requires_cross  # noqa: E402
from test_dsp_kernels import (Branches, assert_board_matches_host, conv, large_bias, layer_of_op,  # noqa: E402
                              spread_scales)

pytestmark = requires_cross

TIER_CONV = {"qemu-m0": "conv_s8_scalar", "qemu-m4": "conv_s8_dsp", "qemu-m55": "conv_s8_mve"}


def grouped_layers(seed: int = 0, count: int = 14) -> list:
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    layers = [
        conv(32, 32, 3, (6, 6), padding=1, groups=8, activation="relu"),  # a RegNet / ResNeXt layer
        conv(16, 8, 1, (5, 4), groups=4),  # grouped pointwise: the window kernel, not the 1x1 one
        spread_scales(conv(8, 8, 3, (5, 5), padding=1, groups=2)),
        large_bias(conv(16, 8, 3, (4, 5), stride=2, padding=1, groups=4)),
    ]
    while len(layers) < count:
        groups = int(rng.integers(2, 7))
        cin, cout = groups * int(rng.integers(1, 9)), groups * int(rng.integers(1, 6))
        k = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        if k[0] * k[1] * (cin // groups) < 4:  # the DSP kernel needs 4 window positions per group
            continue
        stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        dilation = (1, 1) if rng.random() < 0.6 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        padding = (int(rng.integers(0, k[0])), int(rng.integers(0, k[1])))
        hw = (int(rng.integers(dilation[0] * (k[0] - 1) + 1, 11)), int(rng.integers(dilation[1] * (k[1] - 1) + 1, 11)))
        layers.append(conv(cin, cout, k, hw, stride, padding, dilation, groups=groups,
                           activation=rng.choice([None, "relu", "relu6"])))
    return layers


def compile_for(board: str, layers: list, seed: int = 1):
    model = Branches(layers).eval()
    gen = torch.Generator().manual_seed(seed)
    example = tuple(torch.randn(layer.input_shape, generator=gen) for layer in layers)
    calibration = [tuple(torch.randn(layer.input_shape, generator=gen) for layer in layers) for _ in range(8)]
    return mcuflow.compile(torch.export.export(model, example), target=get_board(board).core, calibration=calibration,
                           io="int8")


@pytest.mark.parametrize("board", sorted(TIER_CONV))
def test_grouped_conv_tier_kernel_matches_host_bit_for_bit(board):
    # qemu-m0's 16 KiB hold 13 of the branches with the scalar kernel's widened windows (4 bytes a value)
    layers = grouped_layers(count=13 if board == "qemu-m0" else 14)
    program = compile_for(board, layers)
    ops = program.metadata["ops"]
    assert sorted(layer_of_op(program)) == list(range(len(layers)))
    assert [op["kernel"] for op in ops] == [TIER_CONV[board]] * len(layers), [op["reason"] for op in ops]
    assert_board_matches_host(program, board, seed=2)


# The scalar tier on qemu-m3: the model needs more than qemu-m0's 16 KiB of RAM and 256 KiB of flash.
MODEL_TIER_CONV = {"qemu-m3": "conv_s8_scalar", "qemu-m4": "conv_s8_dsp", "qemu-m55": "conv_s8_mve"}


@pytest.mark.parametrize("board", sorted(MODEL_TIER_CONV))
def test_regnet_x_tiny_bit_exact_on_board(board):
    m = zoo.get("regnet_x_tiny")
    program = mcuflow.compile(m.export(), target=get_board(board).core, calibration=m.calibration(16))
    assert MODEL_TIER_CONV[board] in {op["kernel"] for op in program.describe()["ops"]}
    x = m.evaluation(1)
    np.testing.assert_array_equal(device.run_on_board(program, x, board, timeout=600)[0], program.run(x)[0])
