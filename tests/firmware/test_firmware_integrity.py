"""The firmware holds the program it was asked for, and nothing else decides what it holds.

`mcuflow firmware`, `run --board` and `bench` run from a directory holding a decoy model.mfp
(the name README uses) with a fresh firmware cache: each ELF embeds the intended program. Two
builds of the same program with different PYTHONHASHSEED values, in different directories, are
byte-identical. A program without metadata (Program.device_image) gives the same firmware, which
runs. A failed rebuild leaves the old firmware directory as it was; outputs follow the umask.

Four firmware builds in all (module fixture), reused by every assertion.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device, measure  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from fwutil import requires_cross  # noqa: E402
from models import SmallCNN  # noqa: E402

pytestmark = requires_cross

BOARD = "qemu-m3"
UMASK = 0o027
FIRMWARE_FILES = ("firmware.elf", "firmware.bin")


def compiled(seed):
    model = SmallCNN(seed=seed).eval()
    ep = torch.export.export(model, model.example_input(seed=0))
    return mcuflow.compile(ep, target="cortex-m3", calibration=[t.numpy() for t in model.example_input(seed=1, batch=8)])


def mcuflow_cli(args, cwd, seed, cache):
    env = dict(os.environ, PYTHONHASHSEED=str(seed), MCUFLOW_CACHE_DIR=str(cache))
    p = subprocess.run([sys.executable, "-c", "import sys; from mcuflow.cli import main; sys.exit(main())",
                        *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, umask=UMASK)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def snapshot(directory: Path) -> dict:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None for p in directory.rglob("*")}


def embedded_sha256(elf: Path) -> str:
    image = measure.embedded_program(elf, measure.elf_sections(elf), measure.elf_symbols(elf))
    assert image is not None, f"{elf} embeds no mcuflow program"
    return hashlib.sha256(image).hexdigest()


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    work = tmp_path_factory.mktemp("integrity")
    intended, decoy = compiled(0), compiled(1)
    assert intended.device_image != decoy.device_image
    decoy_dir, other_dir, cache = work / "decoy", work / "other", work / "cache"
    decoy_dir.mkdir()
    other_dir.mkdir()
    intended.save(work / "intended.mfp")
    decoy.save(decoy_dir / "model.mfp")
    (work / "stripped.mfp").write_bytes(intended.device_image)
    x = SmallCNN().example_input(seed=5, batch=3)[0].numpy()
    np.savez(work / "x.npz", x=x)

    mcuflow_cli(["firmware", work / "intended.mfp", "--board", BOARD, "-o", decoy_dir / "fw"], decoy_dir, 1, cache)
    mcuflow_cli(["run", work / "intended.mfp", "--input", work / "x.npz", "-o", work / "y.npz", "--board", BOARD],
                decoy_dir, 2, cache)
    mcuflow_cli(["bench", work / "intended.mfp", "--board", BOARD, "--warmup", "0", "--runs", "1"], decoy_dir, 3, cache)
    # the stripped program rebuilds a directory holding an earlier firmware and a stale file
    shutil.copytree(decoy_dir / "fw", other_dir / "fw")
    (other_dir / "fw" / "generated" / "stale.cpp").write_text("// left by an earlier build\n")
    mcuflow_cli(["firmware", work / "stripped.mfp", "--board", BOARD, "-o", other_dir / "fw"], other_dir, 4, cache)
    cached = {h: next((cache / "firmware").glob(f"{BOARD}-{h}-*")) for h in ("main", "bench")}
    return dict(work=work, intended=intended, decoy=decoy, x=x, cli=decoy_dir / "fw", stripped=other_dir / "fw",
                cached=cached)


def test_every_command_embeds_the_intended_program_despite_a_decoy_in_the_cwd(builds):
    want = hashlib.sha256(builds["intended"].device_image).hexdigest()
    for out in (builds["cli"], builds["cached"]["main"], builds["cached"]["bench"]):
        assert embedded_sha256(out / "firmware.elf") == want, out
    on_board = np.load(builds["work"] / "y.npz")
    host = builds["intended"].run([builds["x"]])
    assert len(on_board.files) == len(host)
    for name, h in zip(on_board.files, host):
        np.testing.assert_array_equal(on_board[name], h)


def test_identical_builds_are_byte_identical(builds):
    """Different hash seeds, output directories and working directories: the same bytes."""
    for name in FIRMWARE_FILES:
        assert (builds["cli"] / name).read_bytes() == (builds["cached"]["main"] / name).read_bytes(), name


def test_a_program_without_metadata_builds_the_same_firmware_and_runs(builds):
    for name in FIRMWARE_FILES:
        assert (builds["stripped"] / name).read_bytes() == (builds["cli"] / name).read_bytes(), name
    assert not (builds["stripped"] / "generated" / "stale.cpp").exists()
    stripped = mcuflow.Program(builds["intended"].device_image)
    out = builds["stripped"]
    fw = device.FirmwareBuild(board=get_board(BOARD), out_dir=out, elf=out / "firmware.elf", map=out / "firmware.map",
                              bin=out / "firmware.bin", build_info=out / "build_info.json")
    outputs, _ = device.run_elf_on_inputs(fw, stripped, [[builds["x"][:1]]], BOARD)
    np.testing.assert_array_equal(outputs[0][0], builds["intended"].run([builds["x"][:1]])[0])


def test_outputs_follow_the_umask(builds):
    for directory in (builds["cli"], builds["cached"]["main"]):
        assert directory.stat().st_mode & 0o777 == 0o777 & ~UMASK, directory
        for name in ("program.mfp", "build_info.json", "generated/program.S"):
            assert (directory / name).stat().st_mode & 0o777 == 0o666 & ~UMASK, directory / name


def test_a_failed_rebuild_leaves_the_old_firmware_directory_intact(builds, tmp_path, monkeypatch):
    out = tmp_path / "fw"
    shutil.copytree(builds["cli"], out)
    before = snapshot(out)
    monkeypatch.setenv("MCUFLOW_CROSS_PREFIX", "no-such-toolchain-")
    with pytest.raises(device.DeviceError, match="toolchain"):
        device.build(builds["decoy"], BOARD, out)
    assert snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["fw"]  # no staging directory left behind


def test_a_build_never_replaces_a_directory_holding_other_files(builds, tmp_path):
    out = tmp_path / "project"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    with pytest.raises(device.DeviceError, match="notes.txt"):
        device.build(builds["decoy"], BOARD, out)
    assert snapshot(out) == {"notes.txt": b"mine\n"}
