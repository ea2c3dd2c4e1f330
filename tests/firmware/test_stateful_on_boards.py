"""Stateful programs on emulated boards: the harness runs a sequence of inputs on one session,
so every invocation reads the states the one before it left. Host and board must agree bit for
bit on every output of the sequence (fp32 and int8, the in-place update and the copied one)."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from mcuflow import device  # noqa: E402
from fwutil import assert_outputs_equal, requires_cross  # noqa: E402
from test_stateful import FrameStack, SmoothingHead, compiled, frames  # noqa: E402

pytestmark = requires_cross

INVOCATIONS = 50


@pytest.mark.parametrize("target, board", [("cortex-m0", "qemu-m0"), ("cortex-m4", "qemu-m4"), ("cortex-m55", "qemu-m55")])
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_sequence_host_equals_board(target, board, precision):
    torch.manual_seed(0)
    for model in (FrameStack().eval(), SmoothingHead().eval()):
        program = compiled(model, precision, target=target)
        assert program.stateful
        xs = np.concatenate([x.numpy() for x in frames(model, 11, INVOCATIONS)])
        on_host = program.run(xs)
        program.reset_state()
        on_board = device.run_on_board(program, xs, board)
        assert len({o.tobytes() for o in on_host[0]}) == INVOCATIONS  # every invocation differs
        assert_outputs_equal(on_board, on_host)
