"""fuse_permutes (compiler/src/passes/fuse_permutes.cpp), on the host: a permute read only by
another permute, directly or through a view, folds into it.

* ShuffleNet's channel shuffle on NHWC tensors (NHWC -> NCHW, view, transpose, view,
  NCHW -> NHWC) is one permute_b8, and its int8 output is the shuffled input, exactly.
* A chain whose views split a dim across another's boundary (a (3, 2) result viewed as (2, 3))
  is no single permutation: both permutes stay, and the result is still exact.
* A permute whose result something else reads too stays.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import mcuflow


def compile_int8(model, shape):
    calibration = [(torch.randn(shape),) for _ in range(3)]
    return mcuflow.compile(torch.export.export(model.eval(), calibration[0]), target="reference",
                           calibration=calibration, io="int8")


def permutes(program):
    return [op["kernel"] for op in program.metadata["ops"] if op["kernel"].startswith("permute")]


def random_int8(shape, seed=0):
    return np.random.RandomState(seed).randint(-128, 128, size=shape).astype(np.int8)


class Shuffle(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        x = F.max_pool2d(x, 1)  # an image op: x is NHWC on the device
        n, c, h, w = x.shape
        x = x.view(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)
        return F.max_pool2d(x, 1)


def test_channel_shuffle_is_one_exact_permute():
    for groups, shape in ((2, (1, 24, 3, 5)), (4, (1, 16, 2, 2))):
        program = compile_int8(Shuffle(groups), shape)
        assert permutes(program) == ["permute_b8"], (groups, permutes(program))
        x = random_int8(shape, groups)
        n, c, h, w = shape
        expected = x.reshape(n, groups, c // groups, h, w).transpose(0, 2, 1, 3, 4).reshape(shape)
        np.testing.assert_array_equal(program.run([x])[0], expected)


class Straddling(nn.Module):
    def forward(self, x):  # (1, 2, 3) -> (1, 3, 2), viewed as (1, 2, 3) -> (1, 3, 2)
        return x.permute(0, 2, 1).reshape(1, 2, 3).permute(0, 2, 1)


class Shared(nn.Module):
    def forward(self, x):
        y = x.permute(0, 2, 1)
        return y.permute(1, 0, 2), y


def test_chains_that_are_not_one_permutation_or_share_the_middle_stay():
    program = compile_int8(Straddling(), (1, 2, 3))
    assert permutes(program) == ["permute_b8", "permute_b8"]
    x = random_int8((1, 2, 3))
    np.testing.assert_array_equal(program.run([x])[0], x.transpose(0, 2, 1).reshape(1, 2, 3).transpose(0, 2, 1))

    program = compile_int8(Shared(), (2, 3, 4))
    assert permutes(program) == ["permute_b8", "permute_b8"]
    x = random_int8((2, 3, 4))
    first, second = program.run([x])
    np.testing.assert_array_equal(first, x.transpose(0, 2, 1).transpose(1, 0, 2))
    np.testing.assert_array_equal(second, x.transpose(0, 2, 1))
