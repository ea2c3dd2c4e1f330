"""The four MLPerf Tiny (v0.5+) reference models, and MobileNetV2-0.35 as a larger one.

Layouts follow the MLPerf Tiny training references (github.com/mlcommons/tiny,
benchmark/training/*): the same layer list, kernel sizes, strides, channels, biases and
BatchNorm placement, so the parameter counts (weights + biases after BatchNorm folding) and
the MAC counts (convolutions and fully connected layers only) equal the published ones:

================  ============================  ==========  ==========
model             task                          parameters  MACs
================  ============================  ==========  ==========
ds_cnn            keyword spotting, 49×10 MFCC      22,604   2,656,768
mobilenet_v1_025  visual wake words, 96×96×3       210,850   7,489,664
resnet8           CIFAR-10 image classification     77,706  12,501,632
fc_autoencoder    anomaly detection, 640 log-mel   265,864     264,192
mobilenet_v2_035  visual wake words, 96×96×3       391,650  10,656,688
================  ============================  ==========  ==========

Padding: the references use TensorFlow's ``padding='same'``, which pads an odd total amount
one more at the bottom/right (and pads 0 on top, 1 at the bottom for a stride-2 3×3 on an
even size). PyTorch's ``padding=`` is symmetric, so these models pad the same total amount
(the same output shapes and counts) but may place one row or column on the other side. To load
weights trained with TensorFlow bit-for-bit, express the padding with an explicit ``F.pad``
(asymmetric) before a ``padding=0`` convolution; for seeded weights the difference is irrelevant.

Streaming keyword spotting (MLPerf Tiny's fifth benchmark, ``benchmark/training/streaming_wakeword``,
model ``ds_tcn``) is in the zoo as ``ds_tcn_stream`` (zoo/streaming.py): one log-mel frame per
call, the temporal context kept as program state.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import ModelSpec, register

__all__ = ["DSCNN", "MobileNetV1", "ResNet8", "FCAutoencoder", "MobileNetV2", "mfcc_frames", "natural_images",
           "log_mel_frames"]


def _conv_bn(cin: int, cout: int, kernel, stride=1, padding=0, groups: int = 1, bias: bool = True,
             activation: type[nn.Module] | None = nn.ReLU) -> nn.Sequential:
    layers = [nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding, groups=groups, bias=bias),
              nn.BatchNorm2d(cout)]
    if activation is not None:
        layers.append(activation())
    return nn.Sequential(*layers)


def _depthwise_separable(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    """Depthwise 3×3 + BN + ReLU, pointwise 1×1 + BN + ReLU, both with bias as in Keras."""
    return nn.Sequential(_conv_bn(cin, cin, 3, stride, 1, groups=cin), _conv_bn(cin, cout, 1))


# --- keyword spotting ------------------------------------------------------------------------

class DSCNN(nn.Module):
    """MLPerf Tiny keyword spotting: DS-CNN (Zhang et al., "Hello Edge", 2017), 12 classes.

    Input 1×1×49×10 (49 frames × 10 MFCC). Conv 10×4 stride 2 → 64×25×5, BN, ReLU, dropout 0.2;
    four depthwise-separable blocks (64 channels); dropout 0.4; average pool; FC 64 → 12.
    The reference pools with ``pool_size = (49 // 2, 10 // 2) = (24, 5)`` and default strides
    over the 25×5 map, so the last row of frames is not averaged: kept here as is.
    """

    def __init__(self, num_classes: int = 12, filters: int = 64):
        super().__init__()
        self.conv1 = _conv_bn(1, filters, (10, 4), stride=2, padding=(5, 1))
        self.drop1 = nn.Dropout(0.2)
        self.blocks = nn.Sequential(*[_depthwise_separable(filters, filters) for _ in range(4)])
        self.drop2 = nn.Dropout(0.4)
        self.pool = nn.AvgPool2d((24, 5))
        self.fc = nn.Linear(filters, num_classes)

    def forward(self, x):
        x = self.drop1(self.conv1(x))
        x = self.drop2(self.blocks(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def mfcc_frames(rng: np.random.Generator, n: int) -> np.ndarray:
    """MFCC-like 1 s clips, ``(n, 1, 49, 10)``: a word's energy envelope in c0 somewhere in the
    window, per-clip spectral shape and slowly varying coefficients whose spread falls with
    the coefficient index as real MFCCs do."""
    spread = np.array([8.0, 4.0, 3.0, 2.0, 1.5, 1.2, 1.0, 0.8, 0.7, 0.6])
    frames = np.arange(49)
    centre = rng.uniform(12, 36, (n, 1))
    width = rng.uniform(4, 12, (n, 1))
    envelope = np.exp(-0.5 * ((frames - centre) / width) ** 2)
    shape = rng.standard_normal((n, 1, 10))
    wiggle = rng.standard_normal((n, 51, 10))
    wiggle = (wiggle[:, :-2] + wiggle[:, 1:-1] + wiggle[:, 2:]) / np.sqrt(3)  # correlated in time
    x = spread * (0.6 * shape + 0.5 * wiggle * (0.3 + envelope[..., None]))
    x[..., 0] += 12.0 * envelope - 6.0
    return x[:, None].astype(np.float32)


# --- visual wake words -----------------------------------------------------------------------

class MobileNetV1(nn.Module):
    """MLPerf Tiny visual wake words: MobileNetV1 with width 0.25 on 96×96×3, 2 classes.

    Conv 3×3 stride 2 (8 ch) + BN + ReLU; 13 depthwise-separable blocks (pointwise channels
    16, 32, 32, 64, 64, 128, 128×5, 256, 256; stride 2 at blocks 2, 4, 6 and 12); average pool
    over the final 3×3; FC 256 → 2. Every convolution has a bias and a BatchNorm; the reference
    uses ReLU (not ReLU6) and no dropout or classifier convolution.
    """

    def __init__(self, num_classes: int = 2, width: float = 0.25):
        super().__init__()
        c = int(32 * width)
        plan = [(2, 1), (4, 2), (4, 1), (8, 2), (8, 1), (16, 2)] + [(16, 1)] * 5 + [(32, 2), (32, 1)]
        layers = [_conv_bn(3, c, 3, stride=2, padding=1)]
        for multiple, stride in plan:
            layers.append(_depthwise_separable(c, int(32 * width) * multiple, stride))
            c = int(32 * width) * multiple
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d(3)
        self.fc = nn.Linear(c, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def natural_images(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """Natural-looking RGB images in [0, 1], ``(n, 3, size, size)``: smooth random structure at
    several scales with amplitude falling with frequency (about 1/f), a colour cast per image
    and per region, and a little pixel noise."""
    image = torch.zeros(n, 3, size, size, dtype=torch.float64)
    for cells, amplitude in ((2, 0.35), (4, 0.25), (8, 0.15), (16, 0.08)):
        luminance = torch.from_numpy(rng.standard_normal((n, 1, cells, cells)))
        colour = torch.from_numpy(rng.standard_normal((n, 3, cells, cells))) * 0.3
        layer = F.interpolate(luminance + colour, size=(size, size), mode="bicubic", align_corners=False)
        image += amplitude * layer
    brightness = torch.from_numpy(rng.uniform(0.3, 0.7, (n, 1, 1, 1)))
    noise = torch.from_numpy(rng.normal(0, 0.02, (n, 3, size, size)))
    return (image + brightness + noise).clamp(0, 1).numpy().astype(np.float32)


# --- image classification --------------------------------------------------------------------

class _ResidualStack(nn.Module):
    """Two 3×3 conv + BN (ReLU between), added to the input or to its 1×1 stride-2 projection
    (a bare convolution with bias, no BatchNorm, as in the reference), then ReLU."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = _conv_bn(cin, cout, 3, stride, 1)
        self.conv2 = _conv_bn(cout, cout, 3, 1, 1, activation=None)
        self.shortcut = nn.Conv2d(cin, cout, 1, stride=stride) if stride != 1 else nn.Identity()

    def forward(self, x):
        return F.relu(self.shortcut(x) + self.conv2(self.conv1(x)))


class ResNet8(nn.Module):
    """MLPerf Tiny image classification: ResNet-8 (EEMBC ResNetv1) on CIFAR-10 32×32×3.

    Conv 3×3 (16 ch) + BN + ReLU; residual stacks of 16 (identity shortcut), 32 and 64 channels
    (stride 2, 1×1 projection shortcut); average pool 8×8; FC 64 → 10."""

    def __init__(self, num_classes: int = 10, filters: int = 16):
        super().__init__()
        self.stem = _conv_bn(3, filters, 3, 1, 1)
        self.stacks = nn.Sequential(_ResidualStack(filters, filters, 1), _ResidualStack(filters, 2 * filters, 2),
                                    _ResidualStack(2 * filters, 4 * filters, 2))
        self.pool = nn.AvgPool2d(8)
        self.fc = nn.Linear(4 * filters, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.stacks(self.stem(x))), 1))


# --- anomaly detection -----------------------------------------------------------------------

class FCAutoencoder(nn.Module):
    """MLPerf Tiny anomaly detection (DCASE 2020 task 2 baseline, ToyCar): a fully connected
    autoencoder on 640 inputs (5 frames × 128 log-mel bins).

    Four Dense(128) + BN + ReLU, a Dense(8) + BN + ReLU bottleneck, four Dense(128) + BN + ReLU
    and a Dense(640) reconstruction; the anomaly score is the reconstruction's mean squared
    error."""

    def __init__(self, inputs: int = 640, hidden: int = 128, bottleneck: int = 8):
        super().__init__()
        widths = [inputs] + [hidden] * 4 + [bottleneck] + [hidden] * 4
        self.layers = nn.Sequential(*[nn.Sequential(nn.Linear(a, b), nn.BatchNorm1d(b), nn.ReLU())
                                      for a, b in zip(widths, widths[1:])])
        self.output = nn.Linear(hidden, inputs)

    def forward(self, x):
        return self.output(self.layers(x))


def log_mel_frames(rng: np.random.Generator, n: int) -> np.ndarray:
    """Machine-sound-like log-mel features in dB, ``(n, 640)`` = 5 consecutive frames × 128
    bins: a spectral envelope falling with frequency, a few resonances of the machine, and
    small frame-to-frame variation."""
    bins = np.arange(128)
    envelope = rng.uniform(-30, -10, (n, 1)) - rng.uniform(15, 35, (n, 1)) * bins / 127
    for _ in range(4):
        centre = rng.uniform(0, 127, (n, 1))
        envelope = envelope + rng.uniform(5, 20, (n, 1)) * np.exp(-0.5 * ((bins - centre) / rng.uniform(2, 8, (n, 1))) ** 2)
    frames = envelope[:, None, :] + rng.normal(0, 2.0, (n, 5, 128))
    return frames.reshape(n, 640).astype(np.float32)


# --- a larger model --------------------------------------------------------------------------

def _divisible(value: float, divisor: int = 8) -> int:
    """MobileNetV2's channel rounding: nearest multiple of 8, never more than 10 % below."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class _InvertedResidual(nn.Module):
    """1×1 expansion (skipped for expansion 1) + BN + ReLU6, depthwise 3×3 + BN + ReLU6, 1×1
    linear projection + BN; added to the input when stride is 1 and channels match."""

    def __init__(self, cin: int, cout: int, stride: int, expansion: int):
        super().__init__()
        hidden = cin * expansion
        layers = [_conv_bn(cin, hidden, 1, bias=False, activation=nn.ReLU6)] if expansion != 1 else []
        layers += [_conv_bn(hidden, hidden, 3, stride, 1, groups=hidden, bias=False, activation=nn.ReLU6),
                   _conv_bn(hidden, cout, 1, bias=False, activation=None)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    """MobileNetV2 (Sandler et al., 2018) with width 0.35 on 96×96×3 and 2 classes (person /
    no person, the usual larger visual-wake-words model), in the Keras-applications layout:
    convolutions without bias, each followed by BatchNorm; 1280 channels in the last 1×1
    convolution; global average pool; FC 1280 → 2."""

    # (expansion, channels at width 1, blocks, first stride)
    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                (6, 320, 1, 1))

    def __init__(self, num_classes: int = 2, width: float = 0.35, last_channels: int = 1280):
        super().__init__()
        c = _divisible(32 * width)
        layers = [_conv_bn(3, c, 3, 2, 1, bias=False, activation=nn.ReLU6)]
        for expansion, channels, blocks, stride in self.SETTINGS:
            cout = _divisible(channels * width)
            for i in range(blocks):
                layers.append(_InvertedResidual(c, cout, stride if i == 0 else 1, expansion))
                c = cout
        layers.append(_conv_bn(c, last_channels, 1, bias=False, activation=nn.ReLU6))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(last_channels, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


_MLPERF = "MLPerf Tiny training reference (github.com/mlcommons/tiny, benchmark/training)"

register(ModelSpec("ds_cnn", "keyword spotting (MLPerf Tiny KWS), 12 classes", DSCNN, (1, 1, 49, 10), mfcc_frames,
                   22_604, 2_656_768, f"{_MLPERF}, keyword_spotting/keras_model.py ds_cnn"))
register(ModelSpec("mobilenet_v1_025", "visual wake words (MLPerf Tiny VWW), 2 classes", MobileNetV1, (1, 3, 96, 96),
                   lambda rng, n: natural_images(rng, n, 96), 210_850, 7_489_664,
                   f"{_MLPERF}, visual_wake_words/vww_model.py mobilenet_v1"))
register(ModelSpec("resnet8", "image classification (MLPerf Tiny IC, CIFAR-10), 10 classes", ResNet8,
                   (1, 3, 32, 32), lambda rng, n: natural_images(rng, n, 32), 77_706, 12_501_632,
                   f"{_MLPERF}, image_classification/keras_model.py resnet_v1_eembc with 16 filters"))
register(ModelSpec("fc_autoencoder", "anomaly detection (MLPerf Tiny AD, ToyCar), reconstruction", FCAutoencoder,
                   (1, 640), log_mel_frames, 265_864, 264_192, f"{_MLPERF}, anomaly_detection/keras_model.py",
                   output="reconstruction"))
register(ModelSpec("mobilenet_v2_035", "visual wake words, larger model, 2 classes", MobileNetV2, (1, 3, 96, 96),
                   lambda rng, n: natural_images(rng, n, 96), 391_650, 10_656_688,
                   "derived from the layer table (Keras applications MobileNetV2, alpha 0.35, 96×96, 2 classes): "
                   "no published count"))
