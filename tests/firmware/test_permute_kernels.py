"""permute_b8's tier kernels (permute_b8_scalar on qemu-m0, permute_b8_dsp on qemu-m4,
permute_b8_mve on qemu-m55) against the host, bit for bit, and the host against NumPy.

One int8-I/O program per core holds side by side: channel shuffles between max pools (NHWC
tensors, whose reshape-transpose-reshape fuse_permutes folds into one permute), random
permutations of random rank 2-6 shapes (rows contiguous, short rows gathered in pairs or
quads, long rows gathered with 8-, 16- and 32-bit MVE offsets), a transpose whose rows start
unaligned.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import SideBySide, requires_cross  # noqa: E402

pytestmark = requires_cross

BOARDS = {"qemu-m0": ("cortex-m0", "permute_b8_scalar"), "qemu-m4": ("cortex-m4", "permute_b8_dsp"),
          "qemu-m55": ("cortex-m55", "permute_b8_mve")}


class Permute(nn.Module):
    def __init__(self, perm):
        super().__init__()
        self.perm = perm

    def forward(self, x):
        return x.permute(self.perm)


class Shuffle(nn.Module):
    """ShuffleNet's channel shuffle between two image ops (2x2 max pools, stride 1)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        x = F.max_pool2d(x, 2, 1)
        n, c, h, w = x.shape
        x = x.view(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)
        return F.max_pool2d(x, 2, 1)


def max_pool_2x2(x):
    return np.maximum.reduce([x[:, :, i:i + x.shape[2] - 1, j:j + x.shape[3] - 1] for i in (0, 1) for j in (0, 1)])


def expected_shuffle(x, groups):
    y = max_pool_2x2(x)
    n, c, h, w = y.shape
    return max_pool_2x2(y.reshape(n, groups, c // groups, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w))


def cases(core):
    """(module, input shape, numpy expectation) triples; on Cortex-M55 (whose board has the RAM)
    also rows of 3 from 9,400 apart, past 16-bit offsets."""
    rng = np.random.RandomState(18)
    out = [(Shuffle(2), (1, 48, 5, 6), lambda x: expected_shuffle(x, 2)),
           (Shuffle(3), (1, 30, 4, 3), lambda x: expected_shuffle(x, 3)),
           (Permute((1, 0)), (3, 301), None),     # rows of 3 bytes from 301 apart: 16-bit MVE offsets
           (Permute((2, 0, 1)), (5, 1, 7), None),  # a dim of 1 dropped, rows of 5 from 7 apart
           (Permute((1, 0, 2)), (3, 5, 3), None)]  # contiguous rows of 3 starting unaligned
    while len(out) < 11:
        rank = rng.randint(2, 7)
        shape = tuple(int(d) for d in rng.randint(1, 7, size=rank))
        perm = tuple(int(p) for p in rng.permutation(rank))
        moved = [p for p in perm if shape[p] > 1]
        if moved != sorted(moved):  # not a view
            out.append((Permute(perm), shape, None))
    if core == "cortex-m55":
        out.append((Permute((1, 0)), (3, 9400), None))
    return [(m, s, e or (lambda x, perm=m.perm: x.transpose(perm))) for m, s, e in out]


CASES = {core: cases(core) for core, _ in BOARDS.values()}


@pytest.fixture(scope="module")
def programs():
    cache = {}

    def get(core):
        if core not in cache:
            model = SideBySide([m for m, _, _ in CASES[core]], [1] * len(CASES[core])).eval()
            example = tuple(torch.randn(s) for _, s, _ in CASES[core])
            calibration = [tuple(torch.randn(s) for _, s, _ in CASES[core]) for _ in range(3)]
            cache[core] = mcuflow.compile(torch.export.export(model, example), target=core,
                                          calibration=calibration, io="int8")
        return cache[core]

    return get


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_permutes_run_on_the_tier_kernel_and_match_host_and_numpy(programs, board):
    core, kernel = BOARDS[board]
    program, cases = programs(core), CASES[core]
    kernels = [op["kernel"] for op in program.metadata["ops"]]
    # Each shuffle: one permute (three before fuse_permutes).
    assert kernels.count(kernel) == len(cases) and "permute_b8" not in kernels, kernels
    rng = np.random.RandomState(sum(map(ord, board)))
    batch = [[rng.randint(-128, 128, size=s).astype(np.int8) for _, s, _ in cases] for _ in range(2)]
    on_board, _ = device.run_elf_on_inputs(device.cached_build(program, board), program, batch, board)
    for sample, board_outs in zip(batch, on_board):
        on_host = program.run(sample)
        for (module, _, expect), x, b, h in zip(cases, sample, board_outs, on_host):
            np.testing.assert_array_equal(h, expect(x), err_msg=f"host, {module}")
            np.testing.assert_array_equal(b, h, err_msg=f"{board}, {module}")
