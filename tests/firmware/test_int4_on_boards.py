"""Packed int4 weights (weights="int4", W4A8) on emulated boards, host and board bit for bit: a
small model over every int4-weight kernel (conv, grouped conv, 1x1, depthwise, linear) with odd
weight counts on qemu-m0 (reference kernels) and qemu-m55 (MVE int4 kernels), and the FC autoencoder, which fits the 256 KiB of
qemu-m0's flash only with int4 weights."""

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
from mcuflow.boards import get_board  # noqa: E402
from fwutil import assert_outputs_equal, requires_cross  # noqa: E402

pytestmark = requires_cross


class Weighted(nn.Module):
    """Every int4-weight kernel, odd weight counts: conv 3x3 3 -> 7 (189 weights), 1x1 7 -> 10,
    grouped 3x3 10 -> 15 in 5 groups, depthwise 3x3 of 15 channels (135), linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 7, 3, padding=1)
        self.pw = nn.Conv2d(7, 10, 1)
        self.grouped = nn.Conv2d(10, 15, 3, padding=1, groups=5)
        self.dw = nn.Conv2d(15, 15, 3, padding=1, groups=15)
        self.fc = nn.Linear(15 * 4 * 4, 5)

    def forward(self, x):
        a = F.relu(self.pw(F.relu(self.conv(x))))
        b = F.relu(self.dw(self.grouped(a)))
        return self.fc(F.max_pool2d(b, 2).flatten(1))


@pytest.mark.parametrize("target, board", [("cortex-m0", "qemu-m0"), ("cortex-m55", "qemu-m55")])
def test_int4_program_host_equals_board(target, board):
    torch.manual_seed(0)
    model = Weighted().eval()
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((3, 1, 3, 8, 8)).astype(np.float32)
    ep = torch.export.export(model, (torch.from_numpy(inputs[0]),))
    calibration = list(rng.standard_normal((16, 1, 3, 8, 8)).astype(np.float32) * 1.5)
    program = mcuflow.compile(ep, target=target, calibration=calibration, weights="int4")
    kernels = program.kernels  # qemu-m0: the reference kernels; qemu-m55: the MVE int4 kernels
    suffix = "_mve" if target == "cortex-m55" else ""
    assert sum(k.startswith("conv_s8_w4") and k.endswith(suffix) for k in kernels) == 3, kernels
    assert {"dwconv_s8_w4" + suffix, "fc_s8_w4" + suffix} <= set(kernels), kernels
    batch = inputs[:, 0]
    assert_outputs_equal(device.run_on_board(program, batch, board), program.run(batch))


def test_fc_autoencoder_fits_qemu_m0_with_int4_weights():
    model = zoo.get("fc_autoencoder")
    ep = model.export()
    calibration = model.calibration(16)
    program = mcuflow.compile(ep, target="cortex-m0", calibration=calibration, weights="int4")
    assert program.kernels.count("fc_s8_w4") == 10 and not program.warnings(), (program.kernels, program.warnings())
    flash = get_board("qemu-m0").region(get_board("qemu-m0").code_region).size
    assert len(program.device_image) < flash - 64 * 1024, len(program.device_image)
    int8 = mcuflow.compile(ep, target="cortex-m0", calibration=calibration)
    assert len(int8.device_image) > flash, "the int8 program was expected not to fit"
    batch = model.evaluation(2)
    assert_outputs_equal(device.run_on_board(program, batch, "qemu-m0"), program.run(batch))
