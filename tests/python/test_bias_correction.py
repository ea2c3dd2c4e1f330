"""Bias correction (docs/quantization.md "Bias correction"): a weighted layer's bias absorbs the mean
shift its rounded weights cause, so the program's per-channel mean output error on the calibration
data shrinks; the default corrects int4-weight layers only."""

import json

import numpy as np
import pytest
import torch
from torch import nn

import mcuflow
from mcuflow.errors import InputError


class GroupedStridedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2)

    def forward(self, x):
        return self.conv(x)


class Dense(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(48, 12, bias=False)  # the correction adds a bias

    def forward(self, x):
        return self.fc(x)


class ConvFlattenDense(nn.Module):
    """A linear layer reading a flattened NHWC feature map (fold_flatten_into_linear permutes its columns)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 5 * 5, 10)
        with torch.no_grad():  # weights in {-0.1, 0, 0.1}: exact at int8 and int4, so only the linear layer's round
            self.conv.weight.copy_(0.1 * torch.randint(-1, 2, self.conv.weight.shape))

    def forward(self, x):
        return self.fc(torch.flatten(torch.relu(self.conv(x)) + 0.5, 1))


CASES = {"conv": (GroupedStridedConv, (4, 9, 7)), "linear": (Dense, (48,)), "flattened": (ConvFlattenDense, (3, 5, 5))}


def setup_case(name: str):
    module, shape = CASES[name]
    torch.manual_seed(3)
    model = module().eval()
    rng = np.random.default_rng(5)
    # Inputs far from zero mean: a weight's rounding error then shifts the output's mean.
    x = (rng.random((96, *shape)) * 2.0 + 0.5).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    ep = torch.export.export(model, (torch.from_numpy(x[:1]),))
    return ep, x, expected


def channel_mean_error(program: mcuflow.Program, x: np.ndarray, expected: np.ndarray) -> float:
    """Sum over output channels of |mean error| over the samples (and positions)."""
    error = program.run([x])[0].reshape(expected.shape) - expected
    axes = tuple(i for i in range(error.ndim) if i != 1)
    return float(np.abs(error.mean(axis=axes)).sum())


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("weights", ["int4", "int8"])
def test_correction_removes_the_mean_shift_of_rounded_weights(name, weights):
    ep, x, expected = setup_case(name)
    plain = mcuflow.compile(ep, "cortex-m55", x, weights=weights, bias_correction=False)
    corrected = mcuflow.compile(ep, "cortex-m55", x, weights=weights, bias_correction=True)
    before, after = channel_mean_error(plain, x, expected), channel_mean_error(corrected, x, expected)
    assert after < 0.25 * before, (before, after)


def test_default_corrects_int4_weights_only():
    ep, x, _ = setup_case("conv")
    int8 = mcuflow.compile(ep, "cortex-m55", x)
    assert int8.device_image == mcuflow.compile(ep, "cortex-m55", x, bias_correction=False).device_image
    assert int8.device_image != mcuflow.compile(ep, "cortex-m55", x, bias_correction=True).device_image
    int4 = mcuflow.compile(ep, "cortex-m55", x, weights="int4")
    assert int4.device_image == mcuflow.compile(ep, "cortex-m55", x, weights="int4", bias_correction=True).device_image
    assert int4.device_image != mcuflow.compile(ep, "cortex-m55", x, weights="int4", bias_correction=False).device_image


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(bias_correction="yes"), "bias_correction must be True, False or None, got 'yes'"),
    (dict(bias_correction=True, precision="fp32"), "bias_correction applies to quantized programs"),
])
def test_bad_bias_correction_options(kwargs, fragment):
    ep, x, _ = setup_case("linear")
    with pytest.raises(InputError) as e:
        mcuflow.compile(ep, "cortex-m55", x[:4], **kwargs)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_cli_records_and_inspects_the_corrected_layers(tmp_path):
    from test_cli import assert_user_error, mcuflow as run_cli
    ep, x, _ = setup_case("conv")
    torch.export.save(ep, tmp_path / "conv.pt2")
    np.savez(tmp_path / "calib.npz", x=x)
    compile_args = ["compile", tmp_path / "conv.pt2", "--calibration", tmp_path / "calib.npz"]
    r = run_cli(*compile_args, "--bias-correction", "all", "-o", tmp_path / "p.mfp")
    assert r.returncode == 0, r.stderr
    described = json.loads(run_cli("inspect", tmp_path / "p.mfp", "--json").stdout)
    corrected = described["quantization"]["bias_corrected"]
    assert len(corrected) == 1
    text = run_cli("inspect", tmp_path / "p.mfp").stdout
    assert f"bias correction: 1 layer(s) ({corrected[0]})" in text, text
    r = run_cli(*compile_args, "--bias-correction", "some", "-o", tmp_path / "bad.mfp")
    assert r.returncode != 0 and "invalid choice: 'some'" in r.stderr and not (tmp_path / "bad.mfp").exists()
