"""Streaming convolution (mcuflow.streaming): a causal conv whose history is a ring state. The
program run frame by frame equals the same model compiled for the whole window, bit for bit,
and PyTorch within float / int8 tolerance; the window is read from the ring, not copied."""

import copy

import numpy as np
import pytest
import torch

import mcuflow
from mcuflow.streaming import StreamingConv1d, StreamingConv2d

WINDOW = 24


class Stack1d(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = StreamingConv1d(4, 6, 3, dilation=2)
        self.depthwise = StreamingConv1d(6, 6, 3, groups=6)

    def forward(self, x):
        return self.depthwise(torch.relu(self.conv(x)))


class Time2d(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = StreamingConv2d(1, 3, (3, 3), features=8, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def frames_of(model, seed):
    g = torch.Generator().manual_seed(seed)
    if isinstance(model, Time2d):
        return torch.randn(1, 1, WINDOW, 8, generator=g)
    return torch.randn(1, 4, WINDOW, generator=g)


def one(xs, i):
    return xs[:, :, i:i + 1]


@pytest.mark.parametrize("model_class", [Stack1d, Time2d])
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_frame_by_frame_equals_whole_window(model_class, precision):
    torch.manual_seed(0)
    model = model_class().eval()
    xs = frames_of(model, 1)
    int8 = precision == "int8"

    def build(example, calibration):
        ep = torch.export.export(copy.deepcopy(model), (example,))
        return mcuflow.compile(ep, target="cortex-m55", precision=precision, observer="minmax",
                               calibration=calibration if int8 else None)

    # The same values calibrate both (minmax: a histogram would also count the frames the state
    # keeps): one window, or its frames as a sequence.
    streaming = build(one(xs, 0), [(one(xs, i),) for i in range(WINDOW)])
    window = build(xs, [(xs,)])
    assert streaming.stateful and any(k.startswith("ring_") for k in streaming.kernels)
    assert not any(k.startswith("strided_copy") or k.startswith("concat") for k in streaming.kernels)
    got = np.concatenate([streaming.run(one(xs, i).numpy())[0] for i in range(WINDOW)], axis=2)
    whole = window.run(xs.numpy())[0]
    assert got.tobytes() == whole.tobytes()
    with torch.no_grad():
        expected = copy.deepcopy(model)(xs).numpy()
    error = np.abs(got - expected).max()
    assert error < (0.05 * np.abs(expected).max() if int8 else 1e-5), error
    streaming.reset_state()
    assert streaming.run(one(xs, 0).numpy())[0].tobytes() == got[:, :, :1].tobytes()


def test_a_one_frame_kernel_keeps_no_state():
    """Kernel 1 over time needs no past frames: no history, no state, the plain convolution."""
    torch.manual_seed(0)
    layer = StreamingConv1d(4, 3, 1).eval()
    assert layer.history.shape == (1, 4, 0)
    x = torch.randn(1, 4, 1)
    program = mcuflow.compile(torch.export.export(layer, (x,)), target="cortex-m55", precision="fp32")
    assert not program.stateful
    with torch.no_grad():
        expected = torch.nn.functional.conv1d(x, layer.weight, layer.bias).numpy()
    np.testing.assert_allclose(program.run(x.numpy())[0], expected, rtol=1e-6, atol=1e-6)
