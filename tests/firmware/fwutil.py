"""Shared helpers for the firmware tests (mcuflow is installed by `make`)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch.nn as nn

import mcuflow
from mcuflow import boards, crossbuild, firmware_sources, qemu

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"
FIRMWARE = REPO / "firmware"
FW_TESTS = FIRMWARE / "tests"



# The boards an emulator runs (pico2 has none: tests/python/test_uf2.py checks its image).
BOARD_NAMES = [b for b in boards.board_names() if boards.get_board(b).emulated]
# The six QEMU development boards (semihosting): the large program suites run on these; the
# STM32F405 has its own lean suite (test_stm32f405.py).
DEV_BOARDS = [b for b in BOARD_NAMES if boards.get_board(b).console == "semihosting"]

HAVE_CROSS = crossbuild.toolchain_available()
HAVE_QEMU = qemu.qemu_available()

requires_cross = pytest.mark.skipif(
    not (HAVE_CROSS and HAVE_QEMU),
    reason="cross toolchain (arm-none-eabi-gcc) or qemu-system-arm not installed: "
    "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi "
    "libstdc++-arm-none-eabi-newlib qemu-system-arm",
)

requires_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")

PROGRAMS = {
    "selftest": [FW_TESTS / "selftest.c", FW_TESTS / "selftest_cxx.cpp"],
    "calib": [FW_TESTS / "calib.c"],
    "fault": [FW_TESTS / "fault.c"],
}


def parse_kv(stdout: str) -> dict:
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(-?\d+)$", line.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def parse_calib(stdout: str):
    """-> (body, empty_delta, [(n, delta)], end_ticks)"""
    body = empty = end = None
    rows = []
    for line in stdout.splitlines():
        m = re.match(r"calib board=\S+ body=(\d+)", line)
        if m:
            body = int(m.group(1))
        m = re.match(r"calib empty delta=(\d+)", line)
        if m:
            empty = int(m.group(1))
        m = re.match(r"calib n=(\d+) delta=(\d+)", line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2))))
        m = re.match(r"calib end_ticks=(\d+)", line)
        if m:
            end = int(m.group(1))
    return body, empty, rows, end


def on_tier(references, board: str) -> set:
    """The kernels that ops with these reference kernels get on `board`: its tier's kernel where
    the tier has one (named after its reference, lut_s8 -> lut_s8_mve), else the reference."""
    tier = boards.get_board(board).tier
    ids = firmware_sources.kernel_ids(firmware_sources.source_root())
    return {f"{r}_{tier}" if f"{r}_{tier}" in ids else r for r in references}


def rejected_on_host_sent_to_board(program, altered: bytes):
    """`program` carrying the `altered` bytes: the host refuses them at load (with the board's
    error, which the caller checks too), so the board gets them behind the untampered
    program's metadata and host runtime."""
    with pytest.raises(mcuflow.InputError, match="bad_params"):
        mcuflow.Program(altered)
    for_board = mcuflow.Program(program.data)
    for_board.data = altered
    return for_board


class SideBySide(nn.Module):
    """Applies each layer to its own inputs (in order); returns every output."""

    def __init__(self, layers, input_counts):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.input_counts = input_counts

    def forward(self, *xs):
        outputs, at = [], 0
        for layer, n in zip(self.layers, self.input_counts):
            outputs.append(layer(*xs[at:at + n]))
            at += n
        return tuple(outputs)


def assert_outputs_equal(on_board, on_host) -> None:
    """The board's outputs are the host runtime's: as many, each of the same dtype and shape, bit for bit."""
    assert len(on_board) == len(on_host)
    for b, h in zip(on_board, on_host):
        assert b.dtype == h.dtype and b.shape == h.shape
        np.testing.assert_array_equal(b, h)
