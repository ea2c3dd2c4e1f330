"""The host runtime refuses exactly the programs a board refuses: for an optimized (tier) kernel
it runs that kernel's own load-time check (with the reference kernel's arithmetic), so a
prepared input that disagrees with the reference inputs fails on the host with the error the
board's Program::load gives (tests/firmware/test_{scalar,dsp,mve}_kernels.py check the board)."""

from __future__ import annotations


import numpy as np
import pytest
import torch
import torch.nn as nn

import mcuflow
from program_bytes import constants_offset, with_crc

FIRST_TIER_INPUT = 5  # tier kernels take the reference's five inputs, then their own


TIERS = [("cortex-m0", "scalar"), ("cortex-m4", "dsp"), ("cortex-m55", "mve")]
# Constants in slow memory, a fast region with room: the planner copies the weights there.
WEIGHTS_TO_FAST_RAM = {"regions": [{"name": "TCM", "bytes": 1 << 20, "fast": True}], "weights_in_slow_memory": True}


def tier_program(target: str, memory=None) -> mcuflow.Program:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1, groups=16),
                          nn.Flatten(), nn.Linear(16 * 6 * 6, 10)).eval()
    example = (torch.randn(1, 8, 6, 6),)
    return mcuflow.compile(torch.export.export(model, example), target=target, io="int8",
                           calibration=[torch.randn(8, 8, 6, 6).numpy()], memory=memory)


def int8_input() -> np.ndarray:
    return np.random.default_rng(0).integers(-128, 128, size=(1, 8, 6, 6), dtype=np.int8)


def prepared_inputs(program: mcuflow.Program) -> list[tuple[str, dict]]:
    """(kernel, tensor) of every constant input a tier kernel takes beyond its reference's."""
    desc = program.describe()
    return [(op["kernel"], desc["tensors"][t]) for op in desc["ops"] for t in op["inputs"][FIRST_TIER_INPUT:]
            if desc["tensors"][t]["storage"] == "constant"]


def with_byte_flipped(program: mcuflow.Program, tensor: dict) -> bytes:
    data = bytearray(program.data)
    data[constants_offset(data) + tensor["offset"]] ^= 0x01
    data = with_crc(data)
    return bytes(data)


@pytest.mark.parametrize("target, tier", TIERS)
def test_host_rejects_altered_prepared_inputs_like_the_board(target, tier):
    program = tier_program(target)
    prepared = prepared_inputs(program)
    assert {kernel.rsplit("_", 1)[1] for kernel, _ in prepared} == {tier}, prepared
    assert mcuflow.Program(program.data).run(int8_input())[0].shape == (1, 10)  # untampered: loads and runs
    for kernel, tensor in prepared:
        with pytest.raises(mcuflow.InputError, match="bad_params"):
            mcuflow.Program(with_byte_flipped(program, tensor))


@pytest.mark.parametrize("target, tier", TIERS)
def test_tier_kernels_accept_weights_copied_into_fast_ram(target, tier):
    """Copies equal the constants the checks read, so the planner's weight copies load (on the
    host as on a board) and compute the same bytes."""
    copied = tier_program(target, memory=WEIGHTS_TO_FAST_RAM)
    kernels = {op["kernel"] for op in copied.describe()["ops"]}
    copied_tensors = {c["tensor"] for c in copied.describe()["plan"]["copied_weights"]}
    assert all(k.endswith(tier) for k in kernels if k.startswith(("conv", "dwconv", "fc"))), kernels
    assert len(copied_tensors) == 3, copied_tensors  # the two convs' and the linear layer's weights
    x = int8_input()
    assert np.array_equal(copied.run(x)[0], tier_program(target).run(x)[0])


@pytest.mark.parametrize("target, tier", TIERS[1:])
def test_int4_tier_kernels_take_nothing_prepared_and_compute_the_reference_result(target, tier):
    """weights="int4": the DSP and MVE int4 kernels build their int8 kernel's inputs in their arena
    scratch at each call (kernels_<tier>.h), so the constants are the packed weights and the
    reference's tables alone, and the host (which checks the tier kernels and runs their
    references) computes what the reference target's program does."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 1), nn.ReLU(),
                          nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.Flatten(), nn.Linear(16 * 6 * 6, 10)).eval()
    ep = torch.export.export(model, (torch.randn(1, 8, 6, 6),))
    calibration = [torch.randn(8, 8, 6, 6).numpy()]
    program, reference = (mcuflow.compile(ep, target=t, io="int8", calibration=calibration, weights="int4")
                          for t in (target, "reference"))
    assert sorted(program.kernels) == sorted(f"{k}_{tier}" for k in
                                             ("conv_s8_w4", "conv_s8_w4_1x1", "dwconv_s8_w4", "fc_s8_w4"))
    assert prepared_inputs(program) == []
    assert program.describe()["constant_bytes"] == reference.describe()["constant_bytes"]
    x = int8_input()
    np.testing.assert_array_equal(mcuflow.Program(program.data).run(x)[0], reference.run(x)[0])
