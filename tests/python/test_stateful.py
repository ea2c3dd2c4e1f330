"""Stateful models the PyTorch way: buffers a module updates in forward become states the
program keeps between runs (bound with the buffers' values at export, updated by every run,
reset by reset_state). A sequence of runs must equal PyTorch eager over the same sequence."""

import copy

import numpy as np
import pytest
import torch

import mcuflow
from mcuflow.errors import UnsupportedModelError

FRAMES = 60


class Smoothing(torch.nn.Module):
    """Exponential smoothing of a linear layer's output; returns the smoothed value itself (the
    update is a program output: copied into the state at the end of the run)."""

    frame_shape = (1, 6)

    def __init__(self, features=8):
        super().__init__()
        self.fc = torch.nn.Linear(6, features)
        self.register_buffer("average", torch.linspace(-0.5, 0.5, features).reshape(1, features))

    def forward(self, x):
        smoothed = self.average * 0.75 + self.fc(x) * 0.25
        self.average.copy_(smoothed)
        return smoothed


class SmoothingHead(Smoothing):
    """The smoothed value feeds a head: the op computing it writes the state in place."""

    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 3)

    def forward(self, x):
        smoothed = self.average * 0.75 + self.fc(x) * 0.25
        self.average.copy_(smoothed)
        return self.head(torch.relu(smoothed))


class FrameStack(torch.nn.Module):
    """The last four frames as state: cat(buffer[:, 1:], x) becomes the buffer."""

    frame_shape = (1, 1, 6)

    def __init__(self, frames=4, features=6):
        super().__init__()
        self.register_buffer("window", torch.randn(1, frames, features, generator=torch.Generator().manual_seed(3)) * 0.1)
        self.fc = torch.nn.Linear(frames * features, 5)

    def forward(self, x):
        window = torch.cat([self.window[:, 1:], x], dim=1)
        self.window.copy_(window)
        return self.fc(window.flatten(1))


class UpdatedTwice(torch.nn.Module):
    """The buffer updated, read, and updated again in one forward: functionalized, the first
    update is a value later ops read and the second the state's update."""

    frame_shape = (1, 6)

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 8)
        self.register_buffer("average", torch.linspace(-0.5, 0.5, 8).reshape(1, 8))

    def forward(self, x):
        self.average.copy_(self.average * 0.5 + self.fc(x) * 0.5)
        y = torch.relu(self.average) * 2
        self.average.mul_(0.9)
        return y


class SliceAssignments(torch.nn.Module):
    """A frame window kept by assignments into slices of the buffer: shifted, the new frame
    written into its last row, its first column cleared (slice_scatter, select_scatter, fill)."""

    frame_shape = (1, 1, 6)

    def __init__(self, frames=4, features=6):
        super().__init__()
        self.register_buffer("window", torch.randn(1, frames, features, generator=torch.Generator().manual_seed(4)))
        self.fc = torch.nn.Linear(frames * features, 5)

    def forward(self, x):
        self.window[:, :-1] = self.window[:, 1:].clone()
        self.window[:, -1] = x[:, 0]
        self.window[:, :, 0] = 0.0
        return self.fc(self.window.flatten(1))


class PaddedHistoryConv1d(torch.nn.Module):
    """A Conv1d over its kept frames and the new ones, padded over time: not the streaming
    pattern (stream_convs leaves it), so the window is built and its tail copied back each run."""

    def __init__(self, c_in, c_out, k=3):
        super().__init__()
        self.conv = torch.nn.Conv1d(c_in, c_out, k, padding=1)
        self.register_buffer("history", torch.randn(1, c_in, k - 1, generator=torch.Generator().manual_seed(c_in)))

    def forward(self, x):
        window = torch.cat([self.history, x], dim=2)
        self.history.copy_(window[:, :, window.shape[2] - self.history.shape[2]:])
        return self.conv(window)


class StackedHistoryConvs(torch.nn.Module):
    """Two of them stacked: each state reaches its conv through a row view (lift_rows)."""

    frame_shape = (1, 4, 2)

    def __init__(self):
        super().__init__()
        self.first, self.second = PaddedHistoryConv1d(4, 8), PaddedHistoryConv1d(8, 5)

    def forward(self, x):
        return self.second(torch.relu(self.first(x)))


class DelayLine(torch.nn.Module):
    """Three states, each run copied one into the next (c <- b <- a <- 2x): every copy reads the
    old value of a state the same run updates, so the copies must run c, b, a, and a's update
    (the mul) must not write a in place. Registered c first: the order that needs reordering."""

    frame_shape = (1, 4)

    def __init__(self):
        super().__init__()
        for name in ("c", "b", "a"):
            self.register_buffer(name, torch.zeros(1, 4))

    def forward(self, x):
        self.c.copy_(self.b)
        self.b.copy_(self.a)
        self.a.copy_(x * 2)
        return self.c + x


def frames(model, seed, count=FRAMES):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*model.frame_shape, generator=g) for _ in range(count)]


def eager(model, xs):
    m = copy.deepcopy(model)  # its buffers change as it runs
    with torch.no_grad():
        return [m(x).numpy() for x in xs]


def compiled(model, precision, target="cortex-m55", **options):
    torch.manual_seed(0)
    ep = torch.export.export(copy.deepcopy(model).eval(), (frames(model, 1, 1)[0],))
    calibration = [(x,) for x in frames(model, 2, 200)] if precision != "fp32" else None
    return mcuflow.compile(ep, target=target, precision=precision, calibration=calibration, **options)


MODELS = {"smoothing": Smoothing, "smoothing_head": SmoothingHead, "frame_stack": FrameStack,
          "stacked_history_convs": StackedHistoryConvs, "updated_twice": UpdatedTwice,
          "slice_assignments": SliceAssignments, "delay_line": DelayLine}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("precision", ["fp32", "int8", "int16"])  # int16: states and their writers stay int8
def test_sequence_equals_eager(name, precision):
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    program = compiled(model, precision)
    assert program.stateful
    xs = frames(model, 5)
    expected = eager(model, xs)
    got = [program.run(x.numpy())[0] for x in xs]
    error = np.abs(np.concatenate(got) - np.concatenate(expected))
    spread = float(np.abs(np.concatenate(expected)).max())
    if precision == "fp32":
        assert error.max() < 1e-5, error.max()
    else:  # inputs beyond the calibration range saturate for a few frames: the mean tells
        assert error.mean() < 0.01 * spread, (error.mean(), spread)
    # The state matters: a program that forgot it would give the same output for equal inputs.
    repeated = [program.run(xs[0].numpy())[0] for _ in range(3)]
    assert repeated[0].tobytes() != repeated[2].tobytes()
    program.reset_state()
    assert program.run(xs[0].numpy())[0].tobytes() == got[0].tobytes()


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_batch_is_a_sequence(precision):
    model = FrameStack().eval()
    program = compiled(model, precision)
    xs = frames(model, 6, 12)
    one_by_one = np.concatenate([program.run(x.numpy())[0] for x in xs])
    program.reset_state()
    batch = np.concatenate([x.numpy() for x in xs])
    assert program.run(batch, threads=4)[0].tobytes() == one_by_one.tobytes()


def test_update_written_in_place_or_copied():
    head = compiled(SmoothingHead().eval(), "int8")
    assert "strided_copy_b8" not in head.kernels  # the add writes the state itself
    returned = compiled(Smoothing().eval(), "fp32")
    assert returned.kernels[-1] == "strided_copy_b32"  # the update is the program output too: copied at the end
    dequantized = compiled(Smoothing().eval(), "int8")  # the output is the update's dequantized copy
    assert "strided_copy_b8" not in dequantized.kernels
    for program in (head, returned, dequantized):
        assert [t["storage"] for t in program._host.tensors].count("state") == 1


def test_state_bytes_never_reused():
    """The state's bytes are shared with no other arena tensor (it lives for the whole run)."""
    program = compiled(FrameStack().eval(), "fp32")
    records = program._host.tensors
    meta = program.metadata["tensors"]
    (state,) = [i for i, r in enumerate(records) if r["storage"] == "state"]
    s0, s1 = records[state]["copy_offset"], records[state]["copy_offset"] + records[state]["bytes"]
    for i, r in enumerate(records):
        if r["storage"] == "arena" and meta[i]["alias_of"] != state and i != state:
            assert r["offset"] + r["bytes"] <= s0 or r["offset"] >= s1, meta[i]["name"]


class IntBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1, dtype=torch.int64))

    def forward(self, x):
        self.count.add_(1)
        return x * 2


def test_non_float_state_is_one_clear_line():
    ep = torch.export.export(IntBuffer(), (torch.randn(1, 4),))
    with pytest.raises(UnsupportedModelError, match="buffer count of dtype torch.int64"):
        mcuflow.compile(ep, precision="fp32")


class StridedAssignment(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.zeros(1, 6))

    def forward(self, x):
        self.window[:, ::2] = x
        return self.window * 2


def test_strided_slice_assignment_is_one_clear_line():
    ep = torch.export.export(StridedAssignment(), (torch.randn(1, 3),))
    with pytest.raises(UnsupportedModelError, match=r"^unsupported arguments for aten.slice_scatter.default at "
                                                    r"\S+test_stateful.py:\d+: self.window\[:, ::2\] = x — "
                                                    r"a strided assignment \(slice step 2\)$"):
        mcuflow.compile(ep, precision="fp32")


class Swap(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.zeros(1, 4))
        self.register_buffer("b", torch.ones(1, 4))

    def forward(self, x):
        a, b = self.a.clone(), self.b.clone()
        self.a.copy_(b)
        self.b.copy_(a)
        return x + self.a


def test_states_swapped_in_a_cycle_are_one_clear_line():
    ep = torch.export.export(Swap(), (torch.randn(1, 4),))
    with pytest.raises(UnsupportedModelError, match=r"^state a: its update is the old value of state b, and the "
                                                    r"states' updates read each other's old values in a cycle"):
        mcuflow.compile(ep, precision="fp32")


class Reassigned(torch.nn.Module):
    """``self.window = t``: eager PyTorch replaces the buffer whatever t's shape and dtype."""

    def __init__(self, update):
        super().__init__()
        self.register_buffer("window", torch.zeros(1, 4))
        self.update = update

    def forward(self, x):
        y = x + self.window.sum()
        self.window = self.update(x)
        return y


@pytest.mark.parametrize("update, x, dynamic, reason", [
    (lambda x: x * 2, torch.randn(1, 8), None,
     r"the update has shape \[1, 8\], the buffer \[1, 4\]; a state keeps its buffer's shape between runs"),
    (lambda x: (x * 2).to(torch.float16), torch.randn(1, 4), None,
     r"the update is torch.float16, the buffer torch.float32; a state keeps its buffer's dtype between runs"),
    (lambda x: x * 2, torch.randn(3, 4), {"x": {0: torch.export.Dim("batch", min=2, max=8)}},
     r"the update has dynamic shape \[s\d+, 4\]; a state keeps the buffer's static shape \[1, 4\]"),
], ids=["shape", "dtype", "dynamic"])
def test_buffer_assigned_another_shape_or_dtype_is_one_clear_line(update, x, dynamic, reason):
    ep = torch.export.export(Reassigned(update), (x,), dynamic_shapes=dynamic)
    with pytest.raises(UnsupportedModelError, match=r"^buffer window at \S+test_stateful.py:\d+: "
                                                    r"self.window = self.update\(x\): " + reason + "$"):
        mcuflow.compile(ep, precision="fp32")


def test_cli_run_on_a_sequence(tmp_path):
    from mcuflow import cli

    model = FrameStack().eval()
    program = compiled(model, "int8")
    program.save(tmp_path / "stack.mfp")
    xs = np.concatenate([x.numpy() for x in frames(model, 8, 20)])
    np.save(tmp_path / "x.npy", xs)
    args = ["run", tmp_path / "stack.mfp", "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npz"]
    assert cli.main([str(a) for a in args]) == 0
    expected = np.concatenate([program.run(x[None])[0] for x in xs])  # frame by frame from the initial state
    np.testing.assert_array_equal(np.load(tmp_path / "y.npz")["output_0"], expected)


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_a_view_of_a_state_is_no_second_state(precision):
    """The row view a Conv1d reads its state through shares the state's bytes: one state record
    per buffer, however many views of it the program has."""
    program = compiled(StackedHistoryConvs().eval(), precision)
    assert [t["storage"] for t in program._host.tensors].count("state") == 2
