"""Every operator-coverage kernel built for the device and run on emulated boards:
int8 programs bit-identical to the host runtime on the smallest core (Armv6-M, no FPU, 16 KiB
RAM) and on the MVE core; float32 programs within float rounding of the host (the device's
libm may round exp/erf/tanh differently in the last bit)."""

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
from fwutil import on_tier, requires_cross  # noqa: E402

pytestmark = requires_cross

SAMPLES = 4


class EveryNewOp(nn.Module):
    """Small enough for qemu-m0; one use of each new kernel family."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.up = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
        self.conv = nn.Conv2d(4, 4, 3)
        self.norm = nn.LayerNorm(5)

    def forward(self, x, y):
        a = self.conv(F.pad(self.up(x), (0, 1, 1, 0)))            # transpose conv, folded asymmetric pad
        a = F.avg_pool2d(a, 3, 1, padding=1)                      # include-pad average pool
        a = F.interpolate(F.pad(a, (1, 1), value=0.25), scale_factor=2)[:, :, 1::3, :6]  # pad, upsample, slice
        b = F.silu(a) - torch.tanh(a) + F.gelu(a) * F.hardsigmoid(a)
        b = torch.maximum(b, a.abs()) + torch.minimum(F.leaky_relu(b, 0.1), F.elu(a))
        s = F.softmax(b.sum(dim=2, keepdim=True).expand(1, 4, 3, 6) + b, dim=2)
        m = torch.matmul(s, y)                                    # [1, 4, 3, 6] @ [1, 4, 6, 5]
        m = self.norm(m + m.amax(dim=-1, keepdim=True).transpose(-1, -2).expand(1, 4, 5, 3).transpose(-1, -2) * m[..., :1])
        return m.mean(dim=1), m.argmax(dim=-1)

    @staticmethod
    def inputs(seed, n):
        g = torch.Generator().manual_seed(seed)
        return [torch.randn(n, 3, 3, 3, generator=g).numpy(), torch.randn(n, 4, 6, 5, generator=g).numpy()]


@pytest.fixture(scope="module")
def model_and_export():
    model = EveryNewOp().eval()
    example = tuple(torch.from_numpy(a) for a in EveryNewOp.inputs(0, 1))
    return model, torch.export.export(model, example)


def used_kernels(program):
    return {op["kernel"] for op in program.describe()["ops"]}


@pytest.mark.parametrize("target, board", [("cortex-m0", "qemu-m0"), ("cortex-m55", "qemu-m55")])
def test_int8_new_kernels_bit_exact_on_board(model_and_export, target, board):
    _, ep = model_and_export
    calibration = [tuple(torch.from_numpy(a) for a in EveryNewOp.inputs(s, 1)) for s in range(1, 25)]
    program = mcuflow.compile(ep, target=target, calibration=calibration)
    assert on_tier({"strided_copy_b8", "avgpool_include_pad_s8", "lut_s8", "sub_s8", "minimum_s8", "maximum_s8",
                    "reduce_s8", "argmax_s8", "transpose_conv_s8", "batch_matmul_s8", "group_norm_s8"},
                   board) <= used_kernels(program)
    xs = EveryNewOp.inputs(99, SAMPLES)
    for on_board, on_host in zip(device.run_on_board(program, xs, board), program.run(xs)):
        assert on_board.dtype == on_host.dtype
        np.testing.assert_array_equal(on_board, on_host)


@pytest.mark.parametrize("board", ["qemu-m4", "qemu-m55"])
def test_fp32_new_kernels_on_board(model_and_export, board):
    model, ep = model_and_export
    program = mcuflow.compile(ep, target=get_board(board).core, precision="fp32")
    assert {"strided_copy_b32", "avgpool_include_pad_f32", "activation_f32", "sub_f32", "minimum_f32", "maximum_f32",
            "reduce_f32", "argmax_f32", "transpose_conv_f32", "batch_matmul_f32", "group_norm_f32"} <= used_kernels(program)
    xs = EveryNewOp.inputs(98, SAMPLES)
    on_board, on_host = device.run_on_board(program, xs, board), program.run(xs)
    np.testing.assert_allclose(on_board[0], on_host[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(on_board[1], on_host[1])
    with torch.no_grad():  # one sample at a time, like the program (the model is written for batch 1)
        eager = torch.cat([model(*[torch.from_numpy(a[i:i + 1]) for a in xs])[0] for i in range(SAMPLES)])
    np.testing.assert_allclose(on_host[0], eager.numpy(), rtol=1e-5, atol=1e-5)
