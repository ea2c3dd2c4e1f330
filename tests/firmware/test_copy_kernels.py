"""Cat slice and strided copy tier kernels (concat_slice_s8_*, strided_copy_b8_*) against the host,
bit for bit, on every tier: qemu-m0 (scalar), qemu-m4 (DSP), qemu-m55 (MVE).

One program per board of layers side by side, their shapes drawn at random from a fixed seed:
channel cats of inputs at three scales (slices that requantize by table and slices that copy),
odd channel counts (word and vector tails, rows that do not align), a cat along the rows of two
conv outputs (the planner lays them inside the cat, so the requantizing slice runs on its own
bytes), channel slices with and without a step, a chunk, pads with a fill value. Every cat and
copy must have been given the tier's kernel, and every output of random and extreme inputs must
equal the host's. A table that disagrees with its slice's params is refused at load.
"""

from __future__ import annotations

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
from fwutil import requires_cross  # noqa: E402
from program_bytes import constants_offset, with_crc  # noqa: E402
from test_elementwise_kernels import compile_cases  # noqa: E402  (layers side by side, int8 I/O)

pytestmark = requires_cross

BOARDS = {"qemu-m0": ("cortex-m0", "scalar"), "qemu-m4": ("cortex-m4", "dsp"), "qemu-m55": ("cortex-m55", "mve")}


class ChannelCat(nn.Module):
    """Three inputs at different scales concatenated along channels, then a ReLU-free copy out."""

    def forward(self, a, b, c):
        return torch.cat([a, b, c], dim=1)


class TwiceCat(nn.Module):
    """One input beside a slice of itself: both hold the output's quantization, so the slices copy."""

    def forward(self, a):
        return torch.cat([a, a[:, :1], a], dim=1)


class RowCat(nn.Module):
    """Two conv outputs of different ranges concatenated along the rows: the convs write into the cat."""

    def __init__(self, channels):
        super().__init__()
        self.top, self.bottom = nn.Conv2d(channels, channels, 1), nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        return torch.cat([self.top(x), self.bottom(x) * 4.0], dim=2)


class Slice(nn.Module):
    def __init__(self, how):
        super().__init__()
        self.how = how

    def forward(self, x):
        c = x.shape[1]
        if self.how == "channels":
            return x[:, 1:c - 1]
        if self.how == "step":
            return x[:, ::2]
        if self.how == "chunk":
            return x.chunk(2, dim=1)[1]
        if self.how == "pad_channels":
            return F.pad(x, (0, 0, 0, 0, 3, 2), value=0.25)
        return F.pad(x, (2, 1, 1, 0), value=0.5)  # rows and columns: whole rows of fill


def cases(seed):
    """(description, module, input shapes, input scales), shapes drawn from `seed`."""
    rng = np.random.RandomState(seed)
    torch.manual_seed(seed)
    hw = lambda: (int(rng.randint(1, 7)), int(rng.randint(1, 7)))  # noqa: E731
    out = []
    for _ in range(2):
        h, w = hw()
        chans = [int(rng.randint(1, 40)) for _ in range(3)]
        out.append((f"cat {chans} {h}x{w}", ChannelCat(), [(1, ch, h, w) for ch in chans], [1.0, 3.0, 0.2]))
    out.append(("cat 16 channels (aligned rows)", ChannelCat(), [(1, 16, 5, 3), (1, 32, 5, 3), (1, 16, 5, 3)],
                [2.0, 1.0, 0.5]))
    ch, (h, w) = int(rng.randint(1, 40)), hw()
    out.append((f"cat twice {ch} {h}x{w}", TwiceCat(), [(1, ch, h, w)], [1.0]))
    ch, (h, w) = int(rng.randint(2, 24)), hw()
    out.append((f"row cat {ch} {h}x{w}", RowCat(ch), [(1, ch, h, w)], [1.0]))
    for how in ("channels", "step", "chunk", "pad_channels", "pad_rows"):
        ch, (h, w) = 2 * int(rng.randint(2, 30)) + int(rng.randint(0, 2)), hw()
        out.append((f"{how} {ch} {h}x{w}", Slice(how), [(1, ch, h, w)], [1.0]))
    return out


def copy_ops(program):
    """(index, kernel, input count) of every cat slice and strided copy."""
    return [(i, op["kernel"], len(program._host.ops[i]["inputs"])) for i, op in enumerate(program.metadata["ops"])
            if op["kernel"].startswith(("concat_slice", "strided_copy"))]


@pytest.fixture(scope="module")
def programs():
    cache = {}

    def get(board):
        if board not in cache:
            cs = cases(seed=sum(map(ord, board)))
            cache[board] = (cs, compile_cases(cs, BOARDS[board][0]))
        return cache[board]

    return get


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_cats_and_slices_run_tier_kernels_and_match_host(programs, board):
    cs, program = programs(board)
    tier = BOARDS[board][1]
    ops = copy_ops(program)
    assert {k for _, k, _ in ops} == {f"concat_slice_s8_{tier}", f"strided_copy_b8_{tier}"}, ops
    cats = [n for _, k, n in ops if k.startswith("concat")]
    assert 1 in cats and 2 in cats, cats  # slices that copy and slices that requantize by table
    embedded = {e["op"] for e in program.describe()["plan"]["embedded"] if e["op"] >= 0}
    assert any(program.metadata["ops"][i]["kernel"] == f"concat_slice_s8_{tier}" for i in embedded), embedded
    rng = np.random.RandomState(5)
    shapes = [s for _, _, ss, _ in cs for s in ss]
    batch = ([[rng.randint(-128, 128, size=s).astype(np.int8) for s in shapes] for _ in range(3)]
             + [[np.full(s, v, dtype=np.int8) for s in shapes] for v in (-128, 127)])
    on_board, _ = device.run_elf_on_inputs(device.cached_build(program, board), program, batch, board)
    bad = []
    for k, (sample, board_outs) in enumerate(zip(batch, on_board)):
        for (desc, _, _, _), b, h in zip(cs, board_outs, program.run(sample)):
            assert b.shape == h.shape and b.dtype == h.dtype == np.int8
            if not np.array_equal(b, h):
                bad.append(f"{board} sample {k}, {desc}: {int((b != h).sum())} of {b.size} outputs differ")
    assert not bad, "\n".join(bad)


def test_a_table_that_disagrees_with_its_slice_is_refused():
    """One entry of a requantizing slice's table changed: the program is refused at load."""
    cs = [("cat", ChannelCat(), [(1, 5, 3, 3), (1, 7, 3, 3), (1, 3, 3, 3)], [1.0, 3.0, 0.2])]
    program = compile_cases(cs, "cortex-m55")
    op = next(i for i, k, n in copy_ops(program) if n == 2)
    record = program._host.tensors[program._host.ops[op]["inputs"][-1]]
    data = bytearray(program.data)
    at = constants_offset(data) + record["offset"] + 77
    data[at] = (data[at] + 1) % 256
    with pytest.raises(mcuflow.InputError, match="bad_params"):
        mcuflow.Program(with_crc(data))
