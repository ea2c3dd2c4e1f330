"""A mixed-precision program (precision and weights "mixed": int16, int8 and int4-weight layers side
by side, requantized where widths meet) on emulated boards, host and board bit for bit."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from mcuflow.mixed import accuracy  # noqa: E402
from fwutil import assert_outputs_equal, requires_cross  # noqa: E402
from test_int16_on_boards import Mixed  # noqa: E402

pytestmark = requires_cross


@pytest.mark.parametrize("target, board", [("cortex-m4", "qemu-m4"), ("cortex-m55", "qemu-m55")])
def test_mixed_program_host_equals_board(target, board):
    torch.manual_seed(0)
    model = Mixed().eval()
    rng = np.random.default_rng(0)
    ep = torch.export.export(model, (torch.zeros(1, 3, 8, 8),))
    calibration = rng.standard_normal((16, 3, 8, 8)).astype(np.float32) * 1.5
    int8 = mcuflow.compile(ep, target=target, calibration=calibration)
    float_program = mcuflow.compile(ep, target=target, precision="fp32")
    int8_snr = accuracy(int8.run(calibration), float_program.run(calibration)).snr_db
    # Well above int8's SNR: some layers are promoted to int16; others keep int8 or int4 weights.
    program = mcuflow.compile(ep, target=target, calibration=calibration, precision="mixed", weights="mixed",
                              min_snr_db=int8_snr + 3.5)
    choices = {op["precision"].split(":")[0] for op in program.metadata["ops"] if op.get("precision")}
    assert "A16W8" in choices and len(choices) > 1, choices
    batch = rng.standard_normal((3, 3, 8, 8)).astype(np.float32)
    assert_outputs_equal(device.run_on_board(program, batch, board), program.run(batch))
