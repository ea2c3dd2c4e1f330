"""Recurrent layers (nn.GRU, nn.LSTM, nn.RNN): the front end writes them as PyTorch's own
decomposition (linear layers, gate slices, sigmoid / tanh, element-wise ops per layer and time
step). Streamed one step per call with the hidden state kept as program state
(mcuflow.streaming.StreamingRNN), with the state as explicit inputs and outputs, or over a whole
sequence: each equals PyTorch within float / int8 tolerance over a long sequence."""

import copy

import numpy as np
import pytest
import torch

import mcuflow
from mcuflow.streaming import StreamingRNN

FEATURES, HIDDEN, STEPS = 8, 16, 100

# (layer class, layers, batch_first, extra constructor arguments)
CASES = {
    "gru": (torch.nn.GRU, 1, True, {}),
    "gru_stacked": (torch.nn.GRU, 2, False, {}),
    "lstm": (torch.nn.LSTM, 1, False, {}),
    "lstm_stacked": (torch.nn.LSTM, 2, True, {}),
    "lstm_stacked_projected": (torch.nn.LSTM, 2, True, {"proj_size": 5}),
    "rnn_stacked": (torch.nn.RNN, 2, True, {}),
}


def recurrent_layer(name):
    layer, layers, batch_first, extra = CASES[name]
    torch.manual_seed(0)
    return layer(FEATURES, HIDDEN, num_layers=layers, batch_first=batch_first, **extra).eval()


def signal(seed, steps=STEPS):
    """A sensor-like sequence (steps, FEATURES): sines of random phase plus noise."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(steps, dtype=torch.float32)[:, None]
    phase = 6.28 * torch.rand(1, FEATURES, generator=g)
    return torch.sin(0.3 * t + phase) + 0.3 * torch.randn(steps, FEATURES, generator=g)


def steps_of(xs):
    """Each time step as the one-step input of either layout: (1, 1, FEATURES)."""
    return [xs[i].reshape(1, 1, FEATURES) for i in range(len(xs))]


def compiled(model, example, precision, calibration, target="cortex-m55"):
    ep = torch.export.export(copy.deepcopy(model), example)
    return mcuflow.compile(ep, target=target, precision=precision, observer="minmax",
                           calibration=calibration if precision == "int8" else None)


def assert_close(got, expected, precision):
    error = np.abs(got - expected)
    spread = float(np.abs(expected).max())
    if precision == "fp32":
        assert error.max() < 1e-5, error.max()
    else:  # int8 activations, LUT gates; the calibration covered these values
        assert error.max() < 0.05 * spread and error.mean() < 0.02 * spread, (error.max(), error.mean(), spread)


def streamed(name, precision, seed=1):
    """A StreamingRNN program and the sequence it is tested on (it calibrates int8 too: minmax
    ranges, so no step saturates)."""
    model = StreamingRNN(recurrent_layer(name))
    xs = steps_of(signal(seed))
    return model, xs, compiled(model, (xs[0],), precision, [(x,) for x in xs])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_step_by_step_equals_pytorch(name, precision):
    model, xs, program = streamed(name, precision)
    assert program.stateful
    states = [t for t in program._host.tensors if t["storage"] == "state"]
    assert len(states) == (2 if "lstm" in name else 1)  # h, and the LSTM's c
    eager = copy.deepcopy(model)
    with torch.no_grad():
        expected = np.concatenate([eager(x).numpy() for x in xs])
    got = np.concatenate([program.run(x.numpy())[0] for x in xs])
    assert_close(got, expected, precision)
    program.reset_state()
    assert program.run(xs[0].numpy())[0].tobytes() == got[:1].tobytes()
    assert program.run(xs[0].numpy())[0].tobytes() != got[:1].tobytes()  # the state moved on


@pytest.mark.parametrize("name, precision",
                         [("gru_stacked", "int8"), ("lstm_stacked", "fp32"), ("lstm_stacked", "int8")])
def test_explicit_state_inputs_and_outputs(name, precision):
    """model(x, h) -> (y, h_next) (LSTM: (h, c)), the caller feeding the state back."""
    layer = recurrent_layer(name)
    lstm = isinstance(layer, torch.nn.LSTM)

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = layer

        def forward(self, x, *state):
            y, next_state = self.rnn(x, tuple(state) if lstm else state[0])
            return (y, *next_state) if lstm else (y, next_state)

    model = Step().eval()
    xs = steps_of(signal(2, 40))
    zero = [torch.zeros(layer.num_layers, 1, HIDDEN) for _ in range(2 if lstm else 1)]
    expected, inputs, state = [], [], zero
    with torch.no_grad():  # the sequence's states: calibration data and expected outputs
        for x in xs:
            inputs.append((x, *state))
            y, *state = model(x, *state)
            expected.append(y.numpy())
    program = compiled(model, inputs[0], precision, inputs)
    assert not program.stateful
    got, state = [], [s.numpy() for s in zero]
    for x in xs:
        y, *state = program.run([x.numpy(), *state])
        got.append(y)
    assert_close(np.concatenate(got), np.concatenate(expected), precision)


@pytest.mark.parametrize("name, bidirectional", [("gru", True), ("lstm_stacked", False)])
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_whole_sequence(name, bidirectional, precision):
    """The layer over an 8-step sequence in one call, from a zero state: its output sequence and
    final hidden state (a bidirectional layer reads the sequence backwards too)."""
    layer, layers, batch_first, extra = CASES[name]
    torch.manual_seed(0)
    rnn = layer(FEATURES, HIDDEN, num_layers=layers, batch_first=batch_first, bidirectional=bidirectional, **extra)

    class Sequence(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            y, state = self.rnn(x)
            return y, state[0] if isinstance(state, tuple) else state

    model = Sequence().eval()
    samples = [signal(seed, 8)[:, None] for seed in range(3, 8)]  # (T, 1, F)
    samples = [s.transpose(0, 1) if batch_first else s for s in samples]
    program = compiled(model, (samples[0],), precision, [(s,) for s in samples])
    assert not program.stateful
    for s in samples[:2]:
        with torch.no_grad():
            expected = [t.numpy() for t in model(s)]
        for got, want in zip(program.run(s.numpy()), expected):
            assert got.shape == want.shape
            assert_close(got, want, precision)


def test_streaming_rnn_refuses_a_bidirectional_layer():
    with pytest.raises(ValueError, match="bidirectional layer reads the future"):
        StreamingRNN(torch.nn.GRU(4, 6, bidirectional=True))
