"""Scalar-tier kernels (Armv6-M Thumb-1) against the host reference, bit for bit.

One program holds many differently shaped single layers (each its own model input and output),
compiled for cortex-m0 so the scalar kernels are selected; it runs on qemu-m0 (Cortex-M0, 16 KiB
of RAM: the layers are small) and qemu-m3 over a batch of random and extreme int8 inputs, and
every output must equal the host runtime's (which runs the reference kernels).
MCUFLOW_LARGE_SWEEP=1 adds a seeded sweep of random layer shapes on qemu-m3.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import rejected_on_host_sent_to_board, requires_cross  # noqa: E402
from test_dsp_kernels import (Branches, assert_board_matches_host, conv, large_bias, layer_of_op,  # noqa: E402
                              linear, samples, spread_scales)
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

SCALAR_BOARDS = ["qemu-m0", "qemu-m3"]


# (layer, kernel the scalar target must select)
def cases() -> list:
    torch.manual_seed(0)
    return [
        # pointwise: channel tails (depth % 8, out_c % 4), strides, activations, per-channel scales
        (conv(16, 8, 1, (3, 4)), "conv_s8_1x1_scalar"),
        (conv(7, 5, 1, (5, 6), stride=2), "conv_s8_1x1_scalar"),
        (conv(13, 9, 1, (3, 3), activation="relu6"), "conv_s8_1x1_scalar"),
        (conv(1, 3, 1, (3, 2)), "conv_s8_1x1_scalar"),
        (conv(33, 17, 1, (2, 3), activation="relu"), "conv_s8_1x1_scalar"),
        (conv(64, 64, 1, (2, 2)), "conv_s8_1x1_scalar"),
        (conv(24, 6, 1, (3, 2), activation="tiny"), "conv_s8_1x1_scalar"),
        (spread_scales(conv(9, 22, 1, (2, 3))), "conv_s8_1x1_scalar"),
        (large_bias(conv(8, 5, 1, (2, 2))), "conv_s8_1x1_scalar"),
        # deep rows: many packed sums per accumulator (PackedSums' 2^15 steps and wrapping sums)
        (conv(301, 6, 1, (2, 2)), "conv_s8_1x1_scalar"),
        # general conv: im2col with padding, strides, dilation, window tails
        (conv(3, 8, 3, (5, 4), padding=1), "conv_s8_scalar"),
        (conv(8, 6, 3, (7, 6), stride=2, padding=1), "conv_s8_scalar"),
        (conv(5, 7, (5, 3), (6, 5), padding=(2, 1)), "conv_s8_scalar"),
        (conv(1, 16, (10, 4), (21, 10), stride=2, padding=(5, 1), activation="relu"), "conv_s8_scalar"),
        (conv(6, 5, 3, (7, 7), padding=2, dilation=2), "conv_s8_scalar"),
        (conv(9, 4, 1, (3, 4), padding=1), "conv_s8_scalar"),
        (conv(5, 3, 2, (5, 7), stride=2), "conv_s8_scalar"),
        (large_bias(conv(8, 8, 3, (4, 4), padding=1)), "conv_s8_scalar"),
        (conv(2, 3, (1, 3), (4, 11), stride=(1, 3), padding=(0, 2), dilation=(1, 2)), "conv_s8_scalar"),
        # depthwise 3x3: borders, strides, dilation, asymmetric padding, channel counts
        (conv(8, 8, 3, (6, 5), padding=1, groups=8), "dwconv_s8_3x3_scalar"),
        (conv(6, 6, 3, (5, 6), groups=6), "dwconv_s8_3x3_scalar"),
        (conv(13, 13, 3, (7, 9), stride=(2, 1), padding=(1, 2), groups=13), "dwconv_s8_3x3_scalar"),
        (conv(7, 7, 3, (7, 7), padding=2, dilation=2, groups=7, activation="relu6"), "dwconv_s8_3x3_scalar"),
        (conv(5, 5, 3, (6, 6), stride=2, padding=1, groups=5, activation="tiny"), "dwconv_s8_3x3_scalar"),
        (conv(32, 32, 3, (3, 2), padding=1, groups=32, activation="relu"), "dwconv_s8_3x3_scalar"),
        (large_bias(conv(12, 12, 3, (4, 4), padding=1, groups=12)), "dwconv_s8_3x3_scalar"),
        (spread_scales(conv(9, 9, 3, (3, 3), padding=1, groups=9)), "dwconv_s8_3x3_scalar"),
        # depthwise, any window: odd and even tap counts (the odd last tap), one tap, strides, dilation
        (conv(6, 6, 5, (7, 8), stride=2, padding=2, groups=6, activation="relu6"), "dwconv_s8_scalar"),
        (conv(11, 11, 5, (6, 6), padding=2, groups=11), "dwconv_s8_scalar"),
        (conv(5, 5, (2, 4), (5, 6), padding=(1, 1), groups=5), "dwconv_s8_scalar"),
        (conv(7, 7, (1, 3), (4, 9), stride=(1, 2), padding=(0, 2), dilation=(1, 2), groups=7), "dwconv_s8_scalar"),
        (conv(9, 9, 1, (3, 4), groups=9), "dwconv_s8_scalar"),
        (conv(4, 4, 7, (7, 7), padding=3, groups=4, activation="relu"), "dwconv_s8_scalar"),
        (large_bias(conv(8, 8, 5, (5, 5), padding=2, groups=8)), "dwconv_s8_scalar"),
        # fully connected: single rows and several, feature tails, per-tensor and per-channel scales
        (linear(64, 12), "fc_s8_scalar"),
        (linear(37, 19, rows=6), "fc_s8_scalar"),
        (linear(1, 3), "fc_s8_scalar"),
        (linear(8, 9, rows=4, activation="relu"), "fc_s8_scalar"),
        (spread_scales(linear(16, 30, rows=3)), "fc_s8_scalar"),
        (linear(1024, 5, rows=2), "fc_s8_scalar"),
        # outside the scalar kernels: the reference kernel, with the reason
        (conv(4, 8, 3, (5, 5), padding=1, groups=4), "dwconv_s8"),
        (conv(3, 6, 5, (6, 6), padding=2, groups=3), "dwconv_s8"),
    ]


def compile_branches(layers: list, seed: int = 1):
    model = Branches(layers).eval()
    gen = torch.Generator().manual_seed(seed)
    example = tuple(torch.randn(layer.input_shape, generator=gen) for layer in layers)
    calibration = [tuple(torch.randn(layer.input_shape, generator=gen) for layer in layers) for _ in range(8)]
    ep = torch.export.export(model, example)
    return mcuflow.compile(ep, target="cortex-m0", calibration=calibration, io="int8")


@pytest.fixture(scope="module")
def branches():
    specs = cases()
    return specs, compile_branches([layer for layer, _ in specs])


def test_scalar_kernels_are_selected_where_they_apply(branches):
    specs, program = branches
    ops = program.metadata["ops"]
    assert sorted(layer_of_op(program)) == list(range(len(specs)))
    for op, layer in zip(ops, layer_of_op(program)):
        assert op["kernel"] == specs[layer][1], (layer, op)
        if op["kernel"].endswith("_scalar"):
            assert not op["reason"].startswith("reference"), op
        else:
            assert op["reason"].startswith("reference fallback: needs"), op


@pytest.mark.parametrize("board", SCALAR_BOARDS)
def test_scalar_kernels_match_host_bit_for_bit(branches, board):
    _, program = branches
    assert_board_matches_host(program, board, seed=2)


def test_device_rejects_prepared_inputs_that_disagree_with_the_reference_inputs(branches):
    """The scalar adapters recompute the folded bias and grouped weights from the reference's
    weights and bias: a program whose prepared input was altered (CRC fixed up) is refused at
    load, never run with different numbers, by the board and the host alike."""
    _, program = branches
    desc = program.describe()
    prepared = next(t for t in desc["tensors"] if t["name"].endswith(".scalar_prepared"))
    data = bytearray(program.data)
    data[constants_offset(data) + prepared["offset"]] ^= 0x01
    data = with_crc(data)
    altered = rejected_on_host_sent_to_board(program, bytes(data))
    with pytest.raises(device.DeviceError, match="bad_params"):
        device.run_on_board(altered, samples(altered, seed=3)[0], "qemu-m0")


@pytest.mark.skipif(os.environ.get("MCUFLOW_LARGE_SWEEP") != "1", reason="set MCUFLOW_LARGE_SWEEP=1")
@pytest.mark.parametrize("part", range(4))
def test_random_layer_sweep(part):
    rng = np.random.default_rng(500 + part)
    torch.manual_seed(500 + part)
    layers = []
    for _ in range(24):
        kind = rng.choice(["pointwise", "conv", "depthwise", "linear"])
        if kind == "linear":
            layers.append(linear(int(rng.integers(1, 200)), int(rng.integers(1, 70)),
                                 rows=int(rng.integers(1, 9)) if rng.random() < 0.5 else None))
            continue
        cin = int(rng.integers(1, 70))
        kh, kw = (1, 1) if kind == "pointwise" else (3, 3) if kind == "depthwise" else \
            (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        dilation = (1, 1) if rng.random() < 0.7 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        padding = (0, 0) if kind == "pointwise" else (int(rng.integers(0, kh)), int(rng.integers(0, kw)))
        hw = (int(rng.integers(dilation[0] * (kh - 1) + 1, 16)), int(rng.integers(dilation[1] * (kw - 1) + 1, 16)))
        activation = rng.choice([None, "relu", "relu6"])
        cout, groups = (cin, cin) if kind == "depthwise" else (int(rng.integers(1, 70)), 1)
        layers.append(conv(cin, cout, (kh, kw), hw, stride, padding, dilation, groups=groups, activation=activation))
    program = compile_branches(layers, seed=600 + part)
    assert any(op["kernel"].endswith("_scalar") for op in program.metadata["ops"])
    assert_board_matches_host(program, "qemu-m3", seed=700 + part)
