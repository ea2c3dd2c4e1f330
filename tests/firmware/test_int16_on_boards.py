"""int16 programs (precision="int16", A16W8) on emulated boards: a small model over every int16
kernel and both requantizations, and DS-CNN (on the DSP int16 kernels on qemu-m4, the MVE ones on
qemu-m55), host and board bit for bit."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device, zoo  # noqa: E402
from fwutil import assert_outputs_equal, requires_cross  # noqa: E402

pytestmark = requires_cross


class Mixed(nn.Module):
    """conv, depthwise, 1x1 conv, add, mul, max and average pool, linear on int16 kernels (MVE ones
    on cortex-m55, DSP ones on cortex-m7); elu
    (int8 only) between them: requantized to int8 and back."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8 * 3 * 3, 5)

    def forward(self, x):
        a = F.relu(self.conv(x))
        b = self.pw(F.elu(self.dw(a))) + a
        c = F.max_pool2d(b * a, 2)
        return self.fc(F.avg_pool2d(c, 2, stride=1).flatten(1))


# The weighted and average-pool int16 kernels each board's tier has.
MIXED_WEIGHTED = {"qemu-m0": {"conv_s16", "dwconv_s16", "avgpool_s16", "fc_s16"},
                  "qemu-m7": {"conv_s16_dsp", "dwconv_s16_dsp", "conv_s16_1x1_dsp", "avgpool_s16_dsp", "fc_s16_dsp"},
                  "qemu-m55": {"conv_s16_mve", "dwconv_s16_mve", "conv_s16_1x1_mve", "avgpool_s16_mve", "fc_s16_mve"}}


@pytest.mark.parametrize("target, board", [("cortex-m0", "qemu-m0"), ("cortex-m7", "qemu-m7"),
                                           ("cortex-m55", "qemu-m55")])
def test_int16_program_host_equals_board(target, board):
    torch.manual_seed(0)
    model = Mixed().eval()
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((3, 1, 3, 8, 8)).astype(np.float32)
    ep = torch.export.export(model, (torch.from_numpy(inputs[0]),))
    calibration = rng.standard_normal((16, 1, 3, 8, 8)).astype(np.float32) * 1.5
    program = mcuflow.compile(ep, target=target, calibration=list(calibration), precision="int16")
    kernels = set(program.kernels)
    assert MIXED_WEIGHTED[board] | {"add_s16", "mul_s16", "maxpool_s16", "requantize_s16_s8", "requantize_s8_s16"} <= kernels, kernels
    batch = inputs[:, 0]
    assert_outputs_equal(device.run_on_board(program, batch, board), program.run(batch))


# The int16 kernels each board's tier has (kernels/{dsp,mve}/*_s16_*.cpp); the rest run on reference kernels.
DS_CNN_TIER_KERNELS = {"qemu-m4": {"conv_s16_dsp", "dwconv_s16_dsp", "conv_s16_1x1_dsp", "avgpool_s16_dsp", "fc_s16_dsp"},
                       "qemu-m55": {"conv_s16_mve", "dwconv_s16_mve", "conv_s16_1x1_mve", "avgpool_s16_mve", "fc_s16_mve"}}


@pytest.mark.parametrize("target, board", [("cortex-m4", "qemu-m4"), ("cortex-m55", "qemu-m55")])
def test_ds_cnn_int16_host_equals_board(target, board):
    model = zoo.get("ds_cnn")
    program = mcuflow.compile(model.export(), target=target, calibration=model.calibration(16), precision="int16")
    assert DS_CNN_TIER_KERNELS[board] <= set(program.kernels), program.kernels
    batch = model.evaluation(2)
    assert_outputs_equal(device.run_on_board(program, batch, board), program.run(batch))
