"""Streaming layers: PyTorch modules that run a model one frame (or a few) at a time with the
temporal context they need kept in a registered buffer. In eager PyTorch each forward
concatenates the buffer and the new frames and keeps the newest frames for the next call;
mcuflow compiles that pattern into a ring buffer the convolution reads in place (docs/streaming.md),
so a frame costs its own copy into the ring, not a shifted copy of the window.

Run over a sequence, a streaming layer fed T frames per call gives the outputs of the same
causal convolution over the whole sequence (zero history before the first frame), whatever T.
``StreamingRNN`` does the same for a recurrent layer: its hidden state is the kept context."""

from __future__ import annotations

import torch

__all__ = ["StreamingConv1d", "StreamingConv2d", "StreamingRNN", "reset_streaming_state"]


def _history_frames(kernel_size: int, dilation: int) -> int:
    return dilation * (kernel_size - 1)


def reset_streaming_state(module: torch.nn.Module) -> None:
    """Forgets the kept context of every streaming layer in ``module`` (PyTorch side; a compiled
    program has reset_state()). An eager call changes the buffers, and ``torch.export`` takes
    their values as the program's initial state: reset before exporting."""
    for layer in module.modules():
        if isinstance(layer, (_KeptFrames, StreamingRNN)):
            layer.reset()


class _KeptFrames:
    """What the streaming convolutions share: time is dim 2 of the input and of ``history``."""

    def reset(self) -> None:
        """Forget the history (PyTorch side; a compiled program has reset_state())."""
        self.history.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.history.shape[2] == 0:  # a kernel of one frame over time keeps nothing: no state
            return self._conv_forward(x, self.weight, self.bias)
        window = torch.cat([self.history, x], dim=2)
        self.history.copy_(window[:, :, window.shape[2] - self.history.shape[2]:])
        return self._conv_forward(window, self.weight, self.bias)


class StreamingConv1d(_KeptFrames, torch.nn.Conv1d):
    """A causal Conv1d over time (the last dim) for batch 1: its last dilation * (k - 1) input
    frames are kept in the buffer ``history``; no padding, stride 1. ``forward(x)`` takes
    ``(1, in_channels, T)`` and returns ``(1, out_channels, T)``."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dilation: int = 1, groups: int = 1,
                 bias: bool = True):
        super().__init__(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=dilation,
                         groups=groups, bias=bias)
        frames = _history_frames(self.kernel_size[0], self.dilation[0])
        self.register_buffer("history", torch.zeros(1, in_channels, frames))

    @classmethod
    def from_conv(cls, conv: torch.nn.Conv1d) -> "StreamingConv1d":
        """The streaming form of a trained Conv1d (its weights; its padding and stride must be 0 and 1)."""
        if conv.stride != (1,) or conv.padding_mode != "zeros" or isinstance(conv.padding, str) or conv.padding != (0,):
            raise ValueError("StreamingConv1d.from_conv: the convolution must have stride 1 and no padding "
                             "(its causal padding is the kept history)")
        s = cls(conv.in_channels, conv.out_channels, conv.kernel_size[0], conv.dilation[0], conv.groups,
                conv.bias is not None)
        s.load_state_dict(conv.state_dict(), strict=False)
        return s


class StreamingConv2d(_KeptFrames, torch.nn.Conv2d):
    """A Conv2d causal over time, the height axis of ``(1, C, T, F)`` inputs (frames of F
    features, e.g. mel bands): its last dilation_t * (k_t - 1) frames are kept in ``history``.
    Stride 1 and no padding over time; the feature axis keeps its own stride and padding."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, features: int, padding: int = 0,
                 stride: int = 1, dilation=1, groups: int = 1, bias: bool = True):
        k = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size, kernel_size)
        d = dilation if isinstance(dilation, (tuple, list)) else (dilation, dilation)
        super().__init__(in_channels, out_channels, tuple(k), stride=(1, stride), padding=(0, padding),
                         dilation=tuple(d), groups=groups, bias=bias)
        frames = _history_frames(self.kernel_size[0], self.dilation[0])
        self.register_buffer("history", torch.zeros(1, in_channels, frames, features))


class StreamingRNN(torch.nn.Module):
    """A trained ``nn.GRU``, ``nn.LSTM`` or ``nn.RNN`` (any number of layers, ``batch_first`` or
    not, one direction) for batch 1, its hidden state kept between calls: in the buffer ``h``
    (``(num_layers, 1, proj_size or hidden_size)``) and the LSTM's cell state in ``c``
    (``(num_layers, 1, hidden_size)``), zero at first.
    ``forward(x)`` takes the layer's input for any number of time steps (usually one) and returns
    its output sequence; compiled, the buffers are the program's states (docs/streaming.md)."""

    def __init__(self, rnn: torch.nn.RNNBase):
        super().__init__()
        if not isinstance(rnn, (torch.nn.GRU, torch.nn.LSTM, torch.nn.RNN)):
            raise TypeError(f"StreamingRNN wraps nn.GRU, nn.LSTM or nn.RNN, not {type(rnn).__name__}")
        if rnn.bidirectional:
            raise ValueError("StreamingRNN: a bidirectional layer reads the future; it cannot stream")
        self.rnn = rnn
        self.register_buffer("h", torch.zeros(rnn.num_layers, 1, rnn.proj_size or rnn.hidden_size))
        if isinstance(rnn, torch.nn.LSTM):
            self.register_buffer("c", torch.zeros(rnn.num_layers, 1, rnn.hidden_size))

    def reset(self) -> None:
        """Forget the hidden state (PyTorch side; a compiled program has reset_state())."""
        for state in self.buffers(recurse=False):
            state.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if isinstance(self.rnn, torch.nn.LSTM):
            y, (h, c) = self.rnn(x, (self.h, self.c))
            self.c.copy_(c)
        else:
            y, h = self.rnn(x, self.h)
        self.h.copy_(h)
        return y
