"""DSP and MVE window kernels run in place and still compute the host's bytes.

The planner lets conv_s8_mve, conv_s8_1x1_mve, dwconv_s8_mve and their DSP counterparts
(conv_s8_dsp, conv_s8_1x1_dsp, dwconv_s8_dsp) write their output over their dying input,
starting below it; conv_s8_1x1_mve and dwconv_s8_mve also above it (they walk the pixels
backwards then, like their references), the others never. Three such layers side by side, each a
peak the planner must lower, with 20 channels (a partial 16-channel block) on 13x13 pixels (an odd
count: the 1x1 kernel's single-pixel tail), are compiled for cortex-m55 and cortex-m4; the plan
must put each kernel in place, the forward-only ones below their input, and the board's outputs
must equal the host's on random inputs. A DS-CNN-like chain of depthwise and pointwise layers on
qemu-m55 makes the planner alternate directions, so the backward walks run too, also on 8 channels (two
pixels a dwconv_s8_mve pass). Each also with
int4 weights: the int4 tier kernels keep their int8 kernels' contracts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import requires_cross  # noqa: E402

pytestmark = requires_cross

# board -> (core, the window kernels the layers must run in place), int8 weights; with int4 weights
# the int4 tier kernels, which run their int8 kernel on what they build in their scratch.
BOARDS = {"qemu-m55": ("cortex-m55", {"conv_s8_mve", "conv_s8_1x1_mve", "dwconv_s8_mve"}),
          "qemu-m4": ("cortex-m4", {"conv_s8_dsp", "conv_s8_1x1_dsp", "dwconv_s8_dsp"})}
FORWARD_ONLY = {"conv_s8_mve", "conv_s8_dsp", "conv_s8_1x1_dsp", "dwconv_s8_dsp", "conv_s8_w4_mve", "conv_s8_w4_dsp",
                "conv_s8_w4_1x1_dsp", "dwconv_s8_w4_dsp"}


def int4_kernel(kernel: str) -> str:
    """conv_s8_1x1_mve -> conv_s8_w4_1x1_mve, dwconv_s8_dsp -> dwconv_s8_w4_dsp."""
    return kernel.replace("_s8", "_s8_w4", 1)


class ThreeWindowLayers(nn.Module):
    """Three window layers, each on its own input of the same size: every step holds the same
    bytes (the inputs still to read, the outputs made, the current op's pair) plus its scratch,
    and each activation outweighs any op's scratch, so each op is a peak the planner must lower
    by running it in place."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(20, 20, 3, padding=1), nn.ReLU())  # conv_s8_mve / _dsp
        self.dw = nn.Sequential(nn.Conv2d(20, 20, 5, padding=2, groups=20), nn.ReLU6())  # dwconv_s8_mve / _dsp
        self.pw = nn.Conv2d(20, 20, 1)  # conv_s8_1x1_mve / _dsp

    def forward(self, a, b, c):
        return self.conv(a), self.dw(b), self.pw(c)


# int4 weights on qemu-m55 only: on the DSP tier the 3x3 conv's unpacked weights outweigh an
# activation, so the other two layers are no peak (test_int4_chain_runs_in_place covers them).
@pytest.fixture(scope="module", params=[("qemu-m4", "int8"), ("qemu-m55", "int8"), ("qemu-m55", "int4")])
def board_and_program(request):
    board, weights = request.param
    torch.manual_seed(3)
    rng = np.random.RandomState(3)
    shape = (1, 20, 13, 13)
    calibration = [tuple(rng.standard_normal(shape).astype(np.float32) for _ in range(3)) for _ in range(8)]
    ep = torch.export.export(ThreeWindowLayers().eval(), tuple(torch.from_numpy(x) for x in calibration[0]))
    program = mcuflow.compile(ep, target=BOARDS[board][0], calibration=calibration, io="int8", weights=weights)
    return board, weights, program


def test_the_plan_runs_each_window_kernel_in_place_below_its_input(board_and_program):
    board, weights, program = board_and_program
    kernels = {int4_kernel(k) if weights == "int4" else k for k in BOARDS[board][1]}
    d = program.describe()
    in_place = {d["ops"][step["op"]]["kernel"]: step["shift"] for step in d["plan"]["in_place"]}
    assert kernels <= set(in_place), in_place
    assert all(in_place[k] >= 0 for k in kernels & FORWARD_ONLY), in_place  # forwards only: never above


def test_board_equals_host_in_place(board_and_program):
    board, _, program = board_and_program
    rng = np.random.RandomState(4)
    xs = [rng.randint(-128, 128, size=(3, 20, 13, 13)).astype(np.int8) for _ in range(3)]
    for on_board, on_host in zip(device.run_on_board(program, xs, board, timeout=300), program.run(xs)):
        np.testing.assert_array_equal(on_board, on_host)


class DepthwiseChain(nn.Module):
    """DS-CNN's block structure: depthwise 3x3 and pointwise layers (64 channels, 25x5 for DS-CNN)."""

    def __init__(self, channels=64):
        super().__init__()
        layers = []
        for _ in range(3):
            layers += [nn.Conv2d(channels, channels, 3, padding=1, groups=channels), nn.ReLU(),
                       nn.Conv2d(channels, channels, 1), nn.ReLU()]
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


@pytest.mark.parametrize("weights", ["int8", "int4"])
def test_mve_chain_alternates_directions_and_equals_the_host(weights):
    torch.manual_seed(6)
    rng = np.random.RandomState(6)
    shape = (1, 64, 25, 5)
    calibration = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]
    ep = torch.export.export(DepthwiseChain().eval(), (torch.from_numpy(calibration[0]),))
    program = mcuflow.compile(ep, target="cortex-m55", calibration=calibration, io="int8", weights=weights)
    d = program.describe()
    above = {d["ops"][s["op"]]["kernel"] for s in d["plan"]["in_place"] if s["shift"] < 0}
    both_ways = {"conv_s8_1x1_mve", "dwconv_s8_mve"}
    assert above & ({int4_kernel(k) for k in both_ways} if weights == "int4" else both_ways), d["plan"]["in_place"]
    xs = rng.randint(-128, 128, size=(2,) + shape[1:]).astype(np.int8)
    np.testing.assert_array_equal(device.run_on_board(program, xs, "qemu-m55", timeout=300)[0], program.run(xs)[0])


def test_mve_depthwise_of_8_channels_runs_in_place_both_ways_and_equals_the_host():
    """8 channels: dwconv_s8_mve computes two adjacent pixels a pass, and still runs in place both ways."""
    torch.manual_seed(7)
    rng = np.random.RandomState(7)
    shape = (1, 8, 14, 15)
    calibration = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]
    ep = torch.export.export(DepthwiseChain(8).eval(), (torch.from_numpy(calibration[0]),))
    program = mcuflow.compile(ep, target="cortex-m55", calibration=calibration, io="int8")
    d = program.describe()
    shifts = {s["shift"] for s in d["plan"]["in_place"] if d["ops"][s["op"]]["kernel"] == "dwconv_s8_mve"}
    assert any(s < 0 for s in shifts) and any(s >= 0 for s in shifts), d["plan"]["in_place"]
    xs = rng.randint(-128, 128, size=(2,) + shape[1:]).astype(np.int8)
    np.testing.assert_array_equal(device.run_on_board(program, xs, "qemu-m55", timeout=300)[0], program.run(xs)[0])


def test_dsp_int4_chain_runs_in_place_and_equals_the_host():
    """The DSP int4 depthwise and pointwise kernels run in place (forwards) where int8 DS-CNN's
    dwconv_s8_3x3_dsp never does."""
    torch.manual_seed(6)
    rng = np.random.RandomState(6)
    shape = (1, 64, 25, 5)
    calibration = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]
    ep = torch.export.export(DepthwiseChain().eval(), (torch.from_numpy(calibration[0]),))
    program = mcuflow.compile(ep, target="cortex-m4", calibration=calibration, io="int8", weights="int4")
    d = program.describe()
    in_place = {d["ops"][s["op"]]["kernel"]: s["shift"] for s in d["plan"]["in_place"]}
    assert {"dwconv_s8_w4_dsp", "conv_s8_w4_1x1_dsp"} <= set(in_place), in_place
    assert all(shift >= 0 for shift in in_place.values()), in_place
    xs = rng.randint(-128, 128, size=(2,) + shape[1:]).astype(np.int8)
    np.testing.assert_array_equal(device.run_on_board(program, xs, "qemu-m4", timeout=300)[0], program.run(xs)[0])
