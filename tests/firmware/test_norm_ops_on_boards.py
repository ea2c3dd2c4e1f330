"""The normalizations (group_norm_s8 / group_norm_f32: layer_norm, GroupNorm, InstanceNorm) on
emulated boards: int8 programs bit-identical to the host runtime on Armv6-M (no DSP, no FPU),
the DSP core and the MVE core; float32 programs within float rounding of the host. A small
GroupNorm CNN compiled for each core as well, with its norms in int8 (no float fallback)."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from fwutil import requires_cross  # noqa: E402

pytestmark = requires_cross

SAMPLES = 3
BOARDS = [("cortex-m0", "qemu-m0"), ("cortex-m4", "qemu-m4"), ("cortex-m55", "qemu-m55")]


class Norms(nn.Module):
    """Each normalization the front end maps onto group_norm, with and without affine."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.gn = nn.GroupNorm(3, 6)
        self.inorm = nn.InstanceNorm2d(6, affine=True)
        self.ln = nn.LayerNorm(5)
        for m in (self.gn, self.inorm, self.ln):
            nn.init.uniform_(m.weight, -1.5, 1.5)
            nn.init.uniform_(m.bias, -0.5, 0.5)

    def forward(self, x):
        a = self.gn(self.conv(x))
        b = self.inorm(F.relu(a)) + F.instance_norm(a)
        return self.ln(b), F.group_norm(b.flatten(2), 2)


class GroupNormCnn(nn.Module):
    """Conv → GroupNorm → ReLU blocks, pooled classifier (a GroupNorm CNN)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        chans = [3, 8, 16, 16]
        layers = []
        for i in range(3):
            layers += [nn.Conv2d(chans[i], chans[i + 1], 3, stride=2 if i else 1, padding=1),
                       nn.GroupNorm(4, chans[i + 1]), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


def inputs(shape, seed, n):
    return [torch.randn(n, *shape[1:], generator=torch.Generator().manual_seed(seed)).numpy()]


MODELS = {"norms": (Norms, (1, 3, 4, 5)), "group_norm_cnn": (GroupNormCnn, (1, 3, 12, 12))}


@pytest.fixture(scope="module", params=sorted(MODELS))
def model_and_export(request):
    cls, shape = MODELS[request.param]
    model = cls().eval()
    return model, shape, torch.export.export(model, (torch.randn(shape),))


def used_kernels(program):
    return {op["kernel"] for op in program.describe()["ops"]}


@pytest.mark.parametrize("target, board", BOARDS)
def test_int8_norms_bit_exact_on_board(model_and_export, target, board):
    model, shape, ep = model_and_export
    calibration = [tuple(torch.from_numpy(a) for a in inputs(shape, s, 1)) for s in range(1, 17)]
    program = mcuflow.compile(ep, target=target, calibration=calibration)
    assert "group_norm_s8" in used_kernels(program) and not program.fallbacks()
    xs = inputs(shape, 99, SAMPLES)
    on_host = program.run(xs)
    for got, want in zip(device.run_on_board(program, xs, board), on_host):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    if isinstance(model, GroupNormCnn):  # int8 stays near eager (the stacked small groups of
        with torch.no_grad():          # Norms amplify input quantization; test_ops checks each op)
            want = model(torch.from_numpy(xs[0][:1])).numpy()
        assert np.abs(on_host[0][:1] - want).max() <= 0.1 * float(want.max() - want.min())


@pytest.mark.parametrize("board", ["qemu-m4", "qemu-m55"])
def test_fp32_norms_on_board(model_and_export, board):
    model, shape, ep = model_and_export
    program = mcuflow.compile(ep, target=get_board(board).core, precision="fp32")
    assert "group_norm_f32" in used_kernels(program)
    xs = inputs(shape, 98, SAMPLES)
    for got, want in zip(device.run_on_board(program, xs, board), program.run(xs)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
