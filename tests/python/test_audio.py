"""mcuflow.audio: LogMel (framing, Hann window and DFT as one strided Conv1d, power, HTK mel
filterbank as a 1x1 Conv1d, log) against its numpy reference (rfft), compiled to fp32 and int8
programs, and raw samples -> LogMel -> a small CNN as one program."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

import mcuflow
from mcuflow.audio import LogMel, coloured_noise, frame_count, log_mel_reference, mel_filterbank

TARGET = "cortex-m4"
SAMPLES = 4000  # a quarter second at 16 kHz: 22 frames of 512 with hop 160


def signals(seed, n, samples=SAMPLES):
    rng = np.random.default_rng(seed)
    return [coloured_noise(rng, samples) for _ in range(n)]


def export(model, samples=SAMPLES):
    return torch.export.export(model.eval(), (torch.from_numpy(signals(99, 1, samples)[0])[None],))


def int8_program(model, samples=SAMPLES, target=TARGET, calibration=16):
    """int8 with 99th-percentile ranges: minmax ranges spend the 8 bits of the power on rare peaks."""
    cal = [(torch.from_numpy(x)[None],) for x in signals(7, calibration, samples)]
    return mcuflow.compile(export(model, samples), target=target, calibration=cal, observer="percentile",
                           percentile=99.0)


CONFIGS = {
    "default": {},
    "window 400 in 512, normalized": {"win_length": 400, "normalize": True},
    "n_fft 256, hop 128, 32 mels, 8 kHz": {"sample_rate": 8000, "n_fft": 256, "hop_length": 128, "n_mels": 32,
                                           "f_min": 50.0},
    "odd n_fft 255": {"n_fft": 255, "hop_length": 100, "n_mels": 24},
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_module_matches_the_numpy_reference(name):
    kw = CONFIGS[name]
    module = LogMel(**kw)
    for x in signals(1, 3) + [np.float32(1e-4) * signals(2, 1)[0]]:  # and a very quiet one (eps matters)
        ref = log_mel_reference(x, **kw)
        with torch.no_grad():
            got = module(torch.from_numpy(x)[None]).numpy()[0]
        assert got.shape == ref.shape == (module.n_mels, module.frames(x.size))
        assert np.abs(got - ref).max() < 1e-4  # float32 convolutions: 1e-5 seen


def test_filterbank_is_htk_triangles():
    fb = mel_filterbank(16000, 512, 40)
    assert fb.shape == (40, 257) and fb.min() == 0.0 and fb.max() <= 1.0
    peaks = fb.argmax(axis=1)
    assert (np.diff(peaks) >= 0).all() and peaks[-1] > 200  # centres rise up to near Nyquist
    mel = 2595.0 * np.log10(1.0 + np.array([0.0, 8000.0]) / 700.0)
    centre = 700.0 * (10.0 ** ((mel[0] + (mel[1] - mel[0]) / 41) / 2595.0) - 1.0)  # first filter's centre
    assert abs(peaks[0] * 16000 / 512 - centre) <= 16000 / 512


def test_frame_count_and_too_short_input():
    assert frame_count(4000, 512, 160) == 22 == LogMel().frames(4000)
    with pytest.raises(ValueError):
        frame_count(100, 512, 160)
    with pytest.raises(ValueError):
        LogMel(n_fft=256, win_length=300)


# DFT, power, mel filterbank (+ eps), log: the ops LogMel exports to (their kernels are the tier's)
FRONT_END_OPS = ["conv2d", "mul", "conv2d", "add", "log"]


def test_exports_to_convolutions_mul_add_and_log():
    program = mcuflow.compile(export(LogMel()), target=TARGET, precision="fp32")
    assert [op["kind"] for op in program.describe()["ops"]] == FRONT_END_OPS


@pytest.mark.parametrize("normalize", [False, True])
def test_compiled_fp32_and_int8_programs_are_close_to_the_reference(normalize):
    model = LogMel(normalize=normalize)
    fp32 = mcuflow.compile(export(model), target=TARGET, precision="fp32")
    int8 = int8_program(model)
    assert "lut_s8_dsp" in int8.kernels and not int8.fallbacks()
    errors = []
    for x in signals(3, 4):
        ref = log_mel_reference(x, normalize=normalize)
        assert np.abs(fp32.run([x[None]])[0][0] - ref).max() < 1e-4
        errors.append(np.abs(int8.run([x[None]])[0][0] - ref))
    errors = np.concatenate(errors)
    assert errors.mean() < 0.2 and errors.max() < 3.5, (errors.mean(), errors.max())  # 0.10 / 0.14, 2.0 / 2.8 seen


class KeywordNet(nn.Module):
    """Raw samples -> LogMel -> a small CNN over the (mels x frames) image -> 4 scores."""

    def __init__(self, seed=0):
        super().__init__()
        self.features = LogMel(normalize=True)
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.fc = nn.Linear(16, 4)

    def forward(self, samples):
        x = self.features(samples).unsqueeze(1)
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(x.mean(dim=(2, 3)))


def test_samples_to_scores_is_one_program():
    model = KeywordNet().eval()
    fp32 = mcuflow.compile(export(model), target=TARGET, precision="fp32")
    int8 = int8_program(model)
    assert [op["kind"] for op in fp32.describe()["ops"]][:5] == FRONT_END_OPS
    assert int8.inputs[0]["shape"] == [1, SAMPLES] and int8.outputs[0]["shape"] == [1, 4]
    for x in signals(4, 3):
        with torch.no_grad():
            want = model(torch.from_numpy(x)[None]).numpy()
        np.testing.assert_allclose(fp32.run([x[None]])[0], want, rtol=1e-4, atol=1e-4)
        got = int8.run([x[None]])[0]
        assert np.abs(got - want).max() < 0.25 * np.abs(want).max(), (got, want)
