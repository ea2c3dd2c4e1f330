"""Grouped convolution (1 < groups < in_c, Conv2d and Conv1d) through the whole pipeline: float32
equals PyTorch eager, int8 stays within 5 % of the output range (test_ops.py's bounds for layers
with weights), on random groups, shapes, strides, dilations and padding; each tier's window conv
kernel takes them (the host verifies its prepared inputs and runs the reference's integers, so
every tier's program gives the same bytes); a ResNeXt block and the zoo's RegNetX. The boards:
tests/firmware/test_grouped_conv_on_boards.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import mcuflow
from mcuflow import zoo
from fake_quant import fake_quant_model
from test_ops import Fn, calibration, export, fp32_matches_eager_and_int8_stays_close, randn

TIER_CONV = {"cortex-m0": "conv_s8_scalar", "cortex-m4": "conv_s8_dsp", "cortex-m55": "conv_s8_mve"}


def kernels(program):
    return [op["kernel"] for op in program.describe()["ops"]]


def random_grouped_conv(seed: int, min_window: int = 1) -> tuple[nn.Module, tuple]:
    """A grouped Conv2d of random groups (2..6), channels per group, window, stride, dilation
    and padding, on a random input size its window fits; at least `min_window` window positions
    per group (the DSP kernel needs 4)."""
    rng = np.random.default_rng(seed)
    while True:
        groups = int(rng.integers(2, 7))
        cin, cout = groups * int(rng.integers(1, 6)), groups * int(rng.integers(1, 5))
        k = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        if k[0] * k[1] * (cin // groups) >= min_window:
            break
    stride, dilation = (int(rng.integers(1, 3)), int(rng.integers(1, 3))), (int(rng.integers(1, 3)), 1)
    padding = (int(rng.integers(0, 3)), int(rng.integers(0, 2)))
    hw = tuple(int(rng.integers(dilation[i] * (k[i] - 1) + 1, 10)) for i in range(2))
    torch.manual_seed(seed)
    conv = nn.Conv2d(cin, cout, k, stride=stride, padding=padding, dilation=dilation, groups=groups,
                     bias=bool(rng.integers(0, 2)))
    return Fn(lambda m, x: m.layers[0](x), conv), (1, cin) + hw


@pytest.mark.parametrize("seed", range(12))
def test_random_grouped_conv_fp32_matches_eager_and_int8_stays_close(seed):
    model, shape = random_grouped_conv(seed)
    fp32_matches_eager_and_int8_stays_close(model.eval(), [shape])


@pytest.mark.parametrize("seed", range(6))
def test_every_tier_runs_grouped_convs_on_its_window_kernel_with_the_references_integers(seed):
    model, shape = random_grouped_conv(100 + seed, min_window=4)
    # A following ReLU fuses into the kernel's clamp.
    model = Fn(lambda m, x: F.relu(m.layers[0](x)), model.layers[0]).eval()
    ep = export(model, [shape])
    x = [randn(shape, 7).numpy()]
    reference = mcuflow.compile(ep, target="reference", calibration=calibration([shape]))
    expected = reference.run(x)[0]
    for target, kernel in TIER_CONV.items():
        program = mcuflow.compile(ep, target=target, calibration=calibration([shape]))
        assert kernel in kernels(program), (target, kernels(program))
        np.testing.assert_array_equal(program.run(x)[0], expected)


CONV1D = {
    "grouped": nn.Conv1d(4, 6, 3, groups=2),
    "grouped_padded_strided": nn.Conv1d(6, 9, 5, stride=2, padding=2, groups=3),
    "grouped_dilated": nn.Conv1d(8, 4, 3, dilation=2, groups=4, bias=False),
}


@pytest.mark.parametrize("name", sorted(CONV1D))
def test_grouped_conv1d_fp32_matches_eager_and_int8_stays_close(name):
    layer = CONV1D[name]
    fp32_matches_eager_and_int8_stays_close(Fn(lambda m, x: m.layers[0](x), layer).eval(), [(1, layer.in_channels, 17)])


def test_groups_equal_to_the_channels_stay_depthwise_and_other_groups_run_as_conv():
    model = Fn(lambda m, x: m.layers[1](m.layers[0](x)), nn.Conv2d(8, 16, 3, groups=8, padding=1),
               nn.Conv2d(16, 8, 3, groups=4)).eval()
    program = mcuflow.compile(export(model, [(1, 8, 6, 6)]), target="reference", calibration=calibration([(1, 8, 6, 6)]))
    assert [k for k in kernels(program) if "conv" in k] == ["dwconv_s8", "conv_s8"]


class ResNeXtBlock(nn.Module):
    """ResNeXt's bottleneck (Xie et al. 2017): 1×1, grouped 3×3 of cardinality 8, 1×1, each with
    BatchNorm, the residual added before the last ReLU."""

    def __init__(self, channels: int = 32, width: int = 32, cardinality: int = 8):
        super().__init__()
        self.reduce = nn.Sequential(nn.Conv2d(channels, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.grouped = nn.Sequential(nn.Conv2d(width, width, 3, padding=1, groups=cardinality, bias=False),
                                     nn.BatchNorm2d(width), nn.ReLU())
        self.expand = nn.Sequential(nn.Conv2d(width, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x):
        return F.relu(self.expand(self.grouped(self.reduce(x))) + x)


def randomized_batch_norms(model: nn.Module, seed: int = 0) -> nn.Module:
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return model.eval()


def test_resnext_block_on_every_tier():
    torch.manual_seed(0)
    model = randomized_batch_norms(ResNeXtBlock())
    shape = (1, 32, 8, 8)
    fp32_matches_eager_and_int8_stays_close(model, [shape])
    ep = export(model, [shape])
    x = [randn(shape, 3).numpy()]
    outputs = []
    for target, kernel in TIER_CONV.items():
        program = mcuflow.compile(ep, target=target, calibration=calibration([shape]))
        assert kernel in kernels(program) and "conv_s8" not in kernels(program), (target, kernels(program))
        outputs.append(program.run(x)[0])
    for out in outputs[1:]:
        np.testing.assert_array_equal(out, outputs[0])


def test_regnet_x_tiny_float_equals_eager_and_int8_runs_on_every_tiers_kernels():
    """Its int8 error held to that of an ideal fake-quant simulation (tests/python/fake_quant.py),
    as the zoo's ViT's: random weights leave its class scores close together."""
    model = zoo.get("regnet_x_tiny")
    ep = model.export()
    x = model.evaluation(16)
    with torch.no_grad():
        reference = model.module(torch.from_numpy(x)).numpy()
    fp32 = mcuflow.compile(ep, target="cortex-m55", precision="fp32")
    assert np.abs(fp32.run(x)[0] - reference).max() <= 1e-4 * max(1.0, float(np.abs(reference).max()))
    calibration_samples = model.calibration(32)
    ideal = np.abs(fake_quant_model(ep, calibration_samples)(x) - reference).mean()
    outputs = []
    for target, kernel in TIER_CONV.items():
        program = mcuflow.compile(ep, target=target, calibration=calibration_samples)
        assert not program.fallbacks()
        used = kernels(program)
        # every convolution, grouped or not, on a tier kernel
        assert kernel in used and "conv_s8" not in used, (target, used)
        outputs.append(program.run(x)[0])
        error = np.abs(outputs[-1] - reference).mean()
        assert error <= 1.25 * ideal, f"{target}: int8 error {error:.4f}, fake-quant {ideal:.4f}"
    for out in outputs[1:]:
        np.testing.assert_array_equal(out, outputs[0])
