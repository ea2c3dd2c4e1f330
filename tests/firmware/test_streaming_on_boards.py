"""Streaming convolutions (ring states, tests/python/test_streaming.py's models) on emulated boards:
a sequence of single frames on one session, host and board bit for bit on every output."""

import copy
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import assert_outputs_equal, requires_cross  # noqa: E402
from test_streaming import WINDOW, Stack1d, Time2d, frames_of, one  # noqa: E402

pytestmark = requires_cross


@pytest.mark.parametrize("target, board", [("cortex-m0", "qemu-m0"), ("cortex-m55", "qemu-m55")])
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_frames_host_equals_board(target, board, precision):
    torch.manual_seed(0)
    for model in (Stack1d().eval(), Time2d().eval()):
        xs = frames_of(model, 1)
        frames = [one(xs, i) for i in range(WINDOW)]
        ep = torch.export.export(copy.deepcopy(model), (frames[0],))
        program = mcuflow.compile(ep, target=target, precision=precision,
                                  calibration=[(f,) for f in frames] if precision == "int8" else None)
        assert any(k.startswith("ring_") for k in program.kernels)
        sequence = np.concatenate([f.numpy() for f in frames])
        on_host = program.run(sequence)
        program.reset_state()
        on_board = device.run_on_board(program, sequence, board)
        assert len({o.tobytes() for o in on_host[0]}) == WINDOW  # every frame's output differs
        assert_outputs_equal(on_board, on_host)
