"""Test models for mcuflow: plain nn.Modules, deterministic, each with ``example_input()``.

* ``SmallCNN``     — digits-like 1×1×8×8: (conv+BN+ReLU)×2, max-pool, flatten, linear.
* ``DSCNN``        — keyword spotting in the MLPerf Tiny DS-CNN layout, 1×1×49×10 → 12 classes.
* ``TinyResNet``   — conv-BN-ReLU stem, a residual block with an identity shortcut and one with
                     a 1×1-projection shortcut (add, then ReLU), global average pool, linear.
* ``SingleOp``     — one tiny model per op of the front-end contract (``SINGLE_OP_CASES``).
* ``UNSUPPORTED``  — models using ops mcuflow does not support (the offending line of each is
                     marked ``# unsupported: <case>`` so tests can find its line number).

``make_model(name, seed)`` builds a model in eval mode with realistic BatchNorm statistics
(``init_bn_stats``). ``example_input(seed=0, batch=1)`` returns the tuple of input tensors to
pass to ``torch.export.export``.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = [
    "SmallCNN",
    "DSCNN",
    "TinyResNet",
    "SingleOp",
    "SINGLE_OP_CASES",
    "UNSUPPORTED",
    "MODELS",
    "make_model",
    "init_bn_stats",
    "seeded",
]


@contextlib.contextmanager
def seeded(seed: int):
    """Run a block with torch's global RNG seeded, restoring the previous RNG state after."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def _randn(shape, seed: int, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(seed)) * scale


def _batched(shape, batch: int):
    return (batch,) + tuple(shape[1:])


class _Example:
    """Mixin: ``example_input`` from ``input_shapes`` (randn unless overridden)."""

    input_shapes: tuple[tuple[int, ...], ...] = ()

    def example_input(self, seed: int = 0, batch: int = 1) -> tuple[torch.Tensor, ...]:
        return tuple(_randn(_batched(s, batch), seed * 1000 + i) for i, s in enumerate(self.input_shapes))


# --------------------------------------------------------------------------------------------
# (a) small CNN, digits-like 8×8


class SmallCNN(_Example, nn.Module):
    input_shapes = ((1, 1, 8, 8),)

    def __init__(self, num_classes: int = 10, seed: int = 0):
        super().__init__()
        with seeded(seed):
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(16)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(16 * 4 * 4, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.pool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)

    def example_input(self, seed: int = 0, batch: int = 1):
        # digits-like: pixel intensities in [0, 1], a bright blob on a dark background
        g = _gen(seed)
        x = torch.rand(batch, 1, 8, 8, generator=g) * 0.3
        yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
        for b in range(batch):
            cy, cx = (torch.rand(2, generator=g) * 4 + 2).tolist()
            x[b, 0] += torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 4.0)
        return (x.clamp(0, 1),)


# --------------------------------------------------------------------------------------------
# (b) DS-CNN keyword spotting (MLPerf Tiny layout)


class DSBlock(nn.Module):
    """Depthwise 3×3 + BN + ReLU, pointwise 1×1 + BN + ReLU."""

    def __init__(self, channels: int):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
        self.bn_dw = nn.BatchNorm2d(channels)
        self.pw = nn.Conv2d(channels, channels, 1)
        self.bn_pw = nn.BatchNorm2d(channels)

    def forward(self, x):
        x = F.relu(self.bn_dw(self.dw(x)))
        x = F.relu(self.bn_pw(self.pw(x)))
        return x


class DSCNN(_Example, nn.Module):
    """Input 1×1×49×10 (49 frames × 10 MFCC); conv 10×4 / 2 → 64×25×5; 4 DS blocks; pool; FC."""

    input_shapes = ((1, 1, 49, 10),)
    feature_hw = (25, 5)

    def __init__(self, num_classes: int = 12, channels: int = 64, seed: int = 0):
        super().__init__()
        with seeded(seed):
            self.conv1 = nn.Conv2d(1, channels, (10, 4), stride=(2, 2), padding=(5, 1))
            self.bn1 = nn.BatchNorm2d(channels)
            self.drop1 = nn.Dropout(0.2)
            self.blocks = nn.Sequential(*[DSBlock(channels) for _ in range(4)])
            self.drop2 = nn.Dropout(0.4)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.drop1(x)
        x = self.blocks(x)
        x = self.drop2(x)
        x = self.pool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)

    def example_input(self, seed: int = 0, batch: int = 1):
        # MFCC-like: first coefficients carry most of the energy
        scale = torch.tensor([8.0, 4.0, 3.0, 2.0, 1.5, 1.2, 1.0, 0.8, 0.7, 0.6])
        return (_randn((batch, 1, 49, 10), seed) * scale,)


# --------------------------------------------------------------------------------------------
# (c) small residual network


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
        else:
            self.shortcut = nn.Identity()

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + self.shortcut(x)
        return F.relu(out)


class TinyResNet(_Example, nn.Module):
    input_shapes = ((1, 3, 16, 16),)

    def __init__(self, num_classes: int = 10, seed: int = 0):
        super().__init__()
        with seeded(seed):
            self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(16)
            self.block1 = BasicBlock(16, 16, 1)  # identity shortcut
            self.block2 = BasicBlock(16, 32, 2)  # 1×1 projection shortcut
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = F.relu(self.bn(self.stem(x)))
        x = self.block1(x)
        x = self.block2(x)
        x = self.pool(x)
        x = x.flatten(1)
        return self.fc(x)


# --------------------------------------------------------------------------------------------
# (d) one model per contract op

# case -> (input shapes); each case is one line of SingleOp.forward.
SINGLE_OP_CASES: dict[str, tuple[tuple[int, ...], ...]] = {
    "conv2d": ((1, 3, 8, 8),),
    "conv2d_strided": ((1, 4, 9, 11),),
    "conv2d_dilated": ((1, 2, 10, 10),),
    "conv2d_same": ((1, 2, 6, 6),),
    "depthwise_conv2d": ((1, 8, 6, 6),),
    "linear": ((1, 16),),
    "linear_nobias": ((2, 16),),
    "batch_norm": ((1, 4, 5, 5),),
    "batch_norm_noaffine": ((1, 4, 5, 5),),
    "relu": ((1, 4, 4, 4),),
    "relu_inplace": ((1, 4, 4, 4),),
    "relu6": ((1, 4, 4, 4),),
    "hardtanh": ((1, 4, 4, 4),),
    "clamp": ((1, 4, 4, 4),),
    "clamp_min": ((1, 4, 4, 4),),
    "clamp_max": ((1, 4, 4, 4),),
    "add": ((1, 4, 4, 4), (1, 4, 4, 4)),
    "add_scalar": ((1, 4, 4, 4),),
    "add_const": ((1, 4, 4, 4),),
    "add_alpha": ((1, 4, 4, 4), (1, 4, 4, 4)),
    "mul": ((1, 4, 4, 4), (1, 4, 4, 4)),
    "mul_scalar": ((1, 4, 4, 4),),
    "mul_const": ((1, 4, 4, 4),),
    "max_pool2d": ((1, 3, 8, 8),),
    "max_pool2d_pad": ((1, 3, 9, 9),),
    "avg_pool2d": ((1, 3, 8, 8),),
    "avg_pool2d_pad": ((1, 3, 7, 7),),
    "mean": ((1, 5, 4, 4),),
    "mean_last": ((1, 5, 6),),
    "adaptive_avg_pool2d": ((1, 5, 4, 4),),
    "adaptive_avg_pool2d_2x2": ((1, 5, 4, 6),),
    "reshape": ((1, 2, 3, 4),),
    "flatten": ((1, 2, 3, 4),),
    "squeeze": ((1, 6, 1, 1),),
    "unsqueeze": ((1, 6),),
    "permute": ((1, 2, 3, 4),),
    "softmax": ((1, 10),),
    "cat": ((1, 2, 3, 3), (1, 5, 3, 3)),
    "dropout": ((1, 8),),
    "clone": ((1, 8),),
    "detach": ((1, 8),),
    # operator coverage: odd shapes on purpose
    "pad": ((1, 3, 5, 5),),
    "pad_value_crop": ((1, 4, 7),),
    "zero_pad2d": ((1, 2, 5, 6),),
    "pad_conv": ((1, 3, 8, 7),),
    "pad_avg_pool2d": ((1, 3, 7, 7),),
    "avg_pool2d_include_pad": ((1, 3, 7, 6),),
    "conv2d_same_even": ((1, 2, 7, 6),),
    "sigmoid": ((1, 5, 7),),
    "tanh": ((1, 5, 7),),
    "hardswish": ((1, 3, 5, 5),),
    "hardsigmoid": ((1, 3, 5, 5),),
    "silu": ((1, 3, 5, 5),),
    "gelu": ((1, 5, 7),),
    "gelu_tanh": ((1, 5, 7),),
    "elu": ((1, 5, 7),),
    "leaky_relu": ((1, 3, 5, 5),),
    "neg": ((1, 5, 7),),
    "abs": ((1, 5, 7),),
    "sub": ((1, 4, 3, 5), (1, 4, 3, 5)),
    "rsub": ((1, 7),),
    "minimum": ((1, 3, 5), (1, 3, 5)),
    "maximum": ((1, 3, 5), (1, 3, 5)),
    "sum": ((1, 3, 4, 5),),
    "sum_keepdim": ((1, 4, 6),),
    "mean_channels": ((1, 3, 4, 5),),
    "amax": ((1, 3, 4, 5),),
    "max_dim": ((1, 5, 6),),
    "argmax": ((1, 10),),
    "slice": ((1, 3, 5),),
    "select": ((1, 3, 4),),
    "split": ((1, 3, 4),),
    "chunk": ((1, 3, 6),),
    "expand": ((1, 1, 4),),
    "conv_transpose2d": ((1, 3, 5, 4),),
    "matmul": ((1, 2, 5, 4), (1, 2, 4, 3)),
    "bmm": ((1, 5, 4), (1, 4, 3)),
    "linear_3d": ((1, 5, 8),),
    "upsample_nearest2d": ((1, 3, 4, 3),),
    "layer_norm": ((1, 5, 8),),
    "group_norm": ((1, 6, 3, 4),),
    "softmax_dim1": ((1, 4, 3, 3),),
    "conv1d": ((1, 3, 10),),
    "prelu": ((1, 4, 3, 3),),
    "mish": ((1, 8),),
    "log": ((1, 5, 7),),
    "upsample_bilinear2d": ((1, 3, 4, 3),),
    "where": ((1, 3, 5), (1, 3, 5)),
    "masked_fill": ((1, 4, 3, 3),),
    "eq_ne": ((1, 3, 5), (1, 1, 5)),
    "le_ge": ((2, 6), (2, 6)),
    "embedding": ((1, 7),),
}


class SingleOp(nn.Module):
    """A model made of one contract op. ``SingleOp(case)`` for each case of SINGLE_OP_CASES.

    Inputs are named ``x`` (and ``y`` for two-input cases)."""

    def __init__(self, case: str, seed: int = 0):
        super().__init__()
        if case not in SINGLE_OP_CASES:
            raise KeyError(f"unknown single-op case {case!r}")
        self.case = case
        self.input_shapes = SINGLE_OP_CASES[case]
        with seeded(seed):
            if case == "conv2d":
                self.conv = nn.Conv2d(3, 8, 3, padding=1)
            elif case == "conv2d_strided":
                self.conv = nn.Conv2d(4, 6, (3, 5), stride=2, padding=(1, 2), bias=False)
            elif case == "conv2d_dilated":
                self.conv = nn.Conv2d(2, 4, 3, dilation=2, padding=2)
            elif case == "conv2d_same":
                self.conv = nn.Conv2d(2, 4, 3, padding="same")
            elif case == "depthwise_conv2d":
                self.conv = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
            elif case == "linear":
                self.fc = nn.Linear(16, 10)
            elif case == "linear_nobias":
                self.fc = nn.Linear(16, 5, bias=False)
            elif case == "batch_norm":
                self.bn = nn.BatchNorm2d(4, eps=1e-3)
            elif case == "batch_norm_noaffine":
                self.bn = nn.BatchNorm2d(4, affine=False)
            elif case in ("add_const", "mul_const"):
                self.register_buffer("k", torch.rand(1, 4, 1, 1) + 0.5)
            elif case == "dropout":
                self.drop = nn.Dropout(0.5)
            elif case == "zero_pad2d":
                self.pad = nn.ZeroPad2d((1, 0, 2, 1))
            elif case == "pad_conv":
                self.conv = nn.Conv2d(3, 4, 3, stride=2)
            elif case == "conv2d_same_even":
                self.conv = nn.Conv2d(2, 3, (4, 2), padding="same")
            elif case == "conv_transpose2d":
                self.conv = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
            elif case == "linear_3d":
                self.fc = nn.Linear(8, 4)
            elif case == "layer_norm":
                self.norm = nn.LayerNorm(8)
            elif case == "conv1d":
                self.conv = nn.Conv1d(3, 4, 3, padding=1)
            elif case == "prelu":
                self.act = nn.PReLU(4)
            elif case == "group_norm":
                self.norm = nn.GroupNorm(3, 6)
            elif case == "embedding":
                self.embed = nn.Embedding(10, 4)
        init_bn_stats(self, seed)
        self.eval()

    def example_input(self, seed: int = 0, batch: int = 1):
        if self.case == "embedding":  # token ids
            return (torch.randint(0, 10, _batched(self.input_shapes[0], batch), generator=_gen(seed)),)
        return tuple(_randn(_batched(s, batch), seed * 1000 + i) for i, s in enumerate(self.input_shapes))

    def forward(self, x, y=None):
        # One line per case: torch.export records only the frames of forward() methods, so
        # the op's source (what the front end reports) is the case's line here.
        c = self.case
        if c == "conv2d": return self.conv(x)
        if c == "conv2d_strided": return self.conv(x)
        if c == "conv2d_dilated": return self.conv(x)
        if c == "conv2d_same": return self.conv(x)
        if c == "depthwise_conv2d": return self.conv(x)
        if c == "linear": return self.fc(x)
        if c == "linear_nobias": return self.fc(x)
        if c == "batch_norm": return self.bn(x)
        if c == "batch_norm_noaffine": return self.bn(x)
        if c == "relu": return F.relu(x)
        if c == "relu_inplace": return torch.relu_(x.clone())
        if c == "relu6": return F.relu6(x)
        if c == "hardtanh": return F.hardtanh(x, -2.0, 3.0)
        if c == "clamp": return torch.clamp(x, -0.5, 0.75)
        if c == "clamp_min": return torch.clamp(x, min=0.25)
        if c == "clamp_max": return x.clamp(max=1.5)
        if c == "add": return x + y
        if c == "add_scalar": return x + 0.5
        if c == "add_const": return x + self.k
        if c == "add_alpha": return torch.add(x, y, alpha=2)
        if c == "mul": return x * y
        if c == "mul_scalar": return x * 3.0
        if c == "mul_const": return x * self.k
        if c == "max_pool2d": return F.max_pool2d(x, 2)
        if c == "max_pool2d_pad": return F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)
        if c == "avg_pool2d": return F.avg_pool2d(x, 2)
        if c == "avg_pool2d_pad": return F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)
        if c == "mean": return x.mean(dim=(2, 3), keepdim=True)
        if c == "mean_last": return torch.mean(x, -1)
        if c == "adaptive_avg_pool2d": return F.adaptive_avg_pool2d(x, 1)
        if c == "adaptive_avg_pool2d_2x2": return F.adaptive_avg_pool2d(x, (2, 2))
        if c == "reshape": return x.reshape(1, 6, -1)
        if c == "flatten": return torch.flatten(x, 1)
        if c == "squeeze": return x.squeeze(-1).squeeze(-1)
        if c == "unsqueeze": return x.unsqueeze(-1)
        if c == "permute": return x.permute(0, 2, 3, 1)
        if c == "softmax": return F.softmax(x, dim=-1)
        if c == "cat": return torch.cat([x, y], dim=1)
        if c == "dropout": return self.drop(x)
        if c == "clone": return x.clone()
        if c == "detach": return x.detach()
        if c == "pad": return F.pad(x, (1, 2, 0, 1))
        if c == "pad_value_crop": return F.pad(x, (2, -1), value=0.5)
        if c == "zero_pad2d": return self.pad(x)
        if c == "pad_conv": return self.conv(F.pad(x, (0, 1, 1, 0)))
        if c == "pad_avg_pool2d": return F.avg_pool2d(F.pad(x, (0, 1, 0, 1)), 2)
        if c == "avg_pool2d_include_pad": return F.avg_pool2d(x, 3, stride=2, padding=1)
        if c == "conv2d_same_even": return self.conv(x)
        if c == "sigmoid": return torch.sigmoid(x)
        if c == "tanh": return torch.tanh(x)
        if c == "hardswish": return F.hardswish(x)
        if c == "hardsigmoid": return F.hardsigmoid(x)
        if c == "silu": return F.silu(x)
        if c == "gelu": return F.gelu(x)
        if c == "gelu_tanh": return F.gelu(x, approximate="tanh")
        if c == "elu": return F.elu(x, alpha=0.7)
        if c == "leaky_relu": return F.leaky_relu(x, 0.2)
        if c == "neg": return -x
        if c == "abs": return x.abs()
        if c == "sub": return x - y
        if c == "rsub": return 1.0 - x
        if c == "minimum": return torch.minimum(x, y)
        if c == "maximum": return torch.maximum(x, y)
        if c == "sum": return x.sum(dim=(1, 3))
        if c == "sum_keepdim": return x.sum(dim=-1, keepdim=True)
        if c == "mean_channels": return x.mean(dim=1)
        if c == "amax": return x.amax(dim=2)
        if c == "max_dim": return x.max(dim=1).values
        if c == "argmax": return x.argmax(dim=-1)
        if c == "slice": return x[:, 1:3, ::2]
        if c == "select": return x[:, 1]
        if c == "split": return torch.split(x, [1, 2], dim=1)[1]
        if c == "chunk": return x.chunk(2, dim=-1)[1]
        if c == "expand": return x.expand(1, 3, 4)
        if c == "conv_transpose2d": return self.conv(x)
        if c == "matmul": return torch.matmul(x, y)
        if c == "bmm": return torch.bmm(x, y)
        if c == "linear_3d": return self.fc(x)
        if c == "upsample_nearest2d": return F.interpolate(x, scale_factor=2, mode="nearest")
        if c == "layer_norm": return self.norm(x)
        if c == "group_norm": return self.norm(x)
        if c == "softmax_dim1": return F.softmax(x, dim=1)
        if c == "conv1d": return self.conv(x)
        if c == "prelu": return self.act(x)
        if c == "mish": return F.mish(x)
        if c == "log": return torch.log(x.abs() + 0.25)  # positive inputs: log of a normal sample is NaN
        if c == "upsample_bilinear2d": return F.interpolate(x, scale_factor=2, mode="bilinear")
        if c == "where": return torch.where(x > y, x, y)
        if c == "masked_fill": return x.masked_fill(x < 0, 0.0)
        if c == "eq_ne": return torch.where(x == y, x, y) * torch.where(x != y, y, x)
        if c == "le_ge": return torch.where(x <= y, x, y) - torch.where(x >= y, x, y)
        if c == "embedding": return self.embed(x)
        raise AssertionError(c)


# --------------------------------------------------------------------------------------------
# models mcuflow must reject (each offending line is marked for the tests)


class SinModel(_Example, nn.Module):
    input_shapes = ((1, 8),)

    def forward(self, x):
        y = x * 2.0
        return torch.sin(y)  # unsupported: sin


class TopKModel(_Example, nn.Module):
    input_shapes = ((1, 10),)

    def __init__(self, seed: int = 0):
        super().__init__()
        with seeded(seed):
            self.fc = nn.Linear(10, 10)

    def forward(self, x):
        y = self.fc(x)
        return torch.topk(y, 3).values  # unsupported: topk


UNSUPPORTED = {
    "sin": SinModel,
    "topk": TopKModel,
}


# --------------------------------------------------------------------------------------------
# BatchNorm statistics


def _bn_layers(model: nn.Module):
    return [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]


@torch.no_grad()
def init_bn_stats(model: nn.Module, seed: int = 0, inputs=None, batches: int = 4, batch_size: int = 8) -> nn.Module:
    """Give every BatchNorm layer realistic random statistics and affine parameters.

    Affine parameters are drawn at random (weight in [0.6, 1.4], bias around +0.1, so ReLUs
    after them keep roughly half their inputs). Running statistics are then estimated from the
    activations of ``batches`` random batches (``inputs``, or the model's own
    ``example_input(seed, batch_size)``) and jittered a little, so normalized activations have
    the ranges a trained network shows (about unit variance) instead of PyTorch's identity
    defaults. Deterministic for a given seed; the model's train/eval flags are restored.
    Returns the model.
    """
    bns = _bn_layers(model)
    if not bns:
        return model
    g = _gen(seed + 7919)
    for bn in bns:
        c = bn.num_features
        if bn.affine:
            bn.weight.copy_(0.6 + 0.8 * torch.rand(c, generator=g))
            bn.bias.copy_(0.1 + 0.2 * torch.randn(c, generator=g))

    tracked = [bn for bn in bns if bn.track_running_stats]
    if not tracked:
        return model
    modes = {m: m.training for m in model.modules()}
    saved_momentum = {bn: bn.momentum for bn in tracked}
    example = getattr(model, "example_input", None)
    try:
        if inputs is None and example is None:
            # no way to run the model: plausible random statistics
            for bn in tracked:
                c = bn.num_features
                bn.running_mean.copy_(0.5 * torch.randn(c, generator=g))
                bn.running_var.copy_(0.5 + 1.5 * torch.rand(c, generator=g))
            return model
        model.eval()
        for bn in tracked:
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over all batches
            bn.train()
        for i in range(batches):
            if inputs is not None:
                xs = inputs[i % len(inputs)]
                xs = xs if isinstance(xs, (tuple, list)) else (xs,)
            else:
                xs = example(seed=seed * 7 + 100 + i, batch=batch_size)
            model(*xs)
        for bn in tracked:
            c = bn.num_features
            std = bn.running_var.clamp_min(1e-6).sqrt()
            bn.running_mean.add_(0.05 * std * torch.randn(c, generator=g))
            bn.running_var.mul_(torch.exp(0.1 * torch.randn(c, generator=g)))
    finally:
        for bn, mom in saved_momentum.items():
            bn.momentum = mom
        for m, mode in modes.items():
            m.training = mode
    return model


# --------------------------------------------------------------------------------------------

MODELS = {
    "small_cnn": SmallCNN,
    "ds_cnn": DSCNN,
    "resnet": TinyResNet,
}


def make_model(name: str, seed: int = 0) -> nn.Module:
    """A test model in eval mode with realistic BatchNorm statistics."""
    if name in MODELS:
        model = MODELS[name](seed=seed)
    elif name in SINGLE_OP_CASES:
        return SingleOp(name, seed=seed)
    elif name in UNSUPPORTED:
        cls = UNSUPPORTED[name]
        model = cls(seed=seed) if "seed" in cls.__init__.__code__.co_varnames else cls()
    else:
        raise KeyError(f"unknown test model {name!r}")
    init_bn_stats(model, seed)
    return model.eval()
