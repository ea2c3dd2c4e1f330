"""Recurrent layers streamed one step per invocation (tests/python/test_recurrent.py's
StreamingRNN programs) on emulated boards: the hidden states are kept on the device between
invocations. int8 programs (LUT gates): host and board bit for bit on every output of the
sequence; float32 programs within float rounding (the device's libm may round exp and tanh
differently in the last bit, and the recurrence carries such a bit on)."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from mcuflow import device  # noqa: E402
from fwutil import assert_outputs_equal, requires_cross  # noqa: E402
from test_recurrent import compiled, recurrent_layer, signal, steps_of  # noqa: E402
from mcuflow.streaming import StreamingRNN  # noqa: E402

pytestmark = requires_cross

STEPS = 30


@pytest.mark.parametrize("target, board, precision",
                         [("cortex-m0", "qemu-m0", "int8"), ("cortex-m55", "qemu-m55", "int8"),
                          ("cortex-m55", "qemu-m55", "fp32")])
def test_steps_host_equals_board(target, board, precision):
    for name in ("gru_stacked", "lstm_stacked"):
        model = StreamingRNN(recurrent_layer(name))
        xs = steps_of(signal(4, STEPS))
        program = compiled(model, (xs[0],), precision, [(x,) for x in xs], target=target)
        sequence = np.concatenate([x.numpy() for x in xs])
        on_host = program.run(sequence)
        program.reset_state()
        on_board = device.run_on_board(program, sequence, board)
        assert len({o.tobytes() for o in on_host[0]}) == STEPS  # every step's output differs
        if precision == "int8":
            assert_outputs_equal(on_board, on_host)
        else:
            np.testing.assert_allclose(on_board[0], on_host[0], rtol=1e-5, atol=1e-6)
