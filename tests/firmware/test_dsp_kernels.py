"""DSP-tier kernels (Armv7E-M / Armv8-M DSP extension) against the host reference, bit for bit.

One program holds many differently shaped single layers (each its own model input and output),
compiled for cortex-m4 so the DSP kernels are selected; it runs on every board with the DSP
extension (the M55 has it too) over a batch of random and extreme int8 inputs, and every output
must equal the host runtime's (which runs the reference kernels). MCUFLOW_LARGE_SWEEP=1 adds a
seeded sweep of random layer shapes.
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
from mcuflow import device  # noqa: E402
from fwutil import rejected_on_host_sent_to_board, requires_cross  # noqa: E402
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

DSP_BOARDS = ["qemu-m4", "qemu-m7", "qemu-m33", "qemu-m55"]
RANDOM_SAMPLES = 6


class Layer(nn.Module):
    """One layer and an optional activation; `input_shape` is its model input (batch 1)."""

    def __init__(self, layer: nn.Module, input_shape: tuple, activation: str | None = None):
        super().__init__()
        self.layer, self.input_shape, self.activation = layer, input_shape, activation

    def forward(self, x):
        y = self.layer(x)
        if self.activation == "relu":
            return torch.relu(y)
        if self.activation == "relu6":
            return torch.clamp(y, 0.0, 6.0)
        if self.activation == "tiny":  # a tiny output range: requantization multipliers above 1/2
            return torch.clamp(y, 0.0, 0.002)
        return y


class Branches(nn.Module):
    """Layer i applied to model input i; one output per layer."""

    def __init__(self, layers: list[Layer]):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, *xs):
        return tuple(layer(x) for layer, x in zip(self.layers, xs))


def conv(cin, cout, k, hw, stride=1, padding=0, dilation=1, groups=1, activation=None):
    return Layer(nn.Conv2d(cin, cout, k, stride=stride, padding=padding, dilation=dilation, groups=groups),
                 (1, cin) + tuple(hw), activation)


def linear(fin, fout, rows=None, activation=None):
    return Layer(nn.Linear(fin, fout), (1, fin) if rows is None else (1, rows, fin), activation)


def large_bias(layer: Layer) -> Layer:
    """Tiny weights and a large bias: accumulators beyond the fast requantization's range."""
    with torch.no_grad():
        layer.layer.weight.mul_(1e-4)
        layer.layer.bias.fill_(40.0)
    return layer


def spread_scales(layer: Layer) -> Layer:
    """Output channels scaled over twelve decades: requantization shifts from 0 to beyond the
    fast path's range, next to each other in one op."""
    with torch.no_grad():
        channels = layer.layer.weight.shape[0]
        scale = torch.logspace(-6, 6, channels).reshape(-1, *([1] * (layer.layer.weight.dim() - 1)))
        layer.layer.weight.mul_(scale)
        layer.layer.bias.mul_(scale.flatten())
    return layer


def random_depthwise_3x3(seed: int, count: int) -> list[tuple[Layer, str]]:
    """Seeded random layers for dwconv_s8_3x3_dsp: channel counts (tails of 1-3), heights, widths
    (odd and even, pairs of columns straddling the padding or not), vertical strides, padding."""
    rng = np.random.default_rng(seed)
    layers = []
    for _ in range(count):
        c, h, w = int(rng.integers(1, 80)), int(rng.integers(3, 12)), int(rng.integers(3, 24))
        padding = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
        stride = (int(rng.integers(1, 3)), 1)
        layers.append((conv(c, c, 3, (h, w), stride=stride, padding=padding, groups=c,
                            activation=[None, "relu"][int(rng.integers(0, 2))]), "dwconv_s8_3x3_dsp"))
    return layers


# (layer, kernel the DSP target must select)
def cases() -> list[tuple[Layer, str]]:
    torch.manual_seed(0)
    return random_depthwise_3x3(seed=17, count=4) + [
        # pointwise: channel tails (in_c % 4), partial pixel blocks, strides, activations
        (conv(16, 8, 1, (5, 7)), "conv_s8_1x1_dsp"),
        (conv(7, 5, 1, (9, 6), stride=2), "conv_s8_1x1_dsp"),
        (conv(13, 9, 1, (5, 3), activation="relu6"), "conv_s8_1x1_dsp"),
        (conv(4, 3, 1, (3, 3)), "conv_s8_1x1_dsp"),
        (conv(33, 17, 1, (4, 5), activation="relu"), "conv_s8_1x1_dsp"),
        (conv(64, 64, 1, (5, 5)), "conv_s8_1x1_dsp"),
        (conv(24, 6, 1, (3, 5), activation="tiny"), "conv_s8_1x1_dsp"),
        (spread_scales(conv(4, 64, 1, (5, 6))), "conv_s8_1x1_dsp"),
        # the pair kernel's multiply loop entered at every step (groups % 16 = 0 ... 15), odd pixel
        # counts (a last pixel alone), odd channel counts, strides
        (conv(28, 4, 1, (2, 3)), "conv_s8_1x1_dsp"),
        (conv(32, 6, 1, (3, 2)), "conv_s8_1x1_dsp"),
        (conv(44, 4, 1, (2, 2)), "conv_s8_1x1_dsp"),
        (conv(48, 2, 1, (3, 3)), "conv_s8_1x1_dsp"),
        (conv(52, 4, 1, (1, 3)), "conv_s8_1x1_dsp"),
        (conv(56, 6, 1, (2, 2)), "conv_s8_1x1_dsp"),
        (conv(40, 10, 1, (3, 5)), "conv_s8_1x1_dsp"),
        (conv(36, 2, 1, (2, 3)), "conv_s8_1x1_dsp"),
        (conv(8, 6, 1, (7, 3), stride=(2, 1)), "conv_s8_1x1_dsp"),
        (conv(12, 4, 1, (4, 4)), "conv_s8_1x1_dsp"),
        (conv(20, 14, 1, (5, 5), stride=2), "conv_s8_1x1_dsp"),
        (conv(24, 16, 1, (3, 3)), "conv_s8_1x1_dsp"),
        (conv(60, 8, 1, (2, 2)), "conv_s8_1x1_dsp"),
        (conv(128, 12, 1, (3, 1)), "conv_s8_1x1_dsp"),
        (conv(64, 7, 1, (4, 4)), "conv_s8_1x1_dsp"),
        # general conv: im2col with padding, strides, dilation, window tails
        (conv(3, 8, 3, (7, 6), padding=1), "conv_s8_dsp"),
        (conv(8, 12, 3, (9, 8), stride=2, padding=1), "conv_s8_dsp"),
        (conv(6, 7, (5, 3), (8, 7), padding=(2, 1)), "conv_s8_dsp"),
        (conv(1, 16, (10, 4), (49, 10), stride=2, padding=(5, 1), activation="relu"), "conv_s8_dsp"),
        (conv(16, 8, 3, (9, 9), padding=2, dilation=2), "conv_s8_dsp"),
        (conv(16, 8, 1, (4, 6), padding=1), "conv_s8_dsp"),
        (conv(5, 3, 2, (7, 9), stride=2), "conv_s8_dsp"),
        (conv(4, 5, 3, (6, 5), activation="relu"), "conv_s8_dsp"),
        (large_bias(conv(8, 8, 3, (5, 5), padding=1)), "conv_s8_dsp"),
        (conv(2, 3, (1, 3), (5, 11), stride=(1, 3), padding=(0, 2), dilation=(1, 2)), "conv_s8_dsp"),
        # depthwise 3x3, horizontal stride 1: channel tails, channel chunks, vertical strides, padding
        (conv(8, 8, 3, (6, 5), padding=1, groups=8), "dwconv_s8_3x3_dsp"),
        (conv(6, 6, 3, (5, 6), groups=6), "dwconv_s8_3x3_dsp"),
        (conv(13, 13, 3, (7, 9), stride=(2, 1), padding=(1, 2), groups=13), "dwconv_s8_3x3_dsp"),
        (conv(38, 38, 3, (5, 60), padding=1, groups=38, activation="relu"), "dwconv_s8_3x3_dsp"),
        (conv(4, 4, 3, (5, 5), padding=1, groups=4, activation="tiny"), "dwconv_s8_3x3_dsp"),
        (large_bias(conv(12, 12, 3, (4, 4), padding=1, groups=12)), "dwconv_s8_3x3_dsp"),
        # odd output widths (a last single pixel), one output column, padding on one side only
        (conv(64, 64, 3, (25, 5), padding=1, groups=64, activation="relu"), "dwconv_s8_3x3_dsp"),
        (conv(7, 7, 3, (4, 1), padding=1, groups=7), "dwconv_s8_3x3_dsp"),
        (conv(9, 9, 3, (5, 5), padding=(1, 0), groups=9), "dwconv_s8_3x3_dsp"),
        # other depthwise: strides, dilation, larger and non-square windows
        (conv(13, 13, 3, (9, 7), stride=2, padding=1, groups=13), "dwconv_s8_dsp"),
        (conv(16, 16, 5, (7, 7), padding=2, groups=16), "dwconv_s8_dsp"),
        (conv(7, 7, 3, (8, 8), padding=2, dilation=2, groups=7, activation="relu6"), "dwconv_s8_dsp"),
        (conv(5, 5, (3, 1), (7, 4), stride=(2, 1), padding=(1, 0), groups=5), "dwconv_s8_dsp"),
        (large_bias(conv(6, 6, 3, (5, 5), stride=2, padding=1, groups=6)), "dwconv_s8_dsp"),
        # fully connected: single rows, blocks of four rows plus leftovers, feature tails
        (linear(64, 12), "fc_s8_dsp"),
        (linear(37, 19, rows=6), "fc_s8_dsp"),
        (linear(5, 3), "fc_s8_dsp"),
        (linear(8, 9, rows=4, activation="relu"), "fc_s8_dsp"),
        (spread_scales(linear(16, 48, rows=5)), "fc_s8_dsp"),
        # outside the DSP kernels' constraints: the reference kernel, with the reason
        (conv(3, 4, 1, (3, 3)), "conv_s8"),
        (conv(4, 8, 3, (5, 5), padding=1, groups=4), "dwconv_s8"),
        (conv(3, 3, 7, (8, 8), padding=3, groups=3), "dwconv_s8"),
        (linear(3, 5), "fc_s8"),
    ]


def compile_branches(layers: list[Layer], seed: int = 1):
    model = Branches(layers).eval()
    gen = torch.Generator().manual_seed(seed)
    example = tuple(torch.randn(layer.input_shape, generator=gen) for layer in layers)
    calibration = [tuple(torch.randn(layer.input_shape, generator=gen) for layer in layers) for _ in range(8)]
    ep = torch.export.export(model, example)
    return mcuflow.compile(ep, target="cortex-m4", calibration=calibration, io="int8")


def samples(program, seed: int) -> list[list[np.ndarray]]:
    """Random int8 inputs, then the extremes (all -128, all 127)."""
    rng = np.random.default_rng(seed)
    shapes = [spec["shape"] for spec in program.inputs]
    batch = [[rng.integers(-128, 128, size=s, dtype=np.int8) for s in shapes] for _ in range(RANDOM_SAMPLES)]
    return batch + [[np.full(s, v, dtype=np.int8) for s in shapes] for v in (-128, 127)]


def assert_board_matches_host(program, board: str, seed: int) -> None:
    batch = samples(program, seed)
    kernels = {layer: op["kernel"] for layer, op in zip(layer_of_op(program), program.metadata["ops"])}
    fw = device.cached_build(program, board)
    on_board, _ = device.run_elf_on_inputs(fw, program, batch, board)
    for k, (sample, outputs) in enumerate(zip(batch, on_board)):
        on_host = program.run(sample)
        for j, (b, h) in enumerate(zip(outputs, on_host)):
            assert b.dtype == h.dtype and b.shape == h.shape
            assert np.array_equal(b, h), (f"{board}: sample {k}, layer {j} ({kernels[j]}): "
                                          f"{int(np.sum(b != h))} of {b.size} outputs differ from the host")


@pytest.fixture(scope="module")
def branches():
    specs = cases()
    return specs, compile_branches([layer for layer, _ in specs])


def layer_of_op(program) -> list[int]:
    """For each op, the index of the layer (model input xs_<i>) it reads."""
    desc = program.describe()
    names = [desc["tensors"][op["inputs"][0]]["name"] for op in desc["ops"]]
    assert all(name.startswith("xs_") for name in names), names
    return [int(name[len("xs_"):]) for name in names]


def test_dsp_kernels_are_selected_where_they_apply(branches):
    specs, program = branches
    ops = program.metadata["ops"]
    assert sorted(layer_of_op(program)) == list(range(len(specs)))
    for op, layer in zip(ops, layer_of_op(program)):
        assert op["kernel"] == specs[layer][1], (layer, op)
        if op["kernel"].endswith("_dsp"):
            assert not op["reason"].startswith("reference"), op
        else:
            assert op["reason"].startswith("reference fallback: needs"), op


@pytest.mark.parametrize("board", DSP_BOARDS)
def test_dsp_kernels_match_host_bit_for_bit(branches, board):
    _, program = branches
    assert_board_matches_host(program, board, seed=2)


# (kernel, byte of its first op's prepared input to alter): the pointwise kernel's first accumulator
# start, and its first channel's right shift (word 2 + 4 * 4 groups + 2 of a 16-channel input), a
# depthwise weight pair.
TAMPERED = [("conv_s8_1x1_dsp", 0), ("conv_s8_1x1_dsp", 4 * 20), ("dwconv_s8_3x3_dsp", 0)]


@pytest.mark.parametrize("kernel,byte", TAMPERED)
def test_device_rejects_prepared_weights_that_disagree_with_the_reference_weights(branches, kernel, byte):
    """The DSP adapters recompute what the compiler prepared from the reference's weights and
    tables: a program whose prepared input was altered (CRC fixed up) is refused at load, never
    run with different numbers, by the board and the host alike."""
    _, program = branches
    desc = program.describe()
    op = next(o for o, meta in zip(desc["ops"], program.metadata["ops"]) if meta["kernel"] == kernel)
    prepared = next(desc["tensors"][i] for i in op["inputs"]
                    if desc["tensors"][i]["name"].endswith(".dsp_prepared"))
    data = bytearray(program.data)
    data[constants_offset(program.data) + prepared["offset"] + byte] ^= 0x01
    data = with_crc(data)
    altered = rejected_on_host_sent_to_board(program, bytes(data))
    with pytest.raises(device.DeviceError, match="bad_params"):
        device.run_on_board(altered, samples(altered, seed=3)[0], "qemu-m4")


@pytest.mark.skipif(os.environ.get("MCUFLOW_LARGE_SWEEP") != "1", reason="set MCUFLOW_LARGE_SWEEP=1")
@pytest.mark.parametrize("part", range(4))
def test_random_layer_sweep(part):
    rng = np.random.default_rng(100 + part)
    torch.manual_seed(100 + part)
    layers = []
    for _ in range(24):
        kind = rng.choice(["pointwise", "conv", "depthwise", "linear"])
        if kind == "linear":
            layers.append(linear(int(rng.integers(4, 200)), int(rng.integers(1, 70)),
                                 rows=int(rng.integers(1, 9)) if rng.random() < 0.5 else None))
            continue
        cin = int(rng.integers(1, 40))
        kh, kw = (1, 1) if kind == "pointwise" else (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        dilation = (1, 1) if rng.random() < 0.7 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        padding = (0, 0) if kind == "pointwise" else (int(rng.integers(0, kh)), int(rng.integers(0, kw)))
        hw = (int(rng.integers(dilation[0] * (kh - 1) + 1, 20)), int(rng.integers(dilation[1] * (kw - 1) + 1, 20)))
        if kind == "depthwise":
            layers.append(conv(cin, cin, (kh, kw), hw, stride, padding, dilation, groups=cin,
                               activation=rng.choice([None, "relu", "relu6"])))
        else:
            layers.append(conv(cin, int(rng.integers(1, 40)), (kh, kw), hw, stride, padding, dilation,
                               activation=rng.choice([None, "relu", "relu6"])))
    program = compile_branches(layers, seed=200 + part)
    assert any(op["kernel"].endswith("_dsp") for op in program.metadata["ops"])
    for board in ("qemu-m4", "qemu-m7"):
        assert_board_matches_host(program, board, seed=300 + part)
