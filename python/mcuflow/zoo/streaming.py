"""Streaming keyword spotting: MLPerf Tiny's fifth benchmark shape, a DS-TCN fed one log-mel frame
per invocation, its temporal context kept on the device as state.

================  ===================================================================
model             task
================  ===================================================================
ds_tcn_stream     keyword spotting, one 40-band log-mel frame per call, 12 classes per frame
================  ===================================================================

Layout after MLPerf Tiny's ``ds_tcn`` (benchmark/training/streaming_wakeword/keras_model.py):
the 40 mel bands are the channels and each block is a depthwise temporal convolution (no bias)
→ 1×1 convolution (no bias) → BatchNorm → ReLU. Here the temporal convolutions are causal and
dilated (kernel 3, dilations 1, 2, 4, 8: a receptive field of 31 frames, where the reference
reaches 30 with kernels 3, 5, 10, 15), written with :class:`mcuflow.streaming.StreamingConv1d`
so each keeps its last ``2 * dilation`` input frames as state; filters 64, 64, 64, 32 (the
reference: 128, 64, 64, 32). The blocks are followed by an average over the last 16 frames of
features (a depthwise streaming convolution with every tap 1/16, fixed) and a 1×1 convolution
to 12 class scores, so the model answers on every frame from the last 46 frames (0.46 s at a
10 ms hop), and the detection is the argmax of a frame's scores.

Input ``(1, 40, T)``: PyTorch's 1-D layout ``(N, C, L)`` with the bands as channels and time
last, which is what ``StreamingConv1d`` streams over; a frame is ``(1, 40, 1)``. With the
channels-last storage of 1-D model inputs (docs/frontend_contract.md) the program reads a frame
as its 40 bands in order, the order a feature front end produces them: no transposition at the
boundary. (A ``1×1×40`` NCHW image would put the bands on a spatial axis: convolving over
frequency, another model.) Fed ``T`` frames at once, the same module gives ``(1, 12, T)``, the
scores of every frame: the whole-window form the streamed one must equal bit for bit.

Data: ``sample(rng, n)`` draws ``n`` consecutive frames of one stream, ``(n, 40, 1)``; a
compiled program runs a batch as a sequence (``Program.run``), so calibration and evaluation
data are streams, in order. Weights are seeded random (BatchNorm statistics from the stream);
counts are not published for this configuration.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from ..streaming import StreamingConv1d, reset_streaming_state
from . import ModelSpec, register

__all__ = ["DSTCNStream", "log_mel_stream"]

BANDS = 40


class _TemporalSeparable(nn.Sequential):
    """Causal dilated depthwise temporal conv (state: its last 2·dilation frames) → 1×1 conv → BN → ReLU."""

    def __init__(self, cin: int, cout: int, kernel: int, dilation: int):
        super().__init__(StreamingConv1d(cin, cin, kernel, dilation=dilation, groups=cin, bias=False),
                         nn.Conv1d(cin, cout, 1, bias=False), nn.BatchNorm1d(cout), nn.ReLU())


class DSTCNStream(nn.Module):
    """Four causal depthwise-separable temporal blocks, a 16-frame streaming average, 1×1 → 12 classes."""

    def __init__(self, bands: int = BANDS, num_classes: int = 12, filters=(64, 64, 64, 32), dilations=(1, 2, 4, 8),
                 kernel: int = 3, averaged_frames: int = 16):
        super().__init__()
        widths = (bands, *filters)
        self.blocks = nn.Sequential(*[_TemporalSeparable(cin, cout, kernel, d)
                                      for cin, cout, d in zip(widths, widths[1:], dilations)])
        c = filters[-1]
        # The average over the last frames is a fixed depthwise streaming conv: its window is ring state.
        self.average = StreamingConv1d(c, c, averaged_frames, groups=c, bias=False)
        self.average.weight.requires_grad_(False)
        self.average.weight.fill_(1.0 / averaged_frames)
        self.classifier = nn.Conv1d(c, num_classes, 1)

    def reset(self) -> None:
        """Forget the kept frames (PyTorch side; a compiled program has reset_state())."""
        reset_streaming_state(self)

    def forward(self, x):
        return self.classifier(self.average(self.blocks(x)))


def log_mel_stream(rng: np.random.Generator, n: int, bands: int = BANDS) -> np.ndarray:
    """``n`` consecutive log-mel frames of one stream, ``(n, bands, 1)``, natural-log power: a
    background floor with a per-stream spectral tilt and frame noise, and words of 20-60 frames
    at random gaps, each a smooth energy envelope over two or three formant-like bands that drift
    across the word."""
    mel = np.arange(bands)
    floor = rng.uniform(-9, -7) - rng.uniform(0, 3) * mel / (bands - 1)
    x = floor[None, :] + 0.6 * rng.standard_normal((n, bands))
    start = int(rng.integers(0, 30))
    while start < n:
        length = int(rng.integers(20, 61))
        t = np.arange(length)[:, None] / (length - 1)
        envelope = np.sin(np.pi * t) ** 2 * rng.uniform(4, 9)
        word = np.zeros((length, bands))
        for _ in range(int(rng.integers(2, 4))):
            begin, end = rng.uniform(2, bands - 3, 2)
            centre = begin + (end - begin) * t
            word += np.exp(-0.5 * ((mel[None, :] - centre) / rng.uniform(1.5, 4)) ** 2)
        stop = min(n, start + length)
        x[start:stop] += (envelope * word)[:stop - start]
        start = stop + int(rng.integers(10, 61))
    return x[:, :, None].astype(np.float32)


register(ModelSpec("ds_tcn_stream", "streaming keyword spotting (MLPerf Tiny streaming wake word shape), "
                   "one 40-band log-mel frame per call, 12 classes", DSTCNStream, (1, BANDS, 1), log_mel_stream,
                   reference="MLPerf Tiny streaming_wakeword/keras_model.py ds_tcn, causal dilated, 12 classes",
                   streaming=True))
