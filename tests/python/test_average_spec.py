"""The output spec of an average (OutputQuant::kAverage, docs/quantization.md): an int8 average
over the whole image whose output range is at least 2x narrower than its input's spec gets a spec
of its own and is lowered onto reduce_s8 (its sums requantized once; every tier's reduce kernel),
within one output step of the average of the dequantized inputs; otherwise it keeps its input's
spec and the avgpool kernels (every tier's, bit for bit the same integers)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mcuflow
from test_ops import Fn, dequantize, export, quantize

SHAPE = (1, 8, 6, 5)
WHOLE_IMAGE_AVERAGES = {
    "adaptive_avg_pool2d": lambda m, x: F.adaptive_avg_pool2d(x, 1),
    "mean_hw": lambda m, x: x.mean(dim=(2, 3)),
    "avg_pool2d_whole": lambda m, x: F.avg_pool2d(x, (6, 5)),
}


def calibration(offset: float, shape=SHAPE, n: int = 24, std: float = 3.0):
    """Inputs whose average lies near `offset` and whose values spread wider (by `std`)."""
    g = torch.Generator().manual_seed(5)
    return [(torch.randn(*shape, generator=g) * std + offset,) for _ in range(n)]


def spec(io):
    return io["scale"], io["zero_point"]


def kernels(program):
    return [op["kernel"] for op in program.describe()["ops"]]


@pytest.mark.parametrize("name", sorted(WHOLE_IMAGE_AVERAGES))
def test_narrow_whole_image_average_gets_its_own_spec_within_one_step(name):
    model = Fn(WHOLE_IMAGE_AVERAGES[name])
    program = mcuflow.compile(export(model, [SHAPE]), target="reference", calibration=calibration(0.0), io="int8")
    spec_in, spec_out = program.inputs[0], program.outputs[0]
    assert spec_out["scale"] * 4 <= spec_in["scale"], (spec(spec_in), spec(spec_out))
    assert kernels(program) == ["reduce_s8"]
    q = np.random.default_rng(3).integers(-128, 128, size=SHAPE).astype(np.int8)
    real = model(torch.from_numpy(dequantize(q, spec_in))).numpy()  # float64
    steps = np.abs(program.run([q])[0].astype(np.float64) - quantize(real, spec_out))
    assert steps.max() <= 1


TIERS = {"cortex-m0": "scalar", "cortex-m4": "dsp", "cortex-m55": "mve"}


@pytest.mark.parametrize("target", sorted(TIERS))
def test_wide_average_keeps_its_input_spec_and_the_tier_avgpool(target):
    """Averages near 6 of inputs spread over about [1.5, 10.5] (std 1): the output range [0, 6] is
    not 2x narrower than the input's [0, 10.5]."""
    model = Fn(WHOLE_IMAGE_AVERAGES["adaptive_avg_pool2d"])
    program = mcuflow.compile(export(model, [SHAPE]), target=target, calibration=calibration(6.0, std=1.0), io="int8")
    assert spec(program.outputs[0]) == spec(program.inputs[0])
    assert kernels(program)[0] == f"avgpool_s8_{TIERS[target]}"


@pytest.mark.parametrize("target", sorted(TIERS))
def test_average_two_to_four_times_narrower_gets_its_own_spec_and_the_tier_reduce(target):
    """Averages near 6 of inputs spread over about [-3, 15] (std 3): the output range [0, 6] is about
    3x narrower than the input's."""
    model = Fn(WHOLE_IMAGE_AVERAGES["adaptive_avg_pool2d"])
    program = mcuflow.compile(export(model, [SHAPE]), target=target, calibration=calibration(6.0), io="int8")
    spec_in, spec_out = program.inputs[0], program.outputs[0]
    assert 2 * spec_out["scale"] <= spec_in["scale"] < 4 * spec_out["scale"], (spec(spec_in), spec(spec_out))
    assert kernels(program) == [f"reduce_s8_{TIERS[target]}"]


def test_window_average_keeps_its_input_spec():
    """A 2x2 average pool is not over the whole image: its kernels need one spec in and out."""
    model = Fn(lambda m, x: F.avg_pool2d(x, 2))
    shape = (1, 8, 6, 6)
    program = mcuflow.compile(export(model, [shape]), target="reference", calibration=calibration(0.0, shape), io="int8")
    assert spec(program.outputs[0]) == spec(program.inputs[0])
    assert kernels(program) == ["avgpool_s8"]


def test_int16_average_keeps_its_input_spec():
    model = Fn(WHOLE_IMAGE_AVERAGES["adaptive_avg_pool2d"])
    program = mcuflow.compile(export(model, [SHAPE]), target="reference", calibration=calibration(0.0),
                              precision="int16")
    assert "avgpool_s16" in kernels(program)
    x = calibration(0.0)[0][0]
    np.testing.assert_allclose(program.run([x.numpy()])[0], model(x).numpy(), atol=0.01)
