"""Scalar-tier element-wise kernels (Armv6-M Thumb-1: add, mul, clamp, requantize, table-lookup
activations) against the host, bit for bit.

The layer families of test_elementwise_kernels (every broadcast of the second operand, fused
ReLU/ReLU6, input scales over several decades, outputs narrow enough that the requantization
shifts left, odd element counts and word tails) compiled for cortex-m0: one program per family,
built and run once on qemu-m0 (Cortex-M0) and once on qemu-m3. Every layer must have been given
the family's scalar kernel and every output of random and extreme inputs must equal the host's.
The prepared tables are verified on the device, and every kernel runs in place.

MCUFLOW_LARGE_SWEEP=1 adds randomly drawn shapes, scales and broadcasts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcuflow import device  # noqa: E402
from fwutil import rejected_on_host_sent_to_board, requires_cross  # noqa: E402
from test_elementwise_kernels import (LARGE_SWEEP, InPlace,  # noqa: E402
                                      assert_board_matches_host, binary_family, case_kernel, clamp_family,
                                      compile_cases, element_kernels, output_shift, random_family,
                                      lut_family, requantize_family, samples)
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

BOARDS = ["qemu-m0", "qemu-m3"]
CORE = "cortex-m0"


def families():
    """kernels -> cases: clamp and requantize share a program."""
    torch.manual_seed(0)
    return {
        ("add_s8_scalar",): binary_family(torch.add),
        ("mul_s8_scalar",): binary_family(torch.mul),
        ("clamp_s8_scalar", "requantize_s8_scalar"): clamp_family() + requantize_family(),
        ("lut_s8_scalar",): lut_family(),
    }


FAMILIES = families()


@pytest.fixture(scope="module")
def programs():
    cache = {}

    def get(kernels):
        if kernels not in cache:
            cache[kernels] = compile_cases(FAMILIES[kernels], CORE)
        return cache[kernels]

    return get


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("kernels", sorted(FAMILIES), ids="+".join)
def test_family_selects_scalar_kernel_and_matches_host(programs, kernels, board):
    cases = FAMILIES[kernels]
    program = programs(kernels)
    assert element_kernels(program) == sorted(case_kernel(kernels, desc) for desc, _, _, _ in cases)
    assert_board_matches_host(program, cases, board, seed=sum(map(ord, kernels[0])))


def test_binary_families_requantize_with_left_and_right_shifts(programs):
    """scalar_requantize's two shift paths both run: a rounding right shift (add's output shift
    is always negative, since its inputs carry 2^left_shift) and, in mul's narrow-output layers,
    a left shift before the product."""
    for kernels in (("add_s8_scalar",), ("mul_s8_scalar",)):
        shifts = {output_shift(programs(kernels), i) for i in range(len(FAMILIES[kernels]))}
        assert min(shifts) < 0, (kernels, shifts)
    assert max(output_shift(programs(("mul_s8_scalar",)), i) for i in range(len(FAMILIES[("mul_s8_scalar",)]))) >= 0


@pytest.mark.skipif(not LARGE_SWEEP, reason="set MCUFLOW_LARGE_SWEEP=1")
@pytest.mark.parametrize("kernels", sorted(FAMILIES), ids="+".join)
def test_random_shapes_match_host(kernels):
    cases = [case for kernel in kernels for case in random_family(kernel, seed=len(kernel) + 100, count=30)]
    program = compile_cases(cases, CORE)
    assert element_kernels(program) == sorted(case_kernel(kernels, desc) for desc, _, _, _ in cases)
    assert_board_matches_host(program, cases, "qemu-m3", seed=11)


@pytest.mark.parametrize("kernels, byte", [(("add_s8_scalar",), 4 * 300 + 1),
                                           (("clamp_s8_scalar", "requantize_s8_scalar"), 200)])
def test_device_rejects_a_table_that_disagrees_with_the_params(kernels, byte):
    """One byte of add's input 2 table or of the requantize table changed: the host refuses the
    program at load, and so does qemu-m0."""
    kernel = kernels[-1]
    case = next(c for c in FAMILIES[kernels] if case_kernel(kernels, c[0]) == kernel)
    program = compile_cases([case], CORE)
    (op,) = [i for i, o in enumerate(program.metadata["ops"]) if o["kernel"] == kernel]
    record = program._host.tensors[program._host.ops[op]["inputs"][-1]]
    data = bytearray(program.data)
    at = constants_offset(data) + record["offset"] + byte
    data[at] = (data[at] + 1) % 256
    data = with_crc(data)
    tampered = rejected_on_host_sent_to_board(program, bytes(data))
    with pytest.raises(device.DeviceError, match="bad_params"):
        device.run_on_board(tampered, samples([case], 0, 1)[0], "qemu-m0")


def test_kernels_run_in_place_and_match_host():
    """add (per-channel constant), mul, clamp and requantize each write their output exactly
    over their dying input (qemu-m0's 16 KiB need that) and still equal the host."""
    torch.manual_seed(2)
    shape = (1, 20, 7, 9)
    case = ("in place", InPlace(), [shape] * 4, [1.0] * 4)
    program = compile_cases([case], CORE)
    d = program.describe()
    in_place = {d["ops"][step["op"]]["kernel"]: step["shift"] for step in d["plan"]["in_place"]}
    kernels = {"add_s8_scalar", "mul_s8_scalar", "clamp_s8_scalar", "requantize_s8_scalar"}
    assert kernels <= set(in_place), in_place
    assert all(in_place[k] == 0 for k in kernels), in_place  # exactly over the input
    assert_board_matches_host(program, [case], "qemu-m0", seed=3)
