"""Raw samples -> mcuflow.audio.LogMel -> a small CNN as one program on qemu-m4 and qemu-m55:
int8 and fp32 outputs bit-identical to the host runtime; and the float log kernel (our own logf,
no libm) bit-identical on the boards over every exponent, denormal inputs included (integer
normalization, so qemu-m55's flushing of denormals does not reach it)."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from fwutil import on_tier, requires_cross  # noqa: E402
from test_audio import KeywordNet, export, int8_program, signals  # noqa: E402

pytestmark = requires_cross

BOARDS = ["qemu-m4", "qemu-m55"]
SAMPLES = 2400  # 12 frames: the DFT dominates the board time


@pytest.fixture(scope="module")
def model():
    return KeywordNet().eval()


def clips(n):
    return np.stack(signals(11, n, SAMPLES))


@pytest.mark.parametrize("board", BOARDS)
def test_int8_samples_to_scores_bit_exact_on_board(model, board):
    program = int8_program(model, SAMPLES, target=get_board(board).core)
    assert on_tier({"conv_s8", "lut_s8"}, board) <= set(program.kernels), program.kernels
    x = clips(2)
    np.testing.assert_array_equal(device.run_on_board(program, x, board, timeout=600)[0], program.run(x)[0])


@pytest.mark.parametrize("board", BOARDS)
def test_fp32_samples_to_scores_bit_exact_on_board(model, board):
    program = mcuflow.compile(export(model, SAMPLES), target=get_board(board).core, precision="fp32")
    assert "activation_f32" in program.kernels
    x = clips(1)
    np.testing.assert_array_equal(device.run_on_board(program, x, board, timeout=600)[0], program.run(x)[0])


class Log(torch.nn.Module):
    def forward(self, x):
        return torch.log(x)


@pytest.mark.parametrize("board", BOARDS)
def test_float_log_bit_exact_on_board(board):
    rng = np.random.default_rng(3)
    positive = rng.integers(1, 0x7F800000, size=4000, dtype=np.uint32).view(np.float32)
    denormal = rng.integers(1, 0x800000, size=60, dtype=np.uint32).view(np.float32)
    edges = np.array([0.0, -0.0, -2.5, 1.0, 3.4e38], dtype=np.float32)
    x = np.concatenate([positive, denormal, edges]).reshape(1, -1)
    program = mcuflow.compile(torch.export.export(Log(), (torch.ones(x.shape),)), target=get_board(board).core,
                              precision="fp32")
    on_board = device.run_on_board(program, x, board, timeout=300)[0]
    on_host = program.run(x)[0]
    assert np.isnan(on_host[0, -3]) and np.isneginf(on_host[0, -5]) and on_host[0, -2] == 0.0
    np.testing.assert_array_equal(on_board.view(np.uint32), on_host.view(np.uint32))
