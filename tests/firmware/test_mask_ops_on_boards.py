"""Masks and ids on emulated boards: comparisons (compare_s8 with two scales, a compare table,
exact codes of a constant tensor), where and masked_fill, masks read as numbers, where and cat
between masks, and a keyword-id model (int32 ids into gather_rows) bit-identical to the
host runtime on Armv6-M (no DSP, no FPU), the DSP core and the MVE core, int8 and fp32; an id
outside the embedding table is the board's index_out_of_range as on the host."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from mcuflow.errors import McuflowError  # noqa: E402
from fwutil import on_tier, requires_cross  # noqa: E402

pytestmark = requires_cross

SAMPLES = 3
BOARDS = [("cortex-m0", "qemu-m0"), ("cortex-m4", "qemu-m4"), ("cortex-m55", "qemu-m55")]


class Masks(nn.Module):
    """Comparisons of two activations and with scalars, where, masked_fill, logical_not."""

    def forward(self, x, y):
        a = torch.where(x > y, x, 0.5 * y)
        b = a.masked_fill(torch.logical_not(y <= 0.2), -1.0)
        return torch.where(x.eq(y.relu()), b, x - y), (a >= b)


class MaskNumbers(nn.Module):
    """A comparison with a constant tensor, where and cat between masks, masks read as numbers."""

    def __init__(self):
        super().__init__()
        self.register_buffer("limits", torch.linspace(-1.3, 1.1, 5))

    def forward(self, x, y):
        near = torch.where(x > 0, x < self.limits, y > self.limits)
        both = torch.cat([near, x.eq(y)], dim=1)
        return both.float().mean(dim=1) + x[:, :1] * (y > 0), both


class Keywords(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(6)
        self.embed = nn.Embedding(40, 12)
        self.fc = nn.Linear(12, 5)

    def forward(self, ids):
        return self.fc(self.embed(ids).mean(dim=1))


def float_inputs(seed, n):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, 3, 4, 5, generator=g).numpy(), torch.randn(n, 3, 4, 5, generator=g).numpy()]


def id_inputs(seed, n):
    return [torch.randint(0, 40, (n, 6), generator=torch.Generator().manual_seed(seed)).numpy()]


MODELS = {
    "masks": (Masks, float_inputs, ("compare_s8", "where_s8", "lut_s8")),
    "keywords": (Keywords, id_inputs, ("gather_rows",)),
    "mask_numbers": (MaskNumbers, float_inputs, ("compare_s8", "where_s8", "concat_slice_s8", "lut_s8")),
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def model_and_export(request):
    cls, make_inputs, kernels = MODELS[request.param]
    example = tuple(torch.from_numpy(a) for a in make_inputs(0, 1))
    return make_inputs, kernels, torch.export.export(cls().eval(), example)


def used_kernels(program):
    return set(program.kernels)


def assert_board_equals_host(program, xs, board):
    on_host = program.run(xs)
    for got, want in zip(device.run_on_board(program, xs, board), on_host):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target, board", BOARDS)
def test_int8_masks_and_ids_bit_exact_on_board(model_and_export, target, board):
    make_inputs, kernels, ep = model_and_export
    calibration = [tuple(torch.from_numpy(a) for a in make_inputs(s, 1)) for s in range(1, 17)]
    program = mcuflow.compile(ep, target=target, calibration=calibration)
    assert on_tier(kernels, board) <= used_kernels(program) and not program.fallbacks()
    assert_board_equals_host(program, make_inputs(99, SAMPLES), board)


@pytest.mark.parametrize("board", ["qemu-m0", "qemu-m55"])
def test_fp32_masks_and_ids_on_board(model_and_export, board):
    make_inputs, _, ep = model_and_export
    program = mcuflow.compile(ep, target=get_board(board).core, precision="fp32")
    assert_board_equals_host(program, make_inputs(98, SAMPLES), board)


def test_id_outside_the_table_fails_on_the_board_as_on_the_host():
    ep = torch.export.export(Keywords().eval(), tuple(torch.from_numpy(a) for a in id_inputs(0, 1)))
    program = mcuflow.compile(ep, target="cortex-m4", calibration=[(torch.from_numpy(id_inputs(s, 1)[0]),) for s in range(8)])
    xs = id_inputs(5, 1)
    xs[0][0, 2] = 40
    with pytest.raises(McuflowError, match="outside its embedding table") as on_host:
        program.run(xs)
    with pytest.raises(McuflowError, match="outside its embedding table") as on_board:
        device.run_on_board(program, xs, "qemu-m4")
    assert str(on_board.value) == str(on_host.value)
