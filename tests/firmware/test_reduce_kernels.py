"""Sum / mean kernels of every tier (reduce_s8_scalar on qemu-m0, reduce_s8_dsp on qemu-m4,
reduce_s8_mve on qemu-m55) on their boards, bit for bit against the reference reduce_s8 the host
runs.

For each tier one program of many differently shaped sums and means side by side, int8 in and
out: [outer][reduce][inner] with outer 1 and more, inner 1 (contiguous rows, from unaligned
starts) and inner not a multiple of 32, 16, 8 or 4 (the kernels' passes and tails), reduce from
2 up to a few thousand (several 16-bit lane blocks of 256), each case calibrated on data of its
own scale and offset (random input offsets and requantization multipliers), one whose values
cancel so that its multiplier shifts left. Every sum and mean must have been given its tier
kernel (a maximum stays on reduce_s8, saying why), and every output of random and extreme inputs
must equal the host's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import SideBySide, requires_cross  # noqa: E402

pytestmark = requires_cross

# board -> (core, tier suffix)
BOARDS = {"qemu-m0": ("cortex-m0", "scalar"), "qemu-m4": ("cortex-m4", "dsp"), "qemu-m55": ("cortex-m55", "mve")}
SAMPLES = 4


class Reduce(nn.Module):
    def __init__(self, kind, dim, keepdim=False):
        super().__init__()
        self.kind, self.dim, self.keepdim = kind, dim, keepdim

    def forward(self, x):
        return getattr(x, self.kind)(dim=self.dim, keepdim=self.keepdim)


def reduce(kind, shape, dim, keepdim=False, cancel=False):
    """(description, module, input shape, cancel): cancel calibrates the reduced values to sum to
    about zero, so the output's spec is far narrower than the input's."""
    desc = f"{kind} {shape} dim={dim}{' keepdim' if keepdim else ''}{' cancelling' if cancel else ''}"
    return desc, Reduce(kind, dim, keepdim), shape, cancel


def cases(board):
    """The reductions of a board's program; qemu-m0 has 16 KiB of RAM: its inputs are kept small."""
    small = board == "qemu-m0"
    return [
        reduce("mean", (1, 120 if small else 700, 64 if not small else 16), 1),  # whole passes; 700: three lane blocks
        reduce("mean", (1, 40 if small else 300, 37), 1),       # 32 + 5, 16 + 16 + 4 + 1, unaligned words
        reduce("sum", (1, 20, 13), 1),
        reduce("mean", (1, 2000 if small else 4000), 1),        # inner 1: one contiguous row
        reduce("sum", (1, 7, 37), 2),                           # inner 1, rows from unaligned starts
        reduce("mean", (1, 8, 5, 6), 3),                        # NHWC: outer 5, reduce 6, inner 8
        reduce("sum", (1, 3, 4, 5), 1),                         # channels: outer 20, reduce 3, inner 1
        reduce("mean", (1, 12, 6, 7), 2, keepdim=True),         # outer 1, reduce 6, inner 84
        reduce("mean", (1, 2, 33), 1, cancel=True),             # a left-shifting multiplier
        reduce("mean", (1, 9, 3), 1),
        reduce("amax", (1, 10, 8), 1),                          # stays on the reference
    ]


def calibration_data(pools, rng):
    out = []
    for _, module, shape, cancel in pools:
        scale, offset = rng.uniform(0.05, 4.0), rng.uniform(-2.0, 2.0)
        x = (rng.standard_normal(shape) + offset) * scale
        if cancel:  # the two reduced values opposite, up to a small noise
            x[:, 1:2] = -x[:, 0:1] + rng.standard_normal(x[:, 0:1].shape) * 1e-3
        out.append(x.astype(np.float32))
    return tuple(out)


def compile_cases(reductions, core):
    model = SideBySide([m for _, m, _, _ in reductions], [1] * len(reductions)).eval()
    rng = np.random.RandomState(5)
    calibration = [calibration_data(reductions, rng) for _ in range(4)]
    ep = torch.export.export(model, tuple(torch.from_numpy(x) for x in calibration[0]))
    return mcuflow.compile(ep, target=core, calibration=calibration, io="int8")


def reduce_ops(program):
    return [op for op in program.metadata["ops"] if op["kernel"].startswith("reduce_s8")]


@pytest.fixture(scope="module")
def programs():
    cache = {}

    def get(board):
        if board not in cache:
            torch.manual_seed(0)
            cache[board] = compile_cases(cases(board), BOARDS[board][0])
        return cache[board]

    return get


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_every_sum_and_mean_gets_its_tier_kernel(programs, board):
    ops = reduce_ops(programs(board))
    kinds = [desc.split()[0] for desc, _, _, _ in cases(board)]
    assert len(ops) == len(kinds)
    tier = BOARDS[board][1]
    assert sorted(op["kernel"] for op in ops) == sorted("reduce_s8" if k == "amax" else f"reduce_s8_{tier}" for k in kinds)
    (kept,) = [op for op in ops if op["kernel"] == "reduce_s8"]
    assert "needs a sum or a mean" in kept["reason"]


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_reductions_match_host(programs, board):
    program = programs(board)
    reductions = cases(board)
    rng = np.random.RandomState(11)
    shapes = [shape for _, _, shape, _ in reductions]
    samples = [[rng.randint(-128, 128, size=s).astype(np.int8) for s in shapes] for _ in range(SAMPLES)]
    samples += [[np.full(s, v, np.int8) for s in shapes] for v in (-128, 127)]  # the sums' extremes
    fw = device.cached_build(program, board)
    on_board, _ = device.run_elf_on_inputs(fw, program, samples, board, timeout=300)
    bad = []
    for k, (sample, board_outs) in enumerate(zip(samples, on_board)):
        for (desc, _, _, _), b, h in zip(reductions, board_outs, program.run(sample)):
            assert b.shape == h.shape and b.dtype == h.dtype == np.int8
            if not np.array_equal(b, h):
                bad.append(f"sample {k}, {desc}: {int((b != h).sum())} of {b.size} outputs differ")
    assert not bad, "\n".join(bad)
