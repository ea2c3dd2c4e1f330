"""A PT2E-quantized model (tests/python/test_pt2e.py's small CNN, converted with mcuflow's
quantizer and compiled with its own scales) on qemu-m55: bit-exact with the host runtime."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
pytest.importorskip("torchao.quantization.pt2e")

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import requires_cross  # noqa: E402
from test_pt2e import converted, small_cnn  # noqa: E402

pytestmark = requires_cross


def test_pt2e_small_cnn_bit_exact_on_qemu_m55():
    module, calibration, evaluation = small_cnn()
    _, ep = converted(module, calibration)
    program = mcuflow.compile(ep, "cortex-m55")
    for x in evaluation[:2]:
        np.testing.assert_array_equal(device.run_on_board(program, x[None], "qemu-m55", timeout=600)[0],
                                      program.run(x[None])[0])
