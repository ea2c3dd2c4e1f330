"""Zoo models of more families: 1-D sensor models, a segmentation U-Net, a small vision
transformer and a RegNetX with grouped convolutions.

================  ==================================================
model             task
================  ==================================================
har_cnn1d         activity recognition, 3-axis accelerometer × 128, 6 classes
tcn               activity recognition, 6 channels × 64, TCN, 6 classes
unet_bilinear     segmentation, 16×16×3, 2 classes per pixel
vit_tiny          image classification, 32×32×3, ViT (timm-style attention), 10 classes
regnet_x_tiny     image classification, 64×64×3, RegNetX (grouped 3×3 convolutions), 10 classes
group_norm_cnn    image classification, 24×24×3, Conv + GroupNorm + ReLU ×3, 10 classes
================  ==================================================

* ``har_cnn1d``: the usual 1-D CNN of human-activity recognition (UCI-HAR style windows of
  128 accelerometer samples): three Conv1d + BatchNorm1d + ReLU layers (16, 32, 32 filters,
  kernels 5, 5, 3), max pooling after the first two, global average pooling, a linear
  classifier.
* ``tcn``: a temporal convolutional network (Bai et al., "An Empirical Evaluation of Generic
  Convolutional and Recurrent Networks for Sequence Modeling", 2018): three residual blocks of
  two dilated causal Conv1d (kernel 3, dilations 1, 2, 4; the causal padding written as
  ``F.pad(x, (2 * d, 0))``) with PReLU, a 1×1 Conv1d shortcut where the width changes, the
  last time step into a linear classifier.
* ``unet_bilinear``: a two-level U-Net (Ronneberger et al. 2015) at toy size with bilinear
  upsampling in the decoder (``align_corners=False`` and ``True``), skip concatenations,
  BatchNorm, ReLU and Mish, and a 1×1 convolution to two classes per pixel. Sized for qemu-m0.
* ``vit_tiny``: a vision transformer (Dosovitskiy et al. 2021) written as timm writes it: an
  8×8 patch embedding convolution, a class token concatenated in front of the 16 patch tokens,
  a learned position embedding added, two pre-norm blocks of attention (one ``qkv`` linear,
  ``reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0)``, scaled ``q @ k.transpose``,
  softmax) and a GELU MLP, a final LayerNorm and a linear head on the class token. Width 32,
  2 heads, MLP 64.
* ``regnet_x_tiny``: a RegNetX (Radosavovic et al., "Designing Network Design Spaces", 2020)
  built as torchvision builds ``regnet_x_400mf``, at MCU size: a stride-2 3×3 stem of 32
  channels, four stages of X blocks (1×1 conv, grouped 3×3 conv of group width 16 carrying the
  stage's stride, 1×1 conv, each with BatchNorm; a 1×1 conv + BatchNorm shortcut where the
  shape changes; ReLU after the residual add), widths 32, 64, 128, 256 (2, 4, 8, 16 groups),
  depths 1, 1, 2, 2 where regnet_x_400mf has widths 32, 64, 160, 400 and depths 1, 2, 7, 12;
  global average pooling and a linear classifier.
* ``group_norm_cnn``: the small-batch CNN of Wu and He ("Group Normalization", 2018): three
  3×3 Conv2d + GroupNorm (4 groups) + ReLU blocks of 16, 32 and 32 channels (stride 2 in the
  last two), global average pooling and a linear classifier; the normalization needs no batch
  statistics, so there is no BatchNorm to fold and every norm runs (int8, group_norm_s8).

Counts are not published for these configurations: ``reference_parameters`` and
``reference_macs`` are left unset.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import ModelSpec, register
from .mlperf import natural_images

__all__ = ["GroupNormCnn", "HarCnn1d", "RegNetX", "Tcn", "UNetBilinear", "VitTiny", "accelerometer_windows",
           "conv_bn_act"]


def _conv_bn_relu_1d(cin: int, cout: int, kernel: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv1d(cin, cout, kernel, padding=kernel // 2, bias=False), nn.BatchNorm1d(cout),
                         nn.ReLU())


class HarCnn1d(nn.Module):
    """(Conv1d + BN + ReLU) × 3 with max pooling, global average pooling, FC → 6 activities."""

    def __init__(self, channels: int = 3, num_classes: int = 6):
        super().__init__()
        self.features = nn.Sequential(_conv_bn_relu_1d(channels, 16, 5), nn.MaxPool1d(2),
                                      _conv_bn_relu_1d(16, 32, 5), nn.MaxPool1d(2),
                                      _conv_bn_relu_1d(32, 32, 3), nn.AdaptiveAvgPool1d(1))
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


class _TemporalBlock(nn.Module):
    def __init__(self, cin: int, cout: int, dilation: int, kernel: int = 3):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.conv1 = nn.Conv1d(cin, cout, kernel, dilation=dilation)
        self.conv2 = nn.Conv1d(cout, cout, kernel, dilation=dilation)
        self.act1, self.act2 = nn.PReLU(cout), nn.PReLU(cout)
        self.shortcut = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        y = self.act1(self.conv1(F.pad(x, (self.pad, 0))))
        y = self.act2(self.conv2(F.pad(y, (self.pad, 0))))
        return F.relu(y + self.shortcut(x))


class Tcn(nn.Module):
    """Three causal residual blocks (dilations 1, 2, 4), the last time step into FC → 6."""

    def __init__(self, channels: int = 6, width: int = 16, num_classes: int = 6):
        super().__init__()
        self.blocks = nn.Sequential(_TemporalBlock(channels, width, 1), _TemporalBlock(width, width, 2),
                                    _TemporalBlock(width, width, 4))
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.fc(self.blocks(x)[:, :, -1])


def _conv_bn(cin: int, cout: int, act: nn.Module) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), act)


class UNetBilinear(nn.Module):
    """Encoder 8 → 16 channels (max pooling), bottleneck, decoder with bilinear upsampling and
    skip concatenations, 1×1 convolution to per-pixel class scores."""

    def __init__(self, channels: int = 3, num_classes: int = 2):
        super().__init__()
        self.enc1 = _conv_bn(channels, 8, nn.ReLU())
        self.enc2 = _conv_bn(8, 16, nn.Mish())
        self.bottleneck = _conv_bn(16, 16, nn.ReLU())
        self.dec2 = _conv_bn(32, 8, nn.ReLU())
        self.dec1 = _conv_bn(16, 8, nn.Mish())
        self.head = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.bottleneck(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([F.interpolate(b, scale_factor=2, mode="bilinear", align_corners=False), e2], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, size=e1.shape[-2:], mode="bilinear", align_corners=True), e1], 1))
        return self.head(d1)


class _Attention(nn.Module):
    """timm's ``Attention``: one qkv projection split into heads by reshape/permute/unbind."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = ((q * self.scale) @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))


class _Block(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), _Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VitTiny(nn.Module):
    """Patch embedding, class token, position embedding, two pre-norm blocks, class-token head."""

    def __init__(self, image: int = 32, patch: int = 8, dim: int = 32, heads: int = 2, hidden: int = 64,
                 depth: int = 2, num_classes: int = 10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, dim))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, (image // patch) ** 2 + 1, dim))
        self.blocks = nn.Sequential(*[_Block(dim, heads, hidden) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def conv_bn_act(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1,
                activation=nn.ReLU) -> nn.Sequential:
    """Conv2d without bias ("same" padding for odd kernels) + BatchNorm2d, then ``activation()``
    unless it is None."""
    layers = [nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, activation()) if activation else nn.Sequential(*layers)


class _XBlock(nn.Module):
    """RegNetX's residual bottleneck (bottleneck ratio 1): 1×1, grouped 3×3 (the stride), 1×1."""

    def __init__(self, cin: int, cout: int, stride: int, group_width: int):
        super().__init__()
        self.f = nn.Sequential(conv_bn_act(cin, cout, 1), conv_bn_act(cout, cout, 3, stride, cout // group_width),
                               conv_bn_act(cout, cout, 1, activation=None))
        self.shortcut = conv_bn_act(cin, cout, 1, stride, activation=None) if cin != cout or stride != 1 else None

    def forward(self, x):
        return F.relu(self.f(x) + (x if self.shortcut is None else self.shortcut(x)))


class RegNetX(nn.Module):
    """Stem, stages of X blocks (the first of each with stride 2), average pooling, linear head."""

    def __init__(self, widths=(32, 64, 128, 256), depths=(1, 1, 2, 2), group_width: int = 16, stem: int = 32,
                 num_classes: int = 10):
        super().__init__()
        self.stem = conv_bn_act(3, stem, 3, stride=2)
        blocks, cin = [], stem
        for width, depth in zip(widths, depths):
            for i in range(depth):
                blocks.append(_XBlock(cin, width, 2 if i == 0 else 1, group_width))
                cin = width
        self.trunk = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        return self.fc(self.trunk(self.stem(x)).mean((2, 3)))


class GroupNormCnn(nn.Module):
    """(Conv2d 3×3 + GroupNorm + ReLU) × 3, global average pooling, FC → 10 classes."""

    def __init__(self, channels: int = 3, num_classes: int = 10, groups: int = 4):
        super().__init__()
        widths = [channels, 16, 32, 32]
        layers = []
        for i in range(3):
            layers += [nn.Conv2d(widths[i], widths[i + 1], 3, stride=2 if i else 1, padding=1),
                       nn.GroupNorm(groups, widths[i + 1]), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


def accelerometer_windows(channels: int, length: int):
    """``(n, channels, length)`` windows of body motion: a per-window gait frequency and phase
    per axis, gravity on one axis, harmonics and sensor noise, about unit variance."""

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        t = np.arange(length)[None, None, :] / 50.0  # 50 Hz
        freq = rng.uniform(0.5, 3.0, (n, 1, 1))
        phase = rng.uniform(0, 2 * np.pi, (n, channels, 1))
        amp = rng.uniform(0.2, 1.5, (n, channels, 1))
        gravity = np.zeros((n, channels, 1))
        gravity[np.arange(n), rng.integers(0, channels, n), 0] = 1.0
        wave = amp * np.sin(2 * np.pi * freq * t + phase) + 0.3 * amp * np.sin(4 * np.pi * freq * t + 2 * phase)
        return (wave + gravity + 0.2 * rng.standard_normal((n, channels, length))).astype(np.float32)

    return sample


register(ModelSpec("har_cnn1d", "activity recognition (Conv1d+BN+ReLU ×3, 3-axis × 128)", HarCnn1d, (1, 3, 128),
                   accelerometer_windows(3, 128), reference="UCI-HAR-style 1-D CNN"))
register(ModelSpec("tcn", "activity recognition (TCN: dilated causal Conv1d residual blocks, 6 × 64)", Tcn,
                   (1, 6, 64), accelerometer_windows(6, 64), reference="Bai et al. 2018, toy size"))
register(ModelSpec("unet_bilinear", "segmentation (two-level U-Net, bilinear upsampling, 16×16×3)", UNetBilinear,
                   (1, 3, 16, 16), lambda rng, n: natural_images(rng, n, 16),
                   reference="Ronneberger et al. 2015, toy size", output="features"))
register(ModelSpec("vit_tiny", "image classification (ViT, timm-style attention, 32×32×3)", VitTiny,
                   (1, 3, 32, 32), lambda rng, n: natural_images(rng, n, 32),
                   reference="Dosovitskiy et al. 2021 / timm VisionTransformer, toy size"))
register(ModelSpec("regnet_x_tiny", "image classification (RegNetX, grouped 3×3 convolutions, 64×64×3)", RegNetX,
                   (1, 3, 64, 64), lambda rng, n: natural_images(rng, n, 64),
                   reference="Radosavovic et al. 2020 / torchvision regnet_x_400mf blocks, MCU size"))
register(ModelSpec("group_norm_cnn", "image classification (Conv + GroupNorm + ReLU ×3, 24×24×3)", GroupNormCnn,
                   (1, 3, 24, 24), lambda rng, n: natural_images(rng, n, 24),
                   reference="Wu and He 2018 (Group Normalization), toy size"))
