"""Element-wise DSP and MVE kernels (add, mul, clamp, requantize, table-lookup activations)
against the host, bit for bit.

Each family is one program of many differently shaped single layers side by side (odd element
counts and word/vector tails, every broadcast of the second operand: same shape, a per-channel
constant, a scalar, a broadcast second input; fused ReLU/ReLU6; input scales over several
decades, and outputs narrow enough that the requantization shifts left), int8 in and out,
compiled for cortex-m4 (DSP kernels, run on qemu-m4) or cortex-m55 (MVE kernels, run on
qemu-m55): one firmware build and one QEMU run per family. Every layer must have been given the
family's kernel, and every output of random and extreme inputs must equal the host's. Tables
the compiler prepared are verified on the device, and every kernel runs in place.

MCUFLOW_LARGE_SWEEP=1 adds randomly drawn shapes, scales and broadcasts.
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
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import SideBySide, rejected_on_host_sent_to_board, requires_cross  # noqa: E402
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

LARGE_SWEEP = os.environ.get("MCUFLOW_LARGE_SWEEP") == "1"
SAMPLES = 16 if LARGE_SWEEP else 4
CORE = {"qemu-m4": "cortex-m4", "qemu-m55": "cortex-m55"}


# --- layers ---------------------------------------------------------------------------------
# A case: (description, module, input shapes, input scales). Each input's calibration data is
# standard normal times its scale, so the scales set the inputs' quantization.

ACTIVATIONS = {None: lambda y: y, "relu": torch.relu, "relu6": lambda y: torch.clamp(y, 0.0, 6.0),
               "tiny": lambda y: torch.clamp(y, 0.0, 1e-4)}  # tiny: an output so narrow the shift goes left


class Binary(nn.Module):
    """x (op) y, y a second input, a per-channel constant or a scalar, then an activation."""

    def __init__(self, op, channels, other, activation):
        super().__init__()
        self.op, self.activation = op, ACTIVATIONS[activation]
        self.y = torch.randn(1, channels, 1, 1) * 2 if other == "channel" else (0.75 if other == "scalar" else None)
        if other == "channel":
            self.register_buffer("constant", self.y)

    def forward(self, x, y=None):
        other = self.constant if y is None and isinstance(self.y, torch.Tensor) else (self.y if y is None else y)
        return self.activation(self.op(x, other))


def binary(op, shape, other="input", activation=None, other_shape=None, scales=(1.0, 1.0)):
    shapes = [shape] + ([other_shape or shape] if other == "input" else [])
    desc = f"{op.__name__} {shape} {other} {other_shape or ''} {activation or ''} scales {scales}"
    return desc, Binary(op, shape[1], other, activation), shapes, list(scales[:len(shapes)])


class Clamp(nn.Module):
    def __init__(self, lo, hi):
        super().__init__()
        self.lo, self.hi = lo, hi

    def forward(self, x):
        return torch.clamp(x, self.lo, self.hi)


def clamp(shape, lo=0.0, hi=None, scale=1.0):
    return f"clamp {shape} [{lo}, {hi}] scale {scale}", Clamp(lo, hi), [shape], [scale]


class PadValue(nn.Module):
    """A pad whose value lies outside the input's range: the input is requantized first."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x):
        return F.pad(x, (1, 0), value=self.value)


def requantize(shape, value, scale=1.0):
    return f"requantize {shape} pad value {value} scale {scale}", PadValue(value), [shape], [scale]


LUT_ACTIVATIONS = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid,
                   "silu": F.silu, "gelu": F.gelu, "mish": F.mish}


class Activation(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.function = LUT_ACTIVATIONS[name]

    def forward(self, x):
        return self.function(x)


def lut(shape, name, scale=1.0):
    return f"lut {name} {shape} scale {scale}", Activation(name), [shape], [scale]


def lut_family():
    """Every table-lookup activation on two shapes, then vector and word tails; input scales over two decades."""
    scales = [1.0, 3.0, 0.1, 8.0, 0.5]
    pairs = [(name, shape) for name in LUT_ACTIVATIONS for shape in [(1, 16, 8, 8), (1, 3, 5, 7)]]
    tails = [(1, 1, 1, 1), (1, 1, 1, 3), (1, 33, 3, 5), (1, 7, 9), (1, 2, 17)]
    return ([lut(shape, name, scales[i % 4]) for i, (name, shape) in enumerate(pairs)]
            + [lut(shape, "tanh", scale) for shape, scale in zip(tails, scales)])


def binary_family(op, relu6=True):
    return [
        binary(op, (1, 16, 8, 8)), binary(op, (1, 3, 5, 7)), binary(op, (1, 1, 1, 1)), binary(op, (1, 1, 1, 3)),
        binary(op, (1, 32, 4, 4), activation="relu"), binary(op, (1, 7, 9)),
        binary(op, (1, 17, 3, 5), other="channel"), binary(op, (1, 64, 2, 3), other="channel", activation="relu"),
        binary(op, (1, 3, 3, 3), other="channel"), binary(op, (1, 5, 4, 4), other="scalar"),
        binary(op, (1, 1, 5, 3), other="scalar", activation="relu"),
        binary(op, (1, 13, 6, 6), other_shape=(1, 13, 1, 1)), binary(op, (1, 6, 2, 5), other_shape=(1, 1, 1, 1)),
        binary(op, (1, 9, 5, 5), activation="relu6" if relu6 else None),
        binary(op, (1, 8, 3, 3), scales=(100.0, 0.01)), binary(op, (1, 11, 2, 2), scales=(1e-3, 3.0)),
        binary(op, (1, 10, 3, 3), other="channel", scales=(50.0,)),
        binary(op, (1, 12, 4, 3), activation="tiny"),
    ]


def clamp_family():
    return [clamp((1, 16, 8, 8)), clamp((1, 3, 5, 7), -0.5, 0.5), clamp((1, 1, 1, 1)), clamp((1, 1, 1, 3), -1.0, 2.0),
            clamp((1, 5, 4, 4), 0.0, 6.0, scale=4.0), clamp((1, 7, 9), None, 0.25), clamp((1, 33, 3, 5), -2.0, -1.0),
            clamp((1, 20, 2, 2), 0.0, 1e-3, scale=1e-3), clamp((1, 2, 17), 0.0, 100.0, scale=20.0)]


def requantize_family():
    return [requantize((1, 16, 8, 8), 6.0), requantize((1, 3, 5, 7), -9.0), requantize((1, 1, 1, 1), 3.0),
            requantize((1, 1, 2, 3), 100.0), requantize((1, 5, 4, 4), 0.01, scale=1e-3),
            requantize((1, 7, 9), -500.0, scale=10.0), requantize((1, 33, 3, 5), 12.5)]


def families():
    """kernels -> (board, cases): clamp and requantize share a program."""
    torch.manual_seed(0)
    return {
        ("add_s8_dsp",): ("qemu-m4", binary_family(torch.add)),
        ("mul_s8_dsp",): ("qemu-m4", binary_family(torch.mul)),
        ("clamp_s8_dsp", "requantize_s8_dsp"): ("qemu-m4", clamp_family() + requantize_family()),
        ("mul_s8_mve",): ("qemu-m55", binary_family(torch.mul)),
        ("clamp_s8_mve", "requantize_s8_mve"): ("qemu-m55", clamp_family() + requantize_family()),
        ("lut_s8_dsp",): ("qemu-m4", lut_family()),
        ("lut_s8_mve",): ("qemu-m55", lut_family()),
    }


def case_kernel(kernels, desc):
    """The kernel of the family `kernels` that a case should get (by the op its description names)."""
    (kernel,) = [k for k in kernels if k.split("_")[0] == desc.split()[0]]
    return kernel


def random_family(kernel, seed, count):
    """Randomly drawn shapes, broadcasts, activations and scales for `kernel`'s op (large sweep)."""
    rng = np.random.RandomState(seed)
    torch.manual_seed(seed)
    cases = []
    for _ in range(count):
        shape = (1, int(rng.randint(1, 40)), int(rng.randint(1, 9)), int(rng.randint(1, 9)))
        scale = float(10.0 ** rng.uniform(-3, 2))
        if kernel.startswith("clamp"):
            lo = float(rng.uniform(-2, 1)) * scale
            cases.append(clamp(shape, lo, lo + float(rng.uniform(0.01, 3)) * scale, scale=scale))
        elif kernel.startswith("lut"):
            cases.append(lut(shape, str(rng.choice(sorted(LUT_ACTIVATIONS))), scale=scale))
        elif kernel.startswith("requantize"):
            cases.append(requantize(shape, float(rng.choice([-1, 1]) * 10.0 ** rng.uniform(-2, 3)), scale=scale))
        else:
            other = str(rng.choice(["input", "channel", "scalar", "broadcast"]))
            op = torch.add if kernel.startswith("add") else torch.mul
            cases.append(binary(op, shape, "input" if other == "broadcast" else other,
                                activation=rng.choice([None, "relu", "relu6", "tiny"]),
                                other_shape=(1, shape[1], 1, 1) if other == "broadcast" else None,
                                scales=(scale, float(10.0 ** rng.uniform(-3, 2)))))
    return cases


def input_shapes(cases):
    return [shape for _, _, shapes, _ in cases for shape in shapes]


def compile_cases(cases, core):
    model = SideBySide([m for _, m, _, _ in cases], [len(shapes) for _, _, shapes, _ in cases]).eval()
    rng = np.random.RandomState(1)
    scaled = [(shape, scale) for _, _, shapes, scales in cases for shape, scale in zip(shapes, scales)]
    calibration = [tuple((rng.standard_normal(shape) * scale).astype(np.float32) for shape, scale in scaled)
                   for _ in range(4)]
    ep = torch.export.export(model, tuple(torch.from_numpy(x) for x in calibration[0]))
    return mcuflow.compile(ep, target=core, calibration=calibration, io="int8")


def element_kernels(program):
    """The kernel of every op but the layout copies a requantizing pad also runs."""
    return sorted(op["kernel"] for op in program.metadata["ops"] if not op["kernel"].startswith("strided_copy_b8"))


def samples(cases, seed, n):
    """Random int8 inputs, then the extremes (all -128, all 127)."""
    rng = np.random.RandomState(seed)
    shapes = input_shapes(cases)
    return ([[rng.randint(-128, 128, size=s).astype(np.int8) for s in shapes] for _ in range(n)]
            + [[np.full(s, v, dtype=np.int8) for s in shapes] for v in (-128, 127)])


def assert_board_matches_host(program, cases, board, seed):
    batch = samples(cases, seed, SAMPLES)
    on_board, _ = device.run_elf_on_inputs(device.cached_build(program, board), program, batch, board)
    bad = []
    for k, (sample, board_outs) in enumerate(zip(batch, on_board)):
        for (desc, _, _, _), b, h in zip(cases, board_outs, program.run(sample)):
            assert b.shape == h.shape and b.dtype == h.dtype == np.int8
            if not np.array_equal(b, h):
                bad.append(f"{board} sample {k}, {desc}: {int((b != h).sum())} of {b.size} outputs differ")
    assert not bad, "\n".join(bad)


FAMILIES = families()


@pytest.fixture(scope="module")
def programs():
    cache = {}

    def get(kernel):
        if kernel not in cache:
            board, cases = FAMILIES[kernel]
            cache[kernel] = compile_cases(cases, CORE[board])
        return cache[kernel]

    return get


@pytest.mark.parametrize("kernels", sorted(FAMILIES), ids="+".join)
def test_family_selects_kernel_and_matches_host(programs, kernels):
    board, cases = FAMILIES[kernels]
    program = programs(kernels)
    assert element_kernels(program) == sorted(case_kernel(kernels, desc) for desc, _, _, _ in cases)
    assert_board_matches_host(program, cases, board, seed=sum(map(ord, kernels[0])))


def test_requantization_shifts_left_and_right_in_the_binary_families(programs):
    """The families reach both output stages of the DSP kernels: a right shift folded with the
    offset, and none (shift >= 0, a left shift)."""
    for kernels in (("mul_s8_dsp",), ("add_s8_dsp",)):
        shifts = {output_shift(programs(kernels), i) for i in range(len(FAMILIES[kernels][1]))}
        assert min(shifts) < 0, (kernels, shifts)
    assert max(output_shift(programs(("mul_s8_dsp",)), i) for i in range(len(FAMILIES[("mul_s8_dsp",)][1]))) >= 0


def output_shift(program, op_index):
    """BinaryParams.output_shift (int32 12) of the op. docs/program_format.md: header u32
    ops_offset at 32 and params_offset at 40; 28-byte OpRecords, their params offset at byte 20."""
    ops_offset, params_offset = struct.unpack_from("<II", program.data, 32)[0], struct.unpack_from("<I", program.data, 40)[0]
    op_params = struct.unpack_from("<I", program.data, ops_offset + 28 * op_index + 20)[0]
    return struct.unpack_from("<i", program.data, params_offset + op_params + 4 * 12)[0]


@pytest.mark.skipif(not LARGE_SWEEP, reason="set MCUFLOW_LARGE_SWEEP=1")
@pytest.mark.parametrize("kernels", sorted(FAMILIES), ids="+".join)
def test_random_shapes_match_host(kernels):
    board = FAMILIES[kernels][0]
    cases = [case for kernel in kernels for case in random_family(kernel, seed=len(kernel), count=30)]
    program = compile_cases(cases, CORE[board])
    assert element_kernels(program) == sorted(case_kernel(kernels, desc) for desc, _, _, _ in cases)
    assert_board_matches_host(program, cases, board, seed=7)


# --- the device verifies the prepared tables ------------------------------------------------

@pytest.mark.parametrize("kernels, byte", [(("add_s8_dsp",), 4 * 300 + 1),
                                           (("clamp_s8_mve", "requantize_s8_mve"), 200)])
def test_device_rejects_a_table_that_disagrees_with_the_params(kernels, byte):
    """One byte of the op's table changed (an entry of add's input 2 table; a requantize entry):
    the host refuses the program at load, and so does the board."""
    board, cases = FAMILIES[kernels]
    kernel = kernels[-1]
    case = next(c for c in cases if case_kernel(kernels, c[0]) == kernel)
    program = compile_cases([case], CORE[board])
    (op,) = [i for i, o in enumerate(program.metadata["ops"]) if o["kernel"] == kernel]
    record = program._host.tensors[program._host.ops[op]["inputs"][-1]]
    data = bytearray(program.data)
    at = constants_offset(data) + record["offset"] + byte
    data[at] = (data[at] + 1) % 256
    data = with_crc(data)
    tampered = rejected_on_host_sent_to_board(program, bytes(data))
    with pytest.raises(device.DeviceError, match="bad_params"):
        device.run_on_board(tampered, samples([case], 0, 1)[0], board)


# --- in place -------------------------------------------------------------------------------

class InPlace(nn.Module):
    """Four element-wise layers, each on its own input of the same size: every step holds the
    same bytes plus the current op's output, so each op is a peak the planner lowers by writing
    its output over its dying input."""

    def __init__(self):
        super().__init__()
        self.register_buffer("added", torch.randn(1, 20, 1, 1))
        self.register_buffer("multiplied", torch.randn(1, 20, 1, 1))

    def forward(self, a, b, c, d):
        return a + self.added, b * self.multiplied, torch.relu(c), F.pad(d, (1, 0), value=9.0)


@pytest.mark.parametrize("board, kernels", [
    ("qemu-m4", {"add_s8_dsp", "mul_s8_dsp", "clamp_s8_dsp", "requantize_s8_dsp"}),
    ("qemu-m55", {"add_s8_mve", "mul_s8_mve", "clamp_s8_mve", "requantize_s8_mve"}),
])
def test_kernels_run_in_place_and_match_host(board, kernels):
    torch.manual_seed(2)
    shape = (1, 20, 13, 13)
    case = ("in place", InPlace(), [shape] * 4, [1.0] * 4)
    program = compile_cases([case], CORE[board])
    d = program.describe()
    in_place = {d["ops"][step["op"]]["kernel"]: step["shift"] for step in d["plan"]["in_place"]}
    assert kernels <= set(in_place), in_place
    assert all(in_place[k] == 0 for k in kernels), in_place  # exactly over the input
    batch = samples([case], 3, SAMPLES)
    on_board, _ = device.run_elf_on_inputs(device.cached_build(program, board), program, batch, board)
    for sample, board_outs in zip(batch, on_board):
        for b, h in zip(board_outs, program.run(sample)):
            np.testing.assert_array_equal(b, h)
