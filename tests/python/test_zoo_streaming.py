"""The streaming keyword-spotting zoo model (ds_tcn_stream, mcuflow.zoo.streaming): one log-mel
frame per call, its context kept as ring states. Frame by frame it equals the same module
compiled for the whole window, bit for bit, in fp32 and int8, and PyTorch within tolerance."""

import copy
import functools

import numpy as np
import pytest
import torch

import mcuflow
from mcuflow import zoo

FRAMES = 64  # longer than the 46-frame receptive field: every kept frame is used and dropped


@functools.lru_cache(maxsize=None)
def model():
    return zoo.get("ds_tcn_stream", seed=0)


def as_window(frames: np.ndarray) -> np.ndarray:
    """(T, 40, 1) consecutive frames -> the (1, 40, T) window the module also takes."""
    return np.concatenate(list(frames), axis=-1)[None]


def compile_both(precision, frames):
    """The streamed program (one frame per run) and the whole-window one, calibrated on the same
    values (a minmax range over the frames is the range over the window; a histogram would also
    count the frames the state keeps)."""
    m = model()
    int8 = precision == "int8"
    streamed = mcuflow.compile(m.export(), target="cortex-m55", precision=precision, observer="minmax",
                               calibration=frames if int8 else None)
    window = as_window(frames)
    ep = torch.export.export(copy.deepcopy(m.module), (torch.from_numpy(window),))
    whole = mcuflow.compile(ep, target="cortex-m55", precision=precision, observer="minmax",
                            calibration=[(window,)] if int8 else None)
    return streamed, whole


def test_registered_with_its_counts_and_a_zero_initial_state():
    m = model()
    assert "ds_tcn_stream" in zoo.names() and m.spec.streaming and m.spec.input_shape == (1, 40, 1)
    # depthwise 40·3 + 3·64·3, pointwise 40·64 + 2·64·64 + 64·32, folded BN biases 3·64 + 32,
    # the 16-tap average 32·16, classifier 32·12 + 12; MACs per frame: the same without biases
    assert m.counts() == (696 + 12_800 + 224 + 512 + 396, 696 + 12_800 + 512 + 384)
    for name, buffer in m.module.named_buffers():
        if name.endswith("history"):
            assert not buffer.any(), f"{name}: counting or building left state behind"
    # the average is fixed: every tap 1/16
    assert torch.equal(m.module.average.weight, torch.full_like(m.module.average.weight, 1 / 16))


def test_eager_frame_by_frame_equals_the_window():
    m = model()
    frames = m.evaluation(FRAMES)
    module = copy.deepcopy(m.module)
    with torch.no_grad():
        streamed = torch.cat([module(torch.from_numpy(f[None])) for f in frames], dim=-1)
        whole = copy.deepcopy(m.module)(torch.from_numpy(as_window(frames)))
    torch.testing.assert_close(streamed, whole, rtol=1e-5, atol=1e-5)
    assert len(torch.unique(whole.argmax(1))) > 1, "the stream's detections are all one class"


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_program_frame_by_frame_equals_whole_window(precision):
    m = model()
    frames = m.evaluation(FRAMES)
    streamed, whole = compile_both(precision, frames)
    assert streamed.stateful and {"ring_dwconv_s8" if precision == "int8" else "ring_dwconv_f32"} <= set(streamed.kernels)
    # the window is read from the rings in place: no cat and no copy of kept frames
    assert not any(k.startswith(("strided_copy", "concat")) for k in streamed.kernels)
    got = streamed.run(frames)[0]  # a batch runs as a sequence on one session
    assert got.shape == (FRAMES, 12, 1)
    window_out = whole.run(as_window(frames))[0]
    assert as_window(got).tobytes() == window_out.tobytes()
    with torch.no_grad():
        expected = copy.deepcopy(m.module)(torch.from_numpy(as_window(frames))).numpy()
    error = np.abs(window_out - expected).max()
    assert error < (0.05 * np.abs(expected).max() if precision == "int8" else 1e-5), error
    if precision == "int8":
        agreement = (window_out.argmax(1) == expected.argmax(1)).mean()
        assert agreement >= 0.9, agreement
    streamed.reset_state()
    assert streamed.run(frames[:1])[0].tobytes() == got[:1].tobytes()


def test_state_and_arena_within_the_liveness_bound():
    m = model()
    program = mcuflow.compile(m.export(), target="cortex-m0", calibration=m.calibration(100), io="int8")
    plan = program.describe()["plan"]
    states = [t for t in program.describe()["tensors"] if t["storage"] == "state"]
    # five rings (each frame stored twice: 2 · (kept + 1) frames) and their int32 heads
    assert sorted(t["bytes"] for t in states) == [4] * 5 + sorted(2 * (k + 1) * c for k, c in
                                                                 ((2, 40), (4, 64), (8, 64), (16, 64), (15, 32)))
    # the bound counts the states (live from before the first op to after the last)
    assert program.arena_lower_bound >= sum(t["bytes"] for t in states)
    assert plan["arena"] <= 1.1 * program.arena_lower_bound, (plan["arena"], program.arena_lower_bound)


def test_a_checkpoint_saved_mid_stream_loads_with_its_state_reset(tmp_path):
    m = model()
    module = copy.deepcopy(m.module)
    with torch.no_grad():
        module(torch.from_numpy(as_window(m.evaluation(8))))  # eager frames fill the kept context
    assert module.blocks[0][0].history.any()
    path = tmp_path / "ds_tcn_stream.pt"
    torch.save(module.state_dict(), path)
    loaded = zoo.get("ds_tcn_stream", checkpoint=path).module
    for name, buffer in loaded.named_buffers():
        if name.endswith("history"):
            assert not buffer.any(), name
    assert torch.equal(loaded.blocks[1][1].weight, m.module.blocks[1][1].weight)
