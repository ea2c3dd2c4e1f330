"""Pooling kernels of every tier on their boards, bit for bit against the reference kernels the host runs.

For each tier (scalar on qemu-m0, DSP on qemu-m4, MVE on qemu-m55) one program of many
differently shaped average and max pools side by side (odd channel counts and tails of every
pass width, paddings, strides, odd and one-sided windows, partial windows of ceil_mode,
windows over 256 pixels (the kernels' 16-bit lane blocks), whole-row windows, fused ReLU and
ReLU6; ceil_mode only for max pools: the frontend refuses it for average pools), int8 in and out, compiled for the board's core: one firmware build and one QEMU run
per tier. Every pool must have been given its tier kernel, and every output of every random
input must equal the host's. A second program per tier runs pools in place (their output over
their dying input), which the plan must show, and matches the host too. The scalar average's prepared reciprocals are
verified on the device: a tampered one is refused.

MCUFLOW_LARGE_SWEEP=1 adds a program of randomly drawn pools per tier and more samples.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import SideBySide, rejected_on_host_sent_to_board, requires_cross  # noqa: E402
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

# board -> (core, tier suffix)
BOARDS = {"qemu-m0": ("cortex-m0", "scalar"), "qemu-m4": ("cortex-m4", "dsp"), "qemu-m55": ("cortex-m55", "mve")}
LARGE_SWEEP = os.environ.get("MCUFLOW_LARGE_SWEEP") == "1"
SAMPLES = 16 if LARGE_SWEEP else 4


def pool(kind, c, hw, k, stride=None, pad=0, ceil=False, act=None):
    """(description, module, input shape): an average (count_include_pad=False) or max pool."""
    layer = (nn.AvgPool2d(k, stride=stride, padding=pad, ceil_mode=ceil, count_include_pad=False) if kind == "avg"
             else nn.MaxPool2d(k, stride=stride, padding=pad, ceil_mode=ceil))
    desc = f"{kind}pool {c} {hw} k={k} s={stride} p={pad}{' ceil' if ceil else ''}{' ' + act.__name__ if act else ''}"
    return desc, nn.Sequential(layer, act()) if act else layer, (1, c) + tuple(hw)


def cases(board):
    """The pools of a board's program. qemu-m0 has 16 KiB of RAM: its inputs are kept small."""
    small = board == "qemu-m0"
    return [
        pool("avg", 16 if small else 64, (25, 5), (25, 5)),  # DS-CNN's global pool: rows merge into one run
        pool("avg", 16, (6, 6), 2, act=nn.ReLU), pool("avg", 5, (7, 6), 3, stride=2, pad=1),
        pool("avg", 17, (5, 5), 3, stride=1, pad=1, act=nn.ReLU6), pool("avg", 3, (17, 17), 17),  # 289 pixels
        pool("avg", 33, (6, 4), (2, 3), stride=(2, 1)), pool("avg", 1, (3, 3), 3),
        pool("avg", 4, (2, 150), (2, 150)), pool("avg", 40, (4, 4), 3, pad=1), pool("avg", 12, (5, 5), 2, stride=3),
        pool("avg", 8 if small else 72, (3, 3), (1, 3), pad=(0, 1)),
        pool("max", 32, (6, 6), 2), pool("max", 3, (7, 7), 3, stride=2, pad=1, act=nn.ReLU),
        pool("max", 17, (5, 6), (2, 3), stride=(1, 2)), pool("max", 8 if small else 69, (3, 3), 2, stride=1),
        pool("max", 8, (9, 9), 3, stride=3, pad=1, act=nn.ReLU6), pool("max", 1, (4, 4), 4),
        pool("max", 20, (5, 5), 2, ceil=True), pool("max", 4, (17, 17), 17), pool("max", 36, (3, 4), (3, 1)),
    ]


def random_cases(seed, count):
    """Randomly drawn pools (large sweep)."""
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(count):
        k = (int(rng.randint(1, 6)), int(rng.randint(1, 6)))
        pad = (int(rng.randint(0, k[0] // 2 + 1)), int(rng.randint(0, k[1] // 2 + 1)))
        hw = (int(rng.randint(k[0], 10)), int(rng.randint(k[1], 10)))
        stride = (int(rng.randint(1, 4)), int(rng.randint(1, 4)))
        kind = str(rng.choice(["avg", "max"]))
        out.append(pool(kind, int(rng.randint(1, 40)), hw, k, stride=stride, pad=pad,
                        ceil=kind == "max" and bool(rng.randint(0, 2))))
    return out


def compile_cases(pools, core):
    model = SideBySide([m for _, m, _ in pools], [1] * len(pools)).eval()
    rng = np.random.RandomState(1)
    # Each channel around an offset of its own, 6 to 12 away from zero either way: a whole-image
    # average then spans more than half its input's range and keeps its input's spec (a 2x narrower
    # one would get a spec of its own and reduce_s8, docs/quantization.md "Averages").
    offsets = [rng.choice([-1, 1], size=(1, shape[1], 1, 1)) * rng.uniform(6, 12, size=(1, shape[1], 1, 1))
               for _, _, shape in pools]
    calibration = [tuple((rng.standard_normal(shape) + o).astype(np.float32) for (_, _, shape), o in zip(pools, offsets))
                   for _ in range(4)]
    ep = torch.export.export(model, tuple(torch.from_numpy(x) for x in calibration[0]))
    return mcuflow.compile(ep, target=core, calibration=calibration, io="int8")


def pool_kernels(program):
    """The kernels of the program's pooling ops (a ReLU that is not fused stays a clamp op)."""
    return sorted(op["kernel"] for op in program.metadata["ops"] if "pool" in op["kernel"])


def expected_kernels(pools, tier):
    return sorted(f"{desc[:3]}pool_s8_{tier}" for desc, _, _ in pools)


def assert_board_matches_host(program, pools, board, seed):
    rng = np.random.RandomState(seed)
    samples = [[rng.randint(-128, 128, size=shape).astype(np.int8) for _, _, shape in pools] for _ in range(SAMPLES)]
    fw = device.cached_build(program, board)
    on_board, _ = device.run_elf_on_inputs(fw, program, samples, board, timeout=300)
    bad = []
    for k, (sample, board_outs) in enumerate(zip(samples, on_board)):
        for (desc, _, _), b, h in zip(pools, board_outs, program.run(sample)):
            assert b.shape == h.shape and b.dtype == h.dtype == np.int8
            if not np.array_equal(b, h):
                bad.append(f"sample {k}, {desc}: {int((b != h).sum())} of {b.size} outputs differ")
    assert not bad, "\n".join(bad)


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
def test_every_pool_gets_its_tier_kernel_and_matches_host(programs, board):
    program = programs(board)
    pools = cases(board)
    assert pool_kernels(program) == expected_kernels(pools, BOARDS[board][1])
    assert_board_matches_host(program, pools, board, seed=7)


def in_place_cases():
    """Same-size pools (stride 1, padded) on inputs of the same size: every step holds the same
    bytes, so each op is a peak the planner lowers by writing its output over its dying input."""
    return [pool("avg", 20, (9, 9), 3, stride=1, pad=1), pool("max", 20, (9, 9), 3, stride=1, pad=1, act=nn.ReLU),
            pool("avg", 20, (9, 9), (1, 5), stride=1, pad=(0, 2))]


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_pools_run_in_place_and_match_host(board):
    torch.manual_seed(1)
    pools = in_place_cases()
    program = compile_cases(pools, BOARDS[board][0])
    d = program.describe()
    in_place = {d["ops"][step["op"]]["kernel"] for step in d["plan"]["in_place"]}
    tier = BOARDS[board][1]
    assert {f"avgpool_s8_{tier}", f"maxpool_s8_{tier}"} <= in_place, in_place
    assert_board_matches_host(program, pools, board, seed=3)


@pytest.mark.skipif(not LARGE_SWEEP, reason="set MCUFLOW_LARGE_SWEEP=1")
@pytest.mark.parametrize("board", sorted(BOARDS))
@pytest.mark.parametrize("seed", range(3))
def test_random_pools_match_host(board, seed):
    torch.manual_seed(seed)
    pools = random_cases(seed, 12 if board == "qemu-m0" else 30)
    program = compile_cases(pools, BOARDS[board][0])
    assert pool_kernels(program) == expected_kernels(pools, BOARDS[board][1])
    assert_board_matches_host(program, pools, board, seed)


def test_scalar_average_keeps_the_reference_kernel_beyond_exact_reciprocals():
    (op,) = compile_cases([pool("avg", 2, (20, 20), 20)], "cortex-m0").metadata["ops"]
    assert op["kernel"] == "avgpool_s8"
    assert "needs a window of at most 361 elements" in op["reason"]


@pytest.mark.parametrize("entry", [0, 8])
def test_device_rejects_a_tampered_reciprocal(entry):
    """avgpool_s8_scalar divides with the compiler's reciprocals: one that disagrees with its
    recomputation would make the board compute something else than the host, so the device
    verifier refuses the program, and so does the host's."""
    pools = [pool("avg", 4, (6, 6), 3, stride=3)]
    program = compile_cases(pools, "cortex-m0")
    (op,) = program._host.ops
    record = program._host.tensors[op["inputs"][1]]
    data = bytearray(program.data)
    at = constants_offset(data) + record["offset"] + 4 * entry
    data[at] ^= 1
    data = with_crc(data)
    tampered = rejected_on_host_sent_to_board(program, bytes(data))
    x = np.zeros((1, 4, 6, 6), np.int8)
    with pytest.raises(device.DeviceError, match="bad_params"):
        device.run_on_board(tampered, x, "qemu-m0")
