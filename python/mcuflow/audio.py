"""Log-mel features as ops mcuflow compiles, so raw samples -> features -> model is one program.

``LogMel`` is a ``torch.nn.Module`` built only from contract ops (docs/audio.md):

- framing, Hann window and DFT in one strided ``Conv1d`` over the raw samples: kernel = the window
  length, stride = the hop, one output channel per cosine row and per sine row of the windowed DFT
  (the sine rows of bin 0 and, for an even ``n_fft``, of the Nyquist bin are zero and left out).
  At these sizes a DFT as a matrix product is cheaper than an FFT on a microcontroller: it is the
  convolution kernels the tiers already accelerate, with no bit reversal or twiddle loads. Bins
  no mel filter weighs (0 Hz, the Nyquist bin, those outside f_min..f_max) get no rows;
- power: the DFT rows squared (``mul``); re^2 + im^2 is folded into the next step;
- the HTK mel filterbank as a 1x1 ``Conv1d`` whose weights repeat each filter over the cosine and
  the sine rows, so one product sums both squares;
- ``log(mel + eps)``; optionally per-frame normalization (the mean over the mel bands subtracted).

Input ``(N, samples)`` or ``(N, 1, samples)``, output ``(N, n_mels, frames)`` with
``frames = 1 + (samples - win_length) // hop_length`` (no centre padding).
``log_mel_reference`` computes the same features with numpy's rfft, independently of the module.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

__all__ = ["LogMel", "log_mel_reference", "mel_filterbank", "frame_count", "coloured_noise"]


def _hz_to_mel(hz):
    return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


def _mel_to_hz(mel):
    return 700.0 * (10.0 ** (np.asarray(mel, dtype=np.float64) / 2595.0) - 1.0)


def _mel_edges(sample_rate: int, n_mels: int, f_min: float, f_max: float | None) -> np.ndarray:
    """The n_mels + 2 filter edges in Hz, equally spaced on the HTK mel scale."""
    top = sample_rate / 2.0 if f_max is None else f_max
    return _mel_to_hz(np.linspace(_hz_to_mel(f_min), _hz_to_mel(top), n_mels + 2))


def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int, f_min: float = 0.0,
                   f_max: float | None = None) -> np.ndarray:
    """HTK triangular filters, unnormalized (torchaudio's ``melscale_fbanks`` with mel_scale="htk",
    norm=None): ``[n_mels, n_fft // 2 + 1]`` float64 weights of the rfft bins."""
    edges = _mel_edges(sample_rate, n_mels, f_min, f_max)
    freqs = np.arange(n_fft // 2 + 1) * (sample_rate / n_fft)
    rising = (freqs[None, :] - edges[:-2, None]) / (edges[1:-1] - edges[:-2])[:, None]
    falling = (edges[2:, None] - freqs[None, :]) / (edges[2:] - edges[1:-1])[:, None]
    return np.maximum(0.0, np.minimum(rising, falling))


def _hann(length: int) -> np.ndarray:
    """Periodic Hann window (torch.hann_window's default)."""
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(length) / length)


def frame_count(samples: int, win_length: int, hop_length: int) -> int:
    if samples < win_length:
        raise ValueError(f"{samples} samples are fewer than one window of {win_length}")
    return 1 + (samples - win_length) // hop_length


class LogMel(nn.Module):
    """Log-mel spectrogram of raw samples in contract ops (see the module docstring)."""

    def __init__(self, sample_rate: int = 16000, n_fft: int = 512, win_length: int | None = None,
                 hop_length: int = 160, n_mels: int = 40, f_min: float = 0.0, f_max: float | None = None,
                 eps: float = 1e-6, normalize: bool = False):
        super().__init__()
        win = n_fft if win_length is None else win_length
        if not 0 < win <= n_fft or hop_length < 1:
            raise ValueError(f"need 0 < win_length <= n_fft and hop_length >= 1, got {win}, {n_fft}, {hop_length}")
        self.win_length, self.hop_length, self.n_mels = win, hop_length, n_mels
        self.eps, self.normalize = float(eps), bool(normalize)
        bins = n_fft // 2 + 1
        filters = mel_filterbank(sample_rate, n_fft, n_mels, f_min, f_max)
        # Bins some filter weighs: not 0 Hz, Nyquist or outside f_min..f_max (the edges' rounding
        # leaves weights of 1e-13 there, below what a float32 sum of the other bins keeps).
        used = np.flatnonzero(filters.max(axis=0) > 1e-9)
        sine_bins = used[(used > 0) & (used < n_fft - bins + 1)]  # and whose sine row is not identically zero
        offset = (n_fft - win) // 2  # the window centred in the n_fft frame, as torch.stft pads it
        taps = np.arange(win) + offset
        cosines = np.cos(2.0 * np.pi * np.outer(used, taps) / n_fft)
        sines = -np.sin(2.0 * np.pi * np.outer(sine_bins, taps) / n_fft)
        dft = np.concatenate([cosines, sines]) * _hann(win)[None, :]
        self.dft = nn.Conv1d(1, dft.shape[0], win, stride=hop_length, bias=False)
        self.mel = nn.Conv1d(dft.shape[0], n_mels, 1, bias=False)
        with torch.no_grad():
            self.dft.weight.copy_(torch.from_numpy(dft[:, None, :]))
            self.mel.weight.copy_(torch.from_numpy(np.concatenate([filters[:, used], filters[:, sine_bins]],
                                                                  axis=1)[..., None]))
        self.requires_grad_(False)

    def frames(self, samples: int) -> int:
        return frame_count(samples, self.win_length, self.hop_length)

    def forward(self, samples: torch.Tensor) -> torch.Tensor:
        x = samples.unsqueeze(1) if samples.dim() == 2 else samples
        spectrum = self.dft(x)
        mel = self.mel(spectrum * spectrum)
        features = torch.log(mel + self.eps)
        if self.normalize:
            features = features - features.mean(dim=1, keepdim=True)
        return features


def log_mel_reference(samples: np.ndarray, sample_rate: int = 16000, n_fft: int = 512,
                      win_length: int | None = None, hop_length: int = 160, n_mels: int = 40,
                      f_min: float = 0.0, f_max: float | None = None, eps: float = 1e-6,
                      normalize: bool = False) -> np.ndarray:
    """``LogMel``'s features of a 1-D signal in float64 with numpy's rfft: ``[n_mels, frames]``.

    Independent of the module: frames cut by slicing, zero-padded to n_fft, transformed by rfft;
    each filter evaluated by linear interpolation between its three edges."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    win = n_fft if win_length is None else win_length
    offset = (n_fft - win) // 2
    window = _hann(win)
    frames = np.zeros((frame_count(x.size, win, hop_length), n_fft))
    for t in range(frames.shape[0]):
        frames[t, offset:offset + win] = x[t * hop_length:t * hop_length + win] * window
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    edges = _mel_edges(sample_rate, n_mels, f_min, f_max)
    filters = np.stack([np.interp(freqs, edges[m:m + 3], [0.0, 1.0, 0.0]) for m in range(n_mels)])
    features = np.log(filters @ power.T + eps)
    return features - features.mean(axis=0, keepdims=True) if normalize else features


def coloured_noise(rng: np.random.Generator, samples: int) -> np.ndarray:
    """A test and calibration signal: white noise through a one-pole filter of random pole and
    level (peak 0.05 to 0.5), a sloped, speech-like spectrum. float32 ``[samples]``."""
    white = rng.standard_normal(samples)
    pole = rng.uniform(-0.9, 0.9)
    y = np.empty(samples)
    y[0] = white[0]
    for i in range(1, samples):
        y[i] = pole * y[i - 1] + white[i]
    return (rng.uniform(0.05, 0.5) * y / np.abs(y).max()).astype(np.float32)
