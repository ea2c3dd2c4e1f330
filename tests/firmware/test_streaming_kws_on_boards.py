"""The streaming keyword-spotting zoo model (ds_tcn_stream) on emulated boards: a long stream of
log-mel frames, one per invocation on one session; host and board bit for bit on every frame's
scores, so the detections agree too. bench/streaming_kws.py reports the same runs with counts."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device, zoo  # noqa: E402
from fwutil import assert_outputs_equal, requires_cross  # noqa: E402

pytestmark = requires_cross

FRAMES = 120  # over twice the 46-frame receptive field: the rings wrap several times


@pytest.mark.parametrize("target, board", [("cortex-m0", "qemu-m0"), ("cortex-m55", "qemu-m55")])
@pytest.mark.parametrize("io", ["int8", "float32"])
def test_stream_host_equals_board(target, board, io):
    m = zoo.get("ds_tcn_stream", seed=0)
    program = mcuflow.compile(m.export(), target=target, calibration=m.calibration(200), io=io)
    assert program.stateful and "ring_dwconv_s8" in program.kernels
    frames = m.evaluation(FRAMES)
    if io == "int8":
        spec = program.inputs[0]
        frames = np.clip(np.round(frames / spec["scale"]) + spec["zero_point"], -128, 127).astype(np.int8)
    on_host = program.run(frames)
    program.reset_state()
    on_board = device.run_on_board(program, frames, board)
    assert len(np.unique(on_host[0].argmax(1))) > 1  # the stream's detections change
    assert_outputs_equal(on_board, on_host)


def test_bench_times_the_stream_and_its_reset_apart():
    from mcuflow.bench import run_bench

    m = zoo.get("ds_tcn_stream", seed=0)
    program = mcuflow.compile(m.export(), target="cortex-m55", calibration=m.calibration(200), io="int8")
    state_bytes = sum(t["bytes"] for t in program._host.tensors if t["storage"] == "state")
    r = run_bench(program, "qemu-m55", warmup=1, runs=3)
    reset = r["regions"]["reset_state"]
    assert "10 states (5252 bytes)" in reset["contains"]
    assert "states carry from run to run" in r["regions"]["inference"]["contains"]
    # copying 5,252 bytes of initial values takes at least one instruction per word
    assert state_bytes // 4 < reset["observations"][0] < r["regions"]["inference"]["median"]
