"""Softmax kernels of every tier (softmax_s8_scalar, softmax_s8_dsp, softmax_s8_mve) against the
host reference, bit for bit.

One program per tier holds many softmax layers side by side (each its own model input and
output): depths from 1 to a few thousand (vector tails of every length), several rows, and input
scales from tiny (every difference counts, sums past 512 so every probability rounds to 0)
to huge (most differences fall below diff_min, the max element alone takes probability 1, which
saturates at 127). It runs on its tier's boards over random inputs and crafted rows (constant,
one element high, ramps), and every output must equal the host runtime's (which runs the
reference kernel). The exp table the kernels read is verified at load: a tampered one is refused
on the host and on the board. The MVE quantize and dequantize kernels at a float program's I/O
are checked the same way (rounding ties, signed zeros, denormal and huge inputs), running in
place. MCUFLOW_LARGE_SWEEP=1 adds randomly drawn layers and more samples.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import rejected_on_host_sent_to_board, requires_cross  # noqa: E402
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

LARGE_SWEEP = os.environ.get("MCUFLOW_LARGE_SWEEP") == "1"
RANDOM_SAMPLES = 12 if LARGE_SWEEP else 3

# target -> (kernel it must select, boards that run its program)
TIERS = {
    "cortex-m0": ("softmax_s8_scalar", ["qemu-m0", "qemu-m3"]),
    "cortex-m4": ("softmax_s8_dsp", ["qemu-m4", "qemu-m33"]),
    "cortex-m55": ("softmax_s8_mve", ["qemu-m55"]),
}


# Each layer: (input shape, calibration spread: the input scale is about spread * 4 / 128).
def layers(target: str) -> list[tuple[tuple[int, ...], float]]:
    small = [
        ((1, 12), 1.0),  # DS-CNN's classifier
        ((1, 1), 1.0),
        ((1, 2), 0.3),
        ((1, 3), 5.0),
        ((1, 5, 7), 1.0),
        ((1, 3, 16), 2.0),
        ((1, 4, 17), 0.5),
        ((1, 2, 33), 40.0),   # most differences below diff_min: exp 0, probability 0
        ((1, 6, 4), 100.0),
        ((1, 63), 0.05),
        ((1, 7, 5), 8.0),
        ((1, 600), 0.01),    # sum >= 512: out_shift > 31 for rows without a standout
    ]
    if target == "cortex-m0":  # 16 KiB of RAM on qemu-m0
        return small + [((1, 1500), 0.02)]
    return small + [((1, 2, 1000), 0.2), ((1, 4096), 0.001)]


class Softmaxes(nn.Module):
    def __init__(self, count: int):
        super().__init__()
        self.count = count

    def forward(self, *xs):
        return tuple(torch.softmax(x, dim=-1) for x in xs)


def compile_layers(specs, target: str, seed: int = 1):
    rng = np.random.default_rng(seed)
    calibration = [tuple((rng.standard_normal(shape) * spread).astype(np.float32) for shape, spread in specs)
                   for _ in range(4)]
    ep = torch.export.export(Softmaxes(len(specs)).eval(), tuple(torch.from_numpy(x) for x in calibration[0]))
    return mcuflow.compile(ep, target=target, calibration=calibration, io="int8")


def crafted_row(kind: str, depth: int, rng) -> np.ndarray:
    if kind == "constant":
        return np.full(depth, int(rng.integers(-128, 128)), dtype=np.int8)
    if kind == "one high":  # probability 1 for one element when the others underflow
        row = np.full(depth, -128, dtype=np.int8)
        row[int(rng.integers(depth))] = 127
        return row
    return ((np.arange(depth) * int(rng.integers(1, 7))) % 256 - 128).astype(np.int8)  # every difference


def samples(program, seed: int) -> list[list[np.ndarray]]:
    """Random int8 inputs, then crafted rows (one kind per sample, every row of every layer)."""
    rng = np.random.default_rng(seed)
    shapes = [spec["shape"] for spec in program.inputs]
    batch = [[rng.integers(-128, 128, size=s, dtype=np.int8) for s in shapes] for _ in range(RANDOM_SAMPLES)]
    for kind in ("constant", "one high", "ramp"):
        batch.append([np.stack([crafted_row(kind, s[-1], rng) for _ in range(int(np.prod(s[:-1])))]).reshape(s)
                      for s in shapes])
    return batch


def assert_board_matches_host(program, board: str, seed: int) -> None:
    batch = samples(program, seed)
    fw = device.cached_build(program, board)
    on_board, _ = device.run_elf_on_inputs(fw, program, batch, board)
    bad = []
    for k, (sample, outputs) in enumerate(zip(batch, on_board)):
        for j, (b, h) in enumerate(zip(outputs, program.run(sample))):
            assert b.dtype == h.dtype == np.int8 and b.shape == h.shape
            if not np.array_equal(b, h):
                bad.append(f"{board}: sample {k}, layer {j} {h.shape}: {int(np.sum(b != h))} of {b.size} differ")
    assert not bad, "\n".join(bad)


@pytest.fixture(scope="module")
def programs():
    cache = {}

    def get(target):
        if target not in cache:
            cache[target] = compile_layers(layers(target), target)
        return cache[target]

    return get


BOARD_CASES = [(target, board) for target, (_, boards) in TIERS.items() for board in boards]


@pytest.mark.parametrize("target", sorted(TIERS))
def test_every_softmax_gets_its_tier_kernel_and_exp_table(programs, target):
    program = programs(target)
    kernel = TIERS[target][0]
    ops = program.metadata["ops"]
    assert [op["kernel"] for op in ops] == [kernel] * len(layers(target))
    assert all("exp table" in op["reason"] for op in ops)
    # the table is the op's second input: 256 int32 entries
    tables = {program._host.tensors[op["inputs"][1]]["bytes"] for op in program._host.ops}
    assert tables == {1024}


@pytest.mark.parametrize("target, board", BOARD_CASES)
def test_softmax_kernels_match_host_bit_for_bit(programs, target, board):
    assert_board_matches_host(programs(target), board, seed=len(board))


@pytest.mark.parametrize("target", sorted(TIERS))
def test_device_refuses_an_exp_table_that_disagrees_with_the_params(target):
    """The table entry of difference -1 (entry 254) off by one: the board would compute other
    probabilities than the host, so both refuse the program at load."""
    program = compile_layers([((1, 12), 1.0)], target)
    record = program._host.tensors[program._host.ops[0]["inputs"][1]]
    data = bytearray(program.data)
    at = constants_offset(data) + record["offset"] + 254 * 4
    struct.pack_into("<i", data, at, struct.unpack_from("<i", data, at)[0] + 1)
    data = with_crc(data)
    tampered = rejected_on_host_sent_to_board(program, bytes(data))
    x = [np.zeros((1, 12), dtype=np.int8)]
    with pytest.raises(device.DeviceError, match="bad_params"):
        device.run_on_board(tampered, x, TIERS[target][1][0])


@pytest.mark.skipif(not LARGE_SWEEP, reason="set MCUFLOW_LARGE_SWEEP=1")
@pytest.mark.parametrize("target, board", BOARD_CASES)
def test_random_softmax_layers_match_host(target, board):
    rng = np.random.default_rng(len(board) + 17)
    limit = 400 if target == "cortex-m0" else 3000
    specs = [(tuple([1] + ([int(rng.integers(1, 5))] if rng.random() < 0.5 else []) + [int(rng.integers(1, limit))]),
              float(np.exp(rng.uniform(np.log(0.001), np.log(200))))) for _ in range(12)]
    program = compile_layers(specs, target, seed=int(rng.integers(1000)))
    assert {op["kernel"] for op in program.metadata["ops"]} == {TIERS[target][0]}
    assert_board_matches_host(program, board, seed=3)


# --- quantize / dequantize at the I/O on the MVE tier ---------------------------------------

def input_scales(program) -> dict:
    """The quantization scale of each input, by its shape (the layers' shapes differ)."""
    desc = program.describe()
    return {tuple(desc["tensors"][op["inputs"][0]]["shape"]): desc["tensors"][op["outputs"][0]]["scale"]
            for op in desc["ops"] if op["kind"] == "quantize_input"}


def io_samples(program, seed: int) -> list[list[np.ndarray]]:
    """Float inputs: random ones of the calibrated range and beyond, then values on and next to
    each input's rounding ties (k + 1/2) * scale, with signed zeros, denormals and huge values
    mixed in."""
    rng = np.random.default_rng(seed)
    scale_of = input_scales(program)
    shapes = [spec["shape"] for spec in program.inputs]
    batch = [[(rng.standard_normal(s) * 3).astype(np.float32) for s in shapes] for _ in range(RANDOM_SAMPLES)]
    specials = np.array([0.0, -0.0, 1e-45, -1e-42, 3e38, -3e38, 1e9, -1e9], dtype=np.float32)  # hosts refuse NaN, Inf
    ties = []
    for s in shapes:
        k = rng.integers(-140, 140, size=s).astype(np.float32)
        tie = ((k + np.float32(0.5)) * np.float32(scale_of[tuple(s)])).astype(np.float32)
        tie = np.where(rng.random(s) < 0.3, np.nextafter(tie, np.float32(rng.choice([-1, 1]) * np.inf)), tie)
        tie.flat[: min(tie.size, len(specials))] = specials[: tie.size]
        ties.append(tie.astype(np.float32))
    return batch + [ties]


def test_mve_quantize_and_dequantize_at_the_io_match_host_in_place():
    specs = [((1, 1), 1.0), ((1, 3), 2.0), ((1, 4), 0.5), ((1, 5), 1.0), ((1, 37), 3.0), ((1, 2, 5), 1.0),
             ((1, 490), 0.2)]
    rng = np.random.default_rng(2)
    calibration = [tuple((rng.standard_normal(shape) * spread).astype(np.float32) for shape, spread in specs)
                   for _ in range(4)]
    ep = torch.export.export(Softmaxes(len(specs)).eval(), tuple(torch.from_numpy(x) for x in calibration[0]))
    program = mcuflow.compile(ep, target="cortex-m55", calibration=calibration)  # float32 I/O
    ops = program.metadata["ops"]
    kernels = sorted(op["kernel"] for op in ops)
    assert kernels == sorted(["quantize_f32_s8_mve", "softmax_s8_mve", "dequantize_s8_f32_mve"] * len(specs))
    in_place = {ops[entry["op"]]["kernel"] for entry in program.describe()["plan"]["in_place"]}
    assert {"quantize_f32_s8_mve", "dequantize_s8_f32_mve"} <= in_place
    batch = io_samples(program, seed=4)
    fw = device.cached_build(program, "qemu-m55")
    on_board, _ = device.run_elf_on_inputs(fw, program, batch, "qemu-m55")
    for k, (sample, outputs) in enumerate(zip(batch, on_board)):
        for j, (b, h) in enumerate(zip(outputs, program.run(sample))):
            assert b.dtype == h.dtype == np.float32 and b.shape == h.shape
            assert np.array_equal(b.view(np.uint32), h.view(np.uint32)), f"sample {k}, layer {j}"



@pytest.mark.parametrize("core, board, quantize, dequantize",
                         [("cortex-m4", "qemu-m4", "quantize_f32_s8_dsp", "dequantize_s8_f32_dsp"),
                          ("cortex-m0", "qemu-m0", "quantize_f32_s8", "dequantize_s8_f32_scalar")])
def test_dsp_and_scalar_quantize_and_dequantize_at_the_io_match_host_in_place(core, board, quantize, dequantize):
    """quantize_f32_s8_dsp (FPU: VDIV, the tie decided by the exact fraction) and the dequantize
    table lookups, in place, on ties, signed zeros, denormals, huge values and the +-512 steps
    where quantize_f32_s8_dsp switches from rounding to clamping; the FPU-less Cortex-M0 keeps the
    reference quantization (its soft-float division)."""
    specs = [((1, 1), 1.0), ((1, 7), 2.0), ((1, 37), 3.0), ((1, 2, 5), 0.5)]
    rng = np.random.default_rng(3)
    calibration = [tuple((rng.standard_normal(shape) * spread).astype(np.float32) for shape, spread in specs)
                   for _ in range(4)]
    ep = torch.export.export(Softmaxes(len(specs)).eval(), tuple(torch.from_numpy(x) for x in calibration[0]))
    program = mcuflow.compile(ep, target=core, calibration=calibration)  # float32 I/O
    ops = program.metadata["ops"]
    assert sorted(op["kernel"] for op in ops if "quantize" in op["kernel"]) == sorted([quantize, dequantize] * len(specs))
    in_place = {ops[entry["op"]]["kernel"] for entry in program.describe()["plan"]["in_place"]}
    assert dequantize in in_place
    batch = io_samples(program, seed=5)
    scale_of = input_scales(program)
    steps = np.array([511.5, 512.0, 512.5, 513.0, 254.5, 127.5, -0.5, 0.5], dtype=np.float32)
    edges = np.concatenate([steps, -steps])
    batch.append([np.resize(edges * np.float32(scale_of[tuple(spec["shape"])]), spec["shape"]).astype(np.float32)
                  for spec in program.inputs])
    on_board, _ = device.run_elf_on_inputs(device.cached_build(program, board), program, batch, board)
    for k, (sample, outputs) in enumerate(zip(batch, on_board)):
        for j, (b, h) in enumerate(zip(outputs, program.run(sample))):
            assert b.dtype == h.dtype == np.float32 and b.shape == h.shape
            assert np.array_equal(b.view(np.uint32), h.view(np.uint32)), f"{board} sample {k}, layer {j}"
