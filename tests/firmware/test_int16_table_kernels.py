"""int16 table activations and softmax (lut_s16, softmax_s16) on their tier kernels: lut_s16_mve
and softmax_s16_mve on qemu-m55, lut_s16_dsp and softmax_s16_dsp on qemu-m4, lut_s16_scalar and
softmax_s16_scalar on qemu-m0; bit for bit against the host runtime (which runs the reference kernels).

One int16 program per board of differently shaped layers side by side (odd element counts for
the predicated tails, rows of 1 to 300 values, softmax along the channels of an image), inputs
reaching three times the calibration range so that the int16 inputs saturate at both ends and
softmax rows hold differences beyond the exp table's range.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from fwutil import requires_cross  # noqa: E402
from test_int16_mve_kernels import assert_board_matches_host, compile_int16  # noqa: E402
from test_ops import Fn  # noqa: E402

pytestmark = requires_cross


def cases():
    """(name, module, input shapes) of the layers: five table activations, five softmaxes."""
    return [("sigmoid", Fn(lambda m, x: torch.sigmoid(x)), [(1, 3, 5, 7)]),
            ("tanh", Fn(lambda m, x: torch.tanh(x * 2)), [(1, 17)]),
            ("hardswish", Fn(lambda m, x: F.hardswish(x * 3)), [(1, 8, 9, 7)]),
            ("silu", Fn(lambda m, x: F.silu(x)), [(2, 33)]),
            ("gelu", Fn(lambda m, x: F.gelu(x)), [(1, 1)]),
            ("softmax of one", Fn(lambda m, x: torch.softmax(x, dim=-1)), [(3, 1)]),
            ("softmax 7", Fn(lambda m, x: torch.softmax(x * 4, dim=-1)), [(5, 7)]),
            ("softmax 33", Fn(lambda m, x: torch.softmax(x, dim=-1)), [(2, 33)]),
            ("softmax 300", Fn(lambda m, x: torch.softmax(x * 0.1, dim=-1)), [(1, 300)]),
            ("softmax channels", Fn(lambda m, x: torch.softmax(x * 8, dim=1)), [(1, 12, 3, 5)])]


BOARDS = {  # board: (the core compiled for, its lut kernel, its softmax kernel)
    "qemu-m55": ("cortex-m55", "lut_s16_mve", "softmax_s16_mve"),
    "qemu-m4": ("cortex-m4", "lut_s16_dsp", "softmax_s16_dsp"),
    "qemu-m0": ("cortex-m0", "lut_s16_scalar", "softmax_s16_scalar"),
}


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_table_kernels_match_host(board):
    target, lut, softmax = BOARDS[board]
    layers = cases()
    program = compile_int16(layers, target)
    kernels = [op["kernel"] for op in program.metadata["ops"] if op["kernel"].startswith(("lut", "softmax"))]
    assert sorted(kernels) == sorted([lut] * 5 + [softmax] * 5), kernels
    assert_board_matches_host(program, layers, seed=11, board=board)
