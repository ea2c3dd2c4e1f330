"""The mobile model families people take to microcontrollers, at MCU sizes, for bench/models/run.py.

torchvision cannot be installed beside this machine's torch, so the families are written here
from their papers (layer tables and block descriptions), at 96×96 or 64×64 inputs with the width
multipliers the families define, 2 classes for the 96×96 (visual-wake-words-sized) models and 10
for the 64×64 ones. The zoo already holds MobileNetV2 0.35, MobileNetV3-Small 0.35 and a RegNetX
(mobilenet_v2_035, mobilenet_v3_s, regnet_x_tiny); the bench takes those from the zoo and these
blocks from it too (the inverted residual and squeeze-and-excite of python/mcuflow/zoo/extra.py).
Weights are seeded random with realistic BatchNorm statistics: ``mcuflow.zoo.get(spec)``.

================  ========================================================================
model             layout
================  ========================================================================
mobilenet_v3_s05  MobileNetV3-Small (Howard et al. 2019, table 2), width 0.5, 96×96
mobilenet_v3_l    MobileNetV3-Large (table 1), width 0.35, 96×96
mnasnet_05        MnasNet-B1 (Tan et al. 2019, the search result without SE), width 0.5, 96×96
shufflenet_v2_05  ShuffleNetV2 0.5× (Ma et al. 2018, table 5), 96×96
squeezenet_11     SqueezeNet 1.1 (Iandola et al. 2016; 1.1: 3×3/64 stem, pooling earlier), 64×64
resnet18_025      ResNet-18 (He et al. 2016, table 1) at a quarter width (16 to 128), 64×64
efficientnet_b0   EfficientNet-B0 (Tan and Le 2019, table 1) at width 0.35, 96×96
================  ========================================================================

Narrowed where the paper's classifier would dominate the constants: the MobileNetV3 classifier
hidden layer is 128 wide (as the zoo's mobilenet_v3_s); the last 1×1 expansions keep the width
multiplier (MnasNet, EfficientNet: 1280 × width).
"""

from __future__ import annotations

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

from mcuflow.zoo import ModelSpec, spec
from mcuflow.zoo.extra import Bottleneck, MobileNetV3Small, SqueezeExcite, _divisible
from mcuflow.zoo.families import conv_bn_act
from mcuflow.zoo.mlperf import natural_images

__all__ = ["SPECS", "EfficientNet", "MnasNet", "MobileNetV3Large", "ResNet18", "ShuffleNetV2", "SqueezeNet11"]


class MobileNetV3Large(MobileNetV3Small):
    # (kernel, expanded, out, SE, hard-swish, stride) at width 1.0: the paper's table 1
    PLAN = [(3, 16, 16, False, False, 1), (3, 64, 24, False, False, 2), (3, 72, 24, False, False, 1),
            (5, 72, 40, True, False, 2), (5, 120, 40, True, False, 1), (5, 120, 40, True, False, 1),
            (3, 240, 80, False, True, 2), (3, 200, 80, False, True, 1), (3, 184, 80, False, True, 1),
            (3, 184, 80, False, True, 1), (3, 480, 112, True, True, 1), (3, 672, 112, True, True, 1),
            (5, 672, 160, True, True, 2), (5, 960, 160, True, True, 1), (5, 960, 160, True, True, 1)]
    LAST = 960


class MnasNet(nn.Module):
    """Stem 3×3/2 (32), a depthwise-separable block (16), six stacks of inverted residuals with
    ReLU (expansion, kernel, channels, repeats, first stride), a 1×1 expansion to 1280 × width,
    global pooling and a linear classifier."""

    STACKS = ((3, 3, 24, 3, 2), (3, 5, 40, 3, 2), (6, 5, 80, 3, 2), (6, 3, 96, 2, 1), (6, 5, 192, 4, 2),
              (6, 3, 320, 1, 1))

    def __init__(self, num_classes: int = 2, width: float = 0.5):
        super().__init__()
        stem, c = _divisible(32 * width), _divisible(16 * width)
        layers = [conv_bn_act(3, stem, 3, 2), conv_bn_act(stem, stem, 3, groups=stem),
                  conv_bn_act(stem, c, 1, activation=None)]
        for expansion, kernel, channels, repeats, stride in self.STACKS:
            out = _divisible(channels * width)
            for i in range(repeats):
                layers.append(Bottleneck(c, kernel, c * expansion, out, False, nn.ReLU, stride if i == 0 else 1))
                c = out
        last = _divisible(1280 * width)
        layers.append(conv_bn_act(c, last, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(last, num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean((2, 3)))


def channel_shuffle(x, groups: int):
    """ShuffleNet's shuffle: channels (groups, c / groups) transposed, as a reshape, a transpose
    and a reshape."""
    b, c, h, w = x.shape
    return x.reshape(b, groups, c // groups, h, w).transpose(1, 2).reshape(b, c, h, w)


class _ShuffleUnit(nn.Module):
    """ShuffleNetV2's unit: stride 1 splits the channels in halves and transforms one (1×1, 3×3
    depthwise, 1×1); stride 2 transforms the whole input in two branches (3×3 depthwise/2 + 1×1,
    and the same three layers as stride 1), so the width doubles. Concatenated, then shuffled."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.stride = stride
        half = cout // 2
        branch_in = cin if stride == 2 else cin // 2
        self.branch = nn.Sequential(conv_bn_act(branch_in, half, 1),
                                    conv_bn_act(half, half, 3, stride, groups=half, activation=None),
                                    conv_bn_act(half, half, 1))
        self.shortcut = nn.Sequential(conv_bn_act(cin, cin, 3, 2, groups=cin, activation=None),
                                      conv_bn_act(cin, half, 1)) if stride == 2 else None

    def forward(self, x):
        if self.shortcut is None:
            kept, transformed = x.chunk(2, dim=1)
            y = torch.cat((kept, self.branch(transformed)), dim=1)
        else:
            y = torch.cat((self.shortcut(x), self.branch(x)), dim=1)
        return channel_shuffle(y, 2)


class ShuffleNetV2(nn.Module):
    """Stem 3×3/2 (24) + 3×3/2 max pooling, three stages of shuffle units (4, 8, 4; the first of
    each with stride 2), a 1×1 convolution to 1024, global pooling, linear classifier. Stage
    widths of the 0.5× network: 48, 96, 192."""

    def __init__(self, num_classes: int = 2, widths=(48, 96, 192), repeats=(4, 8, 4), last: int = 1024):
        super().__init__()
        layers, c = [conv_bn_act(3, 24, 3, 2), nn.MaxPool2d(3, 2, 1)], 24
        for width, count in zip(widths, repeats):
            for i in range(count):
                layers.append(_ShuffleUnit(c, width, 2 if i == 0 else 1))
                c = width
        layers.append(conv_bn_act(c, last, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(last, num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean((2, 3)))


class _Fire(nn.Module):
    """SqueezeNet's fire module: a 1×1 squeeze, then 1×1 and 3×3 expansions side by side,
    concatenated; ReLU after each convolution."""

    def __init__(self, cin: int, squeeze: int, expand: int):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.expand1 = nn.Conv2d(squeeze, expand, 1)
        self.expand3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x):
        s = F.relu(self.squeeze(x))
        return torch.cat((F.relu(self.expand1(s)), F.relu(self.expand3(s))), dim=1)


class SqueezeNet11(nn.Module):
    """SqueezeNet 1.1: 3×3/2 convolution (64) + ReLU, 3×3/2 max pooling (ceil mode) after it and
    after the second and fourth fire modules, eight fire modules (squeeze, expand): (16, 64) ×2,
    (32, 128) ×2, (48, 192) ×2, (64, 256) ×2, a 1×1 convolution to the classes + ReLU, global
    average pooling. No BatchNorm."""

    FIRES = ((16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192), (64, 256), (64, 256))

    def __init__(self, num_classes: int = 10):
        super().__init__()
        layers, c = [nn.Conv2d(3, 64, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True)], 64
        for i, (squeeze, expand) in enumerate(self.FIRES):
            layers.append(_Fire(c, squeeze, expand))
            c = 2 * expand
            if i in (1, 3):
                layers.append(nn.MaxPool2d(3, 2, ceil_mode=True))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Conv2d(c, num_classes, 1)

    def forward(self, x):
        return F.relu(self.classifier(self.features(x))).mean((2, 3))


class _BasicBlock(nn.Module):
    """Two 3×3 convolutions with BatchNorm (the first carries the stride), added to the input or
    to its 1×1/stride projection with BatchNorm, then ReLU."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(conv_bn_act(cin, cout, 3, stride), conv_bn_act(cout, cout, 3, activation=None))
        self.shortcut = conv_bn_act(cin, cout, 1, stride, activation=None) if stride != 1 or cin != cout else None

    def forward(self, x):
        return F.relu(self.body(x) + (x if self.shortcut is None else self.shortcut(x)))


class ResNet18(nn.Module):
    """ResNet-18: 7×7/2 convolution + 3×3/2 max pooling, four stages of two basic blocks (the
    first of stages 2 to 4 with stride 2), global pooling, linear classifier; stage widths
    64, 128, 256, 512 × width."""

    def __init__(self, num_classes: int = 10, width: float = 0.25):
        super().__init__()
        widths = [int(64 * width * 2 ** i) for i in range(4)]
        layers, c = [conv_bn_act(3, widths[0], 7, 2), nn.MaxPool2d(3, 2, 1)], widths[0]
        for i, w in enumerate(widths):
            layers += [_BasicBlock(c, w, 2 if i else 1), _BasicBlock(w, w, 1)]
            c = w
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, num_classes)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


class EfficientNet(nn.Module):
    """EfficientNet-B0: stem 3×3/2 (32) + SiLU, seven stages of MBConv blocks (expansion, kernel,
    channels, repeats, first stride) with SiLU and squeeze-and-excite (to a quarter of the
    block's input, SiLU, sigmoid gate), a 1×1 expansion to 1280 × width, global pooling, linear
    classifier."""

    STAGES = ((1, 3, 16, 1, 1), (6, 3, 24, 2, 2), (6, 5, 40, 2, 2), (6, 3, 80, 3, 2), (6, 5, 112, 3, 1),
              (6, 5, 192, 4, 2), (6, 3, 320, 1, 1))

    def __init__(self, num_classes: int = 2, width: float = 0.35):
        super().__init__()
        c = _divisible(32 * width)
        layers = [conv_bn_act(3, c, 3, 2, activation=nn.SiLU)]
        for expansion, kernel, channels, repeats, stride in self.STAGES:
            out = _divisible(channels * width)
            for i in range(repeats):
                se = functools.partial(SqueezeExcite, squeezed=max(1, c // 4), activation=nn.SiLU, gate=nn.Sigmoid)
                layers.append(Bottleneck(c, kernel, c * expansion, out, se, nn.SiLU, stride if i == 0 else 1))
                c = out
        last = _divisible(1280 * width)
        layers.append(conv_bn_act(c, last, 1, activation=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(last, num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean((2, 3)))


def _images(size: int):
    return lambda rng, n: natural_images(rng, n, size)


def _spec(name: str, task: str, build, size: int, reference: str, output: str = "classes") -> ModelSpec:
    return ModelSpec(name, task, build, (1, 3, size, size), _images(size), reference=reference, output=output)


# Every model of the bench, in table order: the zoo's own and the ones above.
SPECS: dict[str, ModelSpec] = {s.name: s for s in [
    spec("mobilenet_v2_035"),
    spec("mobilenet_v3_s"),
    _spec("mobilenet_v3_s05", "MobileNetV3-Small 0.5, 96×96, 2 classes",
          functools.partial(MobileNetV3Small, width=0.5), 96, "Howard et al. 2019, table 2, width 0.5"),
    _spec("mobilenet_v3_l", "MobileNetV3-Large 0.35, 96×96, 2 classes", MobileNetV3Large, 96,
          "Howard et al. 2019, table 1, width 0.35"),
    _spec("mnasnet_05", "MnasNet-B1 0.5, 96×96, 2 classes", MnasNet, 96, "Tan et al. 2019, MnasNet-B1, width 0.5"),
    _spec("shufflenet_v2_05", "ShuffleNetV2 0.5x, 96×96, 2 classes", ShuffleNetV2, 96,
          "Ma et al. 2018, table 5, 0.5x"),
    _spec("squeezenet_11", "SqueezeNet 1.1, 64×64, 10 classes", SqueezeNet11, 64, "Iandola et al. 2016, v1.1",
          output="features"),  # its classifier is a 1×1 convolution + ReLU: no linear layer to centre the scores
    _spec("resnet18_025", "ResNet-18 at width 0.25, 64×64, 10 classes", ResNet18, 64,
          "He et al. 2016, table 1, widths 16-128"),
    _spec("efficientnet_b0", "EfficientNet-B0 0.35, 96×96, 2 classes", EfficientNet, 96,
          "Tan and Le 2019, table 1, width 0.35"),
    spec("regnet_x_tiny"),
]}
