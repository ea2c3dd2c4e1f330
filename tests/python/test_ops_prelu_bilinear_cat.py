"""PReLU, bilinear upsampling and cat / add with constant tensors through the whole
pipeline, against independent math: float32 against PyTorch eager; int8 against the op applied
in float64 to the dequantized int8 inputs, quantized with the program's output quantization.
(Mish, a lookup-table activation, is in test_ops.py's every-256-inputs test.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import mcuflow
from test_ops import Fn, calibration, dequantize, export, quantize, randn

TARGET = "reference"


def kernels(program):
    return [op["kernel"] for op in program.describe()["ops"]]


def int8_steps(model, shapes, program):
    """|program - exact| in output steps, on random int8 inputs."""
    rng = np.random.default_rng(11)
    qs = [rng.integers(-128, 128, size=s).astype(np.int8) for s in shapes]
    with torch.no_grad():
        real = model(*[torch.from_numpy(dequantize(q, spec)) for q, spec in zip(qs, program.inputs)]).numpy()
    got = program.run(qs)[0].astype(np.float64)
    assert got.shape == real.shape
    return np.abs(got - quantize(real, program.outputs[0]))


def fp32_matches_eager(model, shapes, ep):
    xs = [randn(s, 7 + i) for i, s in enumerate(shapes)]
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    with torch.no_grad():
        ref = model(*xs).numpy()
    np.testing.assert_allclose(fp32.run([x.numpy() for x in xs])[0], ref, rtol=1e-5, atol=1e-6)
    return fp32


# --------------------------------------------------------------------------------------------
# PReLU: int8 with two requantizations, the slopes symmetric int8 per tensor


PRELUS = {
    "one_slope_4d": (1, (1, 3, 4, 5)),
    "per_channel_4d": (3, (1, 3, 4, 5)),
    "per_channel_3d": (4, (1, 4, 6)),
    "per_channel_2d": (6, (1, 6)),
}


@pytest.mark.parametrize("name", sorted(PRELUS))
def test_prelu_int8_within_one_step_of_its_int8_slopes_and_fp32_matches_eager(name):
    channels, shape = PRELUS[name]
    prelu = nn.PReLU(channels)
    with torch.no_grad():
        prelu.weight.copy_(torch.linspace(-0.7, 1.3, channels) if channels > 1 else torch.tensor([0.3]))
    model = Fn(lambda m, x: m.layers[0](x), prelu).eval()
    ep = export(model, [shape])
    fp32_matches_eager(model, [shape], ep)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration([shape]), io="int8")
    assert kernels(program) == ["prelu_s8"]
    # The exact PReLU of the slopes the program holds: symmetric int8, scale max|alpha| / 127.
    alpha = prelu.weight.detach().double()
    scale = alpha.abs().max() / 127
    held = nn.PReLU(channels).double()
    with torch.no_grad():
        held.weight.copy_(torch.round(alpha / scale) * scale)
    held_model = Fn(lambda m, x: m.layers[0](x), held)
    assert int8_steps(held_model, [shape], program).max() <= 1


def test_prelu_after_conv_runs_nhwc_without_copies():
    model = Fn(lambda m, x: m.layers[1](m.layers[0](x)), nn.Conv2d(3, 4, 3), nn.PReLU(4)).eval()
    shapes = [(1, 3, 6, 6)]
    program = mcuflow.compile(export(model, shapes), target=TARGET, calibration=calibration(shapes))
    assert kernels(program) == ["quantize_f32_s8", "conv_s8", "prelu_s8", "dequantize_s8_f32"]
    x = randn(shapes[0], 2)
    with torch.no_grad():
        ref = model(x).numpy()
    assert np.abs(program.run([x.numpy()])[0] - ref).max() <= 0.05 * float(ref.max() - ref.min())


# --------------------------------------------------------------------------------------------
# bilinear upsampling: fixed-point weights, the input's quantization kept


BILINEAR = {
    "x2": dict(scale_factor=2, align_corners=False),
    "x2_align": dict(scale_factor=2, align_corners=True),
    "x1.5": dict(scale_factor=1.5, align_corners=False),
    "x2x3_align": dict(scale_factor=(2, 3), align_corners=True),
    "size": dict(size=(7, 9), align_corners=False),
    "size_align": dict(size=(7, 9), align_corners=True),
    "down": dict(size=(2, 3), align_corners=False),
    "to_one": dict(size=(1, 1), align_corners=True),
}


@pytest.mark.parametrize("name", sorted(BILINEAR))
def test_bilinear_int8_within_one_step_and_fp32_matches_eager(name):
    kw = BILINEAR[name]
    model = Fn(lambda m, x: F.interpolate(x, mode="bilinear", **kw))
    shapes = [(1, 3, 4, 5)]
    ep = export(model, shapes)
    fp32_matches_eager(model, shapes, ep)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes), io="int8")
    assert kernels(program) == ["resize_bilinear_s8"]
    assert int8_steps(model, shapes, program).max() <= 1


def test_upsample_module_and_segmentation_head():
    model = Fn(lambda m, x: m.layers[1](m.layers[0](x)) + x, nn.Conv2d(3, 3, 3, stride=2, padding=1),
               nn.Upsample(scale_factor=2, mode="bilinear")).eval()
    shapes = [(1, 3, 8, 6)]
    ep = export(model, shapes)
    fp32_matches_eager(model, shapes, ep)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes))
    assert "resize_bilinear_s8" in kernels(program)
    x = randn(shapes[0], 4)
    with torch.no_grad():
        ref = model(x).numpy()
    assert np.abs(program.run([x.numpy()])[0] - ref).max() <= 0.05 * float(ref.max() - ref.min())


# --------------------------------------------------------------------------------------------
# cat and add with constant tensors: the ViT class token and positional embedding


class ClassToken(nn.Module):
    def __init__(self, tokens=5, dim=8, pos_first=False):
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim, generator=g))
        self.pos_embed = nn.Parameter(0.5 * torch.randn(1, tokens + 1, dim, generator=g))
        self.pos_first = pos_first

    def forward(self, x):
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.pos_embed + x if self.pos_first else x + self.pos_embed


@pytest.mark.parametrize("pos_first", [False, True])
def test_class_token_cat_and_positional_embedding_add(pos_first):
    model = ClassToken(pos_first=pos_first).eval()
    shapes = [(1, 5, 8)]
    ep = export(model, shapes)
    fp32_matches_eager(model, shapes, ep)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes), io="int8")
    assert kernels(program) == ["concat_slice_s8", "concat_slice_s8", "add_s8"]
    # The add rescales both operands once: one step of its own rounding on top of the cat's.
    assert int8_steps(model, shapes, program).max() <= 1


def test_cat_of_a_constant_into_an_image_tensor():
    model = Fn(lambda m, x: torch.cat([x, torch.linspace(-1, 1, 20).reshape(1, 1, 4, 5)], dim=1))
    shapes = [(1, 3, 4, 5)]
    ep = export(model, shapes)
    fp32_matches_eager(model, shapes, ep)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes), io="int8")
    assert int8_steps(model, shapes, program).max() <= 1


def test_decomposed_prelu_and_mish_run_on_their_own_kernels():
    prelu = nn.PReLU(3)
    with torch.no_grad():
        prelu.weight.copy_(torch.tensor([0.2, -0.4, 1.1]))
    model = Fn(lambda m, x: m.layers[1](m.layers[0](x)), prelu, nn.Mish()).eval()
    shape = (1, 3, 4, 5)
    ep = export(model, [shape]).run_decompositions()
    keys = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert {"aten.exp.default", "aten.log1p.default", "aten.where.self"} <= keys  # as core ATen writes them
    x = randn(shape, 9)
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    assert kernels(fp32) == ["prelu_f32", "activation_f32"]
    with torch.no_grad():
        ref = model(x).numpy()
    np.testing.assert_allclose(fp32.run(x.numpy())[0], ref, rtol=1e-5, atol=1e-6)
    int8 = mcuflow.compile(ep, target=TARGET, calibration=calibration([shape]))
    assert kernels(int8) == ["quantize_f32_s8", "prelu_s8", "lut_s8", "dequantize_s8_f32"]
    assert [n for n in ep.graph.nodes if str(n.target) == "aten.exp.default"]  # the user's program is unchanged
