"""Weights the planner copies into fast RAM (constants in slow memory) are legal inputs of the
tier kernels: the board loads such a program and computes the host's bytes
(tests/python/test_host_tier_checks.py checks the host side for every tier)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import requires_cross  # noqa: E402

pytestmark = requires_cross

# qemu-m55 keeps its code and constants in ITCM (fast): this map puts them in slow memory.
M55_WEIGHTS_TO_DTCM = {"regions": [{"name": "DTCM", "bytes": 64 * 1024, "fast": True}], "weights_in_slow_memory": True}


@pytest.mark.parametrize("target, board, memory", [("cortex-m0", "qemu-m33", "qemu-m33"),
                                                   ("cortex-m55", "qemu-m55", M55_WEIGHTS_TO_DTCM)])
def test_board_runs_tier_kernels_on_copied_weights(target, board, memory, tmp_path, monkeypatch):
    monkeypatch.setenv("MCUFLOW_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 6 * 6, 10)).eval()
    program = mcuflow.compile(torch.export.export(model, (torch.randn(1, 8, 6, 6),)), target=target, io="int8",
                              calibration=[torch.randn(8, 8, 6, 6).numpy()], memory=memory)
    tier = "scalar" if target == "cortex-m0" else "mve"
    assert all(op["kernel"].endswith(tier) for op in program.metadata["ops"]), program.metadata["ops"]
    # what is copied is what the kernels stream: the scalar kernels' prepared tables, the MVE
    # GEMM kernels' reference weights
    copied = [c["tensor"] for c in program.describe()["plan"]["copied_weights"]]
    assert len(copied) == 2 and all(name.endswith(".scalar_prepared") == (tier == "scalar") for name in copied), copied
    x = np.random.default_rng(1).integers(-128, 128, size=(3, 8, 6, 6), dtype=np.int8)
    assert np.array_equal(device.run_on_board(program, x, board)[0], program.run(x)[0])
