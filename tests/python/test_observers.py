"""Calibration range observers (mcuflow.compile(observer=...), mcuflow compile --observer): on a
calibration set with rare huge inputs, percentile and MSE ranges give a smaller held-out output
error than min/max; the choice is recorded in the program; bad options are one-line errors."""

import json

import numpy as np
import pytest
import torch
from torch import nn

import mcuflow
from mcuflow.errors import InputError
from test_cli import assert_user_error, mcuflow as run_cli


FEATURES = 128


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(3)
            self.fc1 = nn.Linear(FEATURES, 32)
            self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def outlier_calibration(samples: int = 4000) -> np.ndarray:
    """Standard normal inputs with one glitch at +60 and one at -60 among the 512,000 values.
    Clipping a glitch to c costs (60 - c)² while narrowing the range saves every value's rounding
    error, (120² - (2c)²) / 255² / 12 each, so MSE clips once there are ~400,000 values per
    glitch a side; percentile 99.99 leaves 51 values beyond each side, the glitches among them."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((samples, FEATURES)).astype(np.float32)
    flat = x.reshape(-1)
    plus, minus = rng.choice(flat.size, 2, replace=False)
    flat[plus], flat[minus] = 60.0, -60.0
    return x


@pytest.fixture(scope="module")
def setup():
    model = MLP().eval()
    ep = torch.export.export(model, (torch.zeros(1, FEATURES),))
    held_out = np.random.default_rng(2).standard_normal((200, FEATURES)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(held_out)).numpy()
    return ep, outlier_calibration(), held_out, expected


def held_out_error(program: mcuflow.Program, held_out, expected) -> float:
    outputs = program.run([held_out])[0]  # the leading dimension is the batch
    assert outputs.shape == expected.shape
    return float(np.abs(outputs - expected).mean())


def test_percentile_and_mse_beat_minmax_on_outlier_calibration(setup):
    ep, calibration, held_out, expected = setup
    programs = {name: mcuflow.compile(ep, "cortex-m55", calibration, observer=name)
                for name in ("minmax", "percentile", "mse", "entropy")}
    errors = {name: held_out_error(p, held_out, expected) for name, p in programs.items()}
    # min/max spends the input's 255 steps on ±60 (step 0.47 for values mostly within ±3).
    assert errors["percentile"] < errors["minmax"] / 2, errors
    assert errors["mse"] < errors["minmax"] * 0.75, errors
    assert errors["entropy"] < errors["minmax"] / 2, errors  # KL gives the two glitches up, as percentile
    # The input's range as each observer chose it, against the calibration data's own figures.
    quant = {name: p.metadata["quantization"] for name, p in programs.items()}
    assert quant["minmax"] == {"observer": "minmax"}
    assert quant["percentile"]["percentile"] == 99.99
    values = np.sort(calibration.reshape(-1))
    beyond = int(values.size * 0.0001)  # values past the 99.99th percentile on each side
    bin_width = 120 / quant["mse"]["bins"]
    ranges = {name: {n["tensor"]: n for n in quant[name]["narrowed"]} for name in ("percentile", "mse")}
    x_pct, x_mse = ranges["percentile"]["x"], ranges["mse"]["x"]
    assert x_pct["observed"] == x_mse["observed"] == [-60, 60]
    assert x_pct["range"][0] == pytest.approx(values[beyond], abs=bin_width)
    assert x_pct["range"][1] == pytest.approx(values[-1 - beyond], abs=bin_width)
    assert 60 > x_mse["range"][1] > x_pct["range"][1] + 1 and -60 < x_mse["range"][0] < x_pct["range"][0] - 1
    x_kl = {n["tensor"]: n for n in quant["entropy"]["narrowed"]}["x"]
    assert 3 < x_kl["range"][1] < 30 and -30 < x_kl["range"][0] < -3  # the bulk kept, the glitches clipped


def test_percentile_100_is_minmax_and_summary_names_the_observer(setup):
    ep, calibration, _, _ = setup
    calibration = calibration[:200]
    minmax = mcuflow.compile(ep, "cortex-m55", calibration, observer="minmax")
    full = mcuflow.compile(ep, "cortex-m55", calibration, observer="percentile", percentile=100)
    # The device runs the same bytes: only the metadata says how the ranges were chosen.
    assert minmax.device_image == full.device_image
    assert full.metadata["quantization"]["narrowed"] == []
    summary = mcuflow.compile(ep, "cortex-m55", calibration, observer="mse").summary()
    assert "activation ranges: mse observer (2048-bin histograms)" in summary
    assert "activation ranges: minmax" in minmax.summary()


def test_int8_default_is_mse_and_other_precisions_keep_the_observed_range(setup):
    ep, calibration, _, _ = setup
    calibration = calibration[:200]
    default = mcuflow.compile(ep, "cortex-m55", calibration)
    assert default.metadata["quantization"]["observer"] == "mse"
    assert default.device_image == mcuflow.compile(ep, "cortex-m55", calibration, observer="mse").device_image
    assert default.device_image != mcuflow.compile(ep, "cortex-m55", calibration, observer="minmax").device_image
    int16 = mcuflow.compile(ep, "cortex-m55", calibration, precision="int16")
    assert int16.metadata["quantization"] == {"observer": "minmax"}
    mcuflow.compile(ep, "cortex-m55", precision="fp32")  # no observer to refuse


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(observer="kl"), "unknown observer 'kl' (minmax, percentile, mse, entropy)"),
    (dict(observer="percentile", percentile=50), "above 50 and at most 100, got 50"),
    (dict(observer="percentile", percentile=float("nan")), "above 50 and at most 100"),
    (dict(observer="percentile", percentile="99"), "above 50 and at most 100"),
    (dict(observer="mse", percentile=99.9), "percentile applies to observer 'percentile' only"),
    (dict(percentile=99.9), "percentile applies to observer 'percentile' only"),
    (dict(observer="mse", precision="fp32"), "applies to int8 compilation only"),
])
def test_bad_observer_options(setup, kwargs, fragment):
    ep, calibration, _, _ = setup
    with pytest.raises(InputError) as e:
        mcuflow.compile(ep, "cortex-m55", calibration[:4], **kwargs)
    assert fragment in str(e.value) and "\n" not in str(e.value)


@pytest.fixture(scope="module")
def cli_files(setup, tmp_path_factory):
    ep, calibration, _, _ = setup
    d = tmp_path_factory.mktemp("observers")
    torch.export.save(ep, d / "mlp.pt2")
    np.savez(d / "calib.npz", x=calibration[:400])
    return d


def test_cli_observer_is_recorded_and_inspected(cli_files):
    d = cli_files
    r = run_cli("compile", d / "mlp.pt2", "--calibration", d / "calib.npz", "--observer", "percentile",
                "--percentile", "99.9", "-o", d / "p.mfp")
    assert r.returncode == 0, r.stderr
    text = run_cli("inspect", d / "p.mfp")
    assert text.returncode == 0 and "activation ranges: percentile 99.9 observer" in text.stdout, text.stdout
    described = json.loads(run_cli("inspect", d / "p.mfp", "--json").stdout)
    assert described["quantization"]["observer"] == "percentile" and described["quantization"]["narrowed"]


@pytest.mark.parametrize("args, fragment", [
    (["--observer", "histogram"], "unknown observer 'histogram'"),
    (["--observer", "percentile", "--percentile", "abc"], "--percentile takes a number"),
    (["--observer", "percentile", "--percentile", "101"], "above 50 and at most 100, got 101.0"),
    (["--observer", "percentile", "--percentile", "nan"], "above 50 and at most 100"),
    (["--percentile", "99"], "percentile applies to observer 'percentile' only"),
    (["--observer", "mse", "--precision", "fp32"], "applies to int8 compilation only"),
])
def test_cli_bad_observer_options(cli_files, args, fragment):
    d = cli_files
    r = run_cli("compile", d / "mlp.pt2", "--calibration", d / "calib.npz", *args, "-o", d / "bad.mfp")
    assert_user_error(r, fragment)
    assert not (d / "bad.mfp").exists()
