"""Zoo models that need the wider operator set: hard-swish and squeeze-and-excitation, explicit
TensorFlow-style "SAME" padding, and a small transformer.

================  ============================================
model             task
================  ============================================
mobilenet_v3_s    visual wake words, 96×96×3, 2 classes
kws_same_pad      keyword spotting, 49×10 MFCC, 12 classes
kws_transformer   keyword spotting, 32 tokens × 64, 12 classes
================  ============================================

* ``mobilenet_v3_s``: MobileNetV3-Small (Howard et al., "Searching for MobileNetV3", 2019,
  table 2) at width 0.35 on 96×96 images: the paper's eleven bottlenecks (3×3 and 5×5
  depthwise, hard-swish in the later ones, squeeze-and-excitation with a hard-sigmoid gate
  in nine of them), a 1×1 expansion, global pooling and a two-layer hard-swish classifier
  (576·0.35 → 200 → 128 → 2, narrower than the paper's 1024 so that the int8 program fits
  the 512 KiB code memory of qemu-m55). Channel counts are rounded to multiples of 8 as in
  the paper.
* ``kws_same_pad``: the DS-CNN keyword spotter with TensorFlow's ``padding='same'`` written
  as ``F.pad`` before every ``padding=0`` convolution, as a network converted from Keras
  weights must be: the 10×4 stride-2 stem pads 4 rows on top and 5 below (asymmetric), the
  depthwise convolutions 1 on every side; one depthwise block has stride 2.
* ``kws_transformer``: a keyword-spotting transformer in the style of KWT (Berg et al.,
  "Keyword Transformer", 2021) at toy size: 32 time steps of 64 features, two
  ``nn.TransformerEncoderLayer`` (4 heads, feed-forward 128, GELU, post-norm), mean over
  tokens, linear classifier. Its layer norms run in int8 (group_norm_s8).

Counts are not published for these configurations: ``reference_parameters`` and
``reference_macs`` are left unset (``mcuflow zoo list`` shows "-").
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import ModelSpec, register
from .mlperf import mfcc_frames, natural_images

__all__ = ["MobileNetV3Small", "KwsSamePad", "KwsTransformer", "tf_same_pad", "token_sequences"]


def _divisible(channels: float, divisor: int = 8) -> int:
    """The paper's rounding: to a multiple of 8, never more than 10 % below the target."""
    rounded = max(divisor, int(channels + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * channels else rounded


class SqueezeExcite(nn.Module):
    """Global pool, 1×1 reduce + ReLU, 1×1 expand + hard-sigmoid, times the input (MobileNetV3's;
    EfficientNet's squeezes to a quarter of the block's input with SiLU and a sigmoid gate)."""

    def __init__(self, channels: int, squeezed: int | None = None, activation=nn.ReLU, gate=nn.Hardsigmoid):
        super().__init__()
        squeezed = squeezed or _divisible(channels / 4)
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.activation = activation()
        self.expand = nn.Conv2d(squeezed, channels, 1)
        self.gate = gate()

    def forward(self, x):
        gate = F.adaptive_avg_pool2d(x, 1)
        gate = self.gate(self.expand(self.activation(self.reduce(gate))))
        return x * gate


class Bottleneck(nn.Module):
    """Inverted residual: 1×1 expand (unless the width stays), depthwise k×k, optional SE,
    1×1 project; a residual add when the shape allows it. ``se`` is True (MobileNetV3's
    squeeze-and-excite), False, or a factory of the squeeze-and-excite module given the
    expanded width."""

    def __init__(self, cin: int, kernel: int, expanded: int, cout: int, se, activation, stride: int):
        super().__init__()
        layers = []
        if expanded != cin:
            layers += [nn.Conv2d(cin, expanded, 1, bias=False), nn.BatchNorm2d(expanded), activation()]
        layers += [nn.Conv2d(expanded, expanded, kernel, stride, kernel // 2, groups=expanded, bias=False),
                   nn.BatchNorm2d(expanded), activation()]
        if se:
            layers.append((SqueezeExcite if se is True else se)(expanded))
        layers += [nn.Conv2d(expanded, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetV3Small(nn.Module):
    # (kernel, expanded, out, SE, hard-swish, stride) at width 1.0: the paper's table 2; LAST: the
    # 1×1 expansion before the pooling (a subclass with table 1 and 960 is MobileNetV3-Large)
    PLAN = [(3, 16, 16, True, False, 2), (3, 72, 24, False, False, 2), (3, 88, 24, False, False, 1),
            (5, 96, 40, True, True, 2), (5, 240, 40, True, True, 1), (5, 240, 40, True, True, 1),
            (5, 120, 48, True, True, 1), (5, 144, 48, True, True, 1), (5, 288, 96, True, True, 2),
            (5, 576, 96, True, True, 1), (5, 576, 96, True, True, 1)]
    LAST = 576

    def __init__(self, num_classes: int = 2, width: float = 0.35, hidden: int = 128):
        super().__init__()
        c = _divisible(16 * width)
        layers = [nn.Conv2d(3, c, 3, 2, 1, bias=False), nn.BatchNorm2d(c), nn.Hardswish()]
        for kernel, expanded, out, se, hard_swish, stride in self.PLAN:
            e, o = _divisible(expanded * width), _divisible(out * width)
            layers.append(Bottleneck(c, kernel, e, o, se, nn.Hardswish if hard_swish else nn.ReLU, stride))
            c = o
        last = _divisible(self.LAST * width)
        layers += [nn.Conv2d(c, last, 1, bias=False), nn.BatchNorm2d(last), nn.Hardswish()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(last, hidden), nn.Hardswish(), nn.Dropout(0.2),
                                        nn.Linear(hidden, num_classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def tf_same_pad(x, kernel: tuple[int, int], stride: tuple[int, int]):
    """TensorFlow's ``padding='same'``: output = ceil(input / stride), the odd extra row or
    column at the bottom/right."""
    pads = []
    for size, k, s in zip(reversed(x.shape[2:]), reversed(kernel), reversed(stride)):
        total = max((-(-size // s) - 1) * s + k - size, 0)
        pads += [total // 2, total - total // 2]
    return F.pad(x, pads)


class _SameConv(nn.Module):
    """Conv + BN + ReLU with explicit TensorFlow "same" padding."""

    def __init__(self, cin: int, cout: int, kernel, stride=1, groups: int = 1):
        super().__init__()
        self.kernel = kernel if isinstance(kernel, tuple) else (kernel, kernel)
        self.stride = stride if isinstance(stride, tuple) else (stride, stride)
        self.conv = nn.Conv2d(cin, cout, self.kernel, self.stride, groups=groups)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(tf_same_pad(x, self.kernel, self.stride))))


class KwsSamePad(nn.Module):
    """DS-CNN (64 channels) with Keras padding: stem 10×4 stride 2 → 25×5, four depthwise-
    separable blocks (the third with stride 2 → 13×3), mean over time and frequency, FC → 12."""

    def __init__(self, num_classes: int = 12, filters: int = 64):
        super().__init__()
        self.stem = _SameConv(1, filters, (10, 4), 2)
        self.blocks = nn.Sequential(*[nn.Sequential(_SameConv(filters, filters, 3, stride, groups=filters),
                                                    _SameConv(filters, filters, 1))
                                      for stride in (1, 1, 2, 1)])
        self.fc = nn.Linear(filters, num_classes)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))


class KwsTransformer(nn.Module):
    """Two post-norm transformer encoder layers over 32 tokens of 64 features, mean over the
    tokens, linear classifier (12 keywords)."""

    def __init__(self, num_classes: int = 12, dim: int = 64, heads: int = 4, ff: int = 128, layers: int = 2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.fc(self.encoder(x).mean(dim=1))


def token_sequences(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 32, 64)`` embedded audio frames: per-clip feature profile, a word's envelope and
    slowly varying per-frame detail, about unit variance per feature."""
    frames = np.arange(32)
    profile = rng.standard_normal((n, 1, 64))
    envelope = np.exp(-0.5 * ((frames[None, :, None] - rng.uniform(8, 24, (n, 1, 1))) / rng.uniform(3, 8, (n, 1, 1))) ** 2)
    detail = rng.standard_normal((n, 34, 64))
    detail = (detail[:, :-2] + detail[:, 1:-1] + detail[:, 2:]) / np.sqrt(3)
    return (0.6 * profile + 0.8 * detail * (0.4 + envelope)).astype(np.float32)


register(ModelSpec("mobilenet_v3_s", "visual wake words (MobileNetV3-Small 0.35, hard-swish, SE)",
                   MobileNetV3Small, (1, 3, 96, 96), lambda rng, n: natural_images(rng, n, 96),
                   reference="Howard et al. 2019, table 2, width 0.35"))
register(ModelSpec("kws_same_pad", "keyword spotting (DS-CNN with explicit TF 'same' padding)", KwsSamePad,
                   (1, 1, 49, 10), mfcc_frames, reference="MLPerf Tiny DS-CNN, Keras padding"))
register(ModelSpec("kws_transformer", "keyword spotting (2-layer transformer encoder, 32×64)", KwsTransformer,
                   (1, 32, 64), token_sequences, reference="KWT-style encoder (Berg et al. 2021), toy size"))
