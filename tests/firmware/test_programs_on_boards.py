"""Compiled programs on every emulated board: outputs bit-identical to the host runtime.

Each (program, board) firmware is built once per session (mcuflow.device.cached_build with a
session cache directory); a batch of inputs runs in one QEMU invocation.
"""

from unittest import mock
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import cli, device  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from fwutil import DEV_BOARDS, requires_cross  # noqa: E402
from models import DSCNN, init_bn_stats, make_model  # noqa: E402

pytestmark = requires_cross

SAMPLES = 20


def small_dscnn():
    """DS-CNN with 16 channels: the same layer structure, sized for qemu-m0's 16 KiB of RAM."""
    return init_bn_stats(DSCNN(channels=16), seed=0).eval()


def build_model(name):
    return small_dscnn() if name == "ds_cnn_16" else make_model(name)


def batch(model, seed, n):
    return [x.numpy() for x in model.example_input(seed=seed, batch=n)]


_programs = {}


def program_for(name, board, precision="int8"):
    """The model compiled for the board's own core, so each board runs its tier's kernels."""
    target = get_board(board).core
    key = (name, target, precision)
    if key not in _programs:
        model = build_model(name)
        ep = torch.export.export(model, model.example_input(seed=0))
        calibration = batch(model, 1, 32) if precision == "int8" else None
        _programs[key] = (model, mcuflow.compile(ep, target=target, calibration=calibration, precision=precision))
    return _programs[key]


# DS-CNN (64 channels) needs more than qemu-m0's 16 KiB; its 16-channel variant runs everywhere.
CASES = [(m, b) for b in DEV_BOARDS for m in ("ds_cnn_16", "resnet")] + \
        [("ds_cnn", b) for b in DEV_BOARDS if b != "qemu-m0"]


@pytest.mark.parametrize("name, board", CASES)
def test_int8_board_matches_host_bit_for_bit(name, board):
    model, program = program_for(name, board)
    xs = batch(model, 2, SAMPLES)
    on_board = device.run_on_board(program, xs, board)
    on_host = program.run(xs)
    for b, h in zip(on_board, on_host):
        assert b.dtype == h.dtype and b.shape == h.shape
        mismatches = np.flatnonzero((b != h).reshape(SAMPLES, -1).any(axis=1))
        assert mismatches.size == 0, f"{name} on {board}: inputs {mismatches.tolist()} differ from the host"


@pytest.mark.parametrize("board", ["qemu-m55", "qemu-m4"])
def test_fp32_board_matches_host(board):
    model, program = program_for("ds_cnn", board, "fp32")
    xs = batch(model, 3, 8)
    np.testing.assert_allclose(device.run_on_board(program, xs, board)[0], program.run(xs)[0], rtol=1e-5, atol=1e-6)


def test_oversized_model_fails_at_firmware_build_with_the_memory_message(tmp_path, capsys):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU()).eval()
    x = torch.randn(1, 3, 64, 64)
    program = mcuflow.compile(torch.export.export(model, (x,)), calibration=[(x,)])
    path = tmp_path / "big.mfp"
    program.save(path)
    rc = cli.main(["firmware", str(path), "--board", "qemu-m0", "-o", str(tmp_path / "fw")])
    err = capsys.readouterr().err
    assert rc == 1
    assert re.search(r"^mcuflow: error: qemu-m0: needs \d+ KiB of RAM, board has 16 KiB", err)
    assert not (tmp_path / "fw" / "firmware.elf").exists()


def test_corrupted_program_in_firmware_reports_the_verifier_error(tmp_path):
    model, program = program_for("ds_cnn_16", "qemu-m3")
    corrupted = bytearray(program.device_image)
    corrupted[len(corrupted) // 2] ^= 0x40  # the CRC no longer matches
    # The firmware generator embeds the program's device image: hand it the corrupted one.
    with mock.patch.object(type(program), "device_image", property(lambda self: bytes(corrupted))):
        fw = device.build(program, "qemu-m3", tmp_path / "fw")
    with pytest.raises(device.DeviceError, match=r"exited with code 20 \(runtime error bad_checksum\).*"
                                                  r"program rejected: bad_checksum"):
        device.run_elf_on_inputs(fw, program, [batch(model, 4, 1)], "qemu-m3")


def test_hung_firmware_is_killed_after_the_timeout():
    model, program = program_for("ds_cnn_16", "qemu-m3")
    fw = device.cached_build(program, "qemu-m3")
    many = [batch(model, 5, 1)] * 2000
    with pytest.raises(device.DeviceError, match="did not finish within 0.5 s"):
        device.run_elf_on_inputs(fw, program, many, "qemu-m3", timeout=0.5)


def test_cli_run_on_a_board_equals_cli_run_on_the_host(tmp_path):
    model, program = program_for("resnet", "qemu-m33")
    path = tmp_path / "m.mfp"
    program.save(path)
    np.savez(tmp_path / "x.npz", x=batch(model, 6, 3)[0])
    for board in ("host", "qemu-m33"):
        assert cli.main(["run", str(path), "--input", str(tmp_path / "x.npz"), "-o", str(tmp_path / f"{board}.npz"),
                         "--board", board]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "host.npz")["output_0"], np.load(tmp_path / "qemu-m33.npz")["output_0"])
