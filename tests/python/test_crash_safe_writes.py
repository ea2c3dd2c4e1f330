"""Writers killed with SIGKILL at random moments leave the previous output intact or the new one
whole, and a command that fails leaves what the user had as it was."""

import importlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import kill_writers
from models import make_model
from test_cli import mcuflow as run_cli

V = importlib.import_module("mcuflow.validate")  # `mcuflow.validate` is the function

ROUNDS = 60


def file_version(path: Path):
    """(r, k) when ``path`` holds version (r, k) whole, else None."""
    data = path.read_bytes()
    header = data.split(b"\n", 1)[0].split()
    if len(header) != 3 or header[0] != b"version":
        return None
    r, k = int(header[1]), int(header[2])
    return (r, k) if data == kill_writers.content(r, k) else None


def record_version(path: Path):
    """(r, k) when ``path`` is a whole record of version (r, k): every file its manifest lists,
    with that hash, and the payload of that version."""
    manifest_path = path / V.MANIFEST
    if not manifest_path.is_file():
        return None
    manifest = json.loads(manifest_path.read_text())
    files = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and p.name != V.MANIFEST)
    if files != sorted(manifest["files"]) or any(V.file_sha256(path / n) != d for n, d in manifest["files"].items()):
        return None
    r, k = manifest["version"]
    payload = np.load(path / "outputs" / "payload.npy").tobytes()
    text = (path / "report.txt").read_text()
    return (r, k) if payload == kill_writers.content(r, k) and text == f"version {r} {k}\n" else None


@pytest.mark.parametrize("kind,version_of", [("file", file_version), ("record", record_version)])
def test_a_writer_killed_at_random_moments_leaves_the_old_output_or_the_new_one_whole(tmp_path, kind, version_of):
    seed = random.randrange(1 << 30)
    print(f"kill_writers seed {seed}")  # shown by pytest when the test fails: rerun with it
    target, snapshots = tmp_path / "out" / "target", tmp_path / "snapshots"
    target.parent.mkdir()
    snapshots.mkdir()
    helper = Path(kill_writers.__file__)
    subprocess.run([sys.executable, helper, kind, target, snapshots, str(ROUNDS), str(seed)], check=True, timeout=300)
    previous = version_of(snapshots / "0")
    assert previous == (0, 0)
    kept = replaced = cut_mid_write = 0
    left_before = set()
    for r in range(1, ROUNDS + 1):
        version = version_of(snapshots / str(r))
        assert version is not None, f"seed {seed}, round {r}: the target is not a whole version"
        assert version == previous or (version[0] == r and version[1] >= 1), \
            f"seed {seed}, round {r}: {version} is neither the previous {previous} nor one of this round's"
        kept += version == previous
        replaced += version != previous
        left = set(json.loads(Path(f"{snapshots / str(r)}.left").read_text()))
        cut_mid_write += bool(left - left_before)
        left_before, previous = left, version
    # The kills must land both between and inside writes, or the test proves nothing.
    assert kept and replaced and cut_mid_write, (kept, replaced, cut_mid_write)


# --- a command that fails keeps what the user had -------------------------------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("keeps")
    model = make_model("sin")
    torch.export.save(torch.export.export(model, model.example_input()), d / "sin.pt2")
    scale = torch.export.export(ScaleByTwo(), (torch.zeros(1, 4),))
    torch.export.save(scale, d / "scale.pt2")
    assert run_cli("compile", d / "scale.pt2", "--precision", "fp32", "-o", d / "scale.mfp").returncode == 0
    return d


class ScaleByTwo(torch.nn.Module):
    def forward(self, x):
        return x * 2.0


def tree(path: Path) -> dict:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_compile_that_fails_leaves_the_old_program(files, tmp_path):
    old = tmp_path / "old.mfp"
    old.write_bytes(b"the user's program")
    r = run_cli("compile", files / "sin.pt2", "--precision", "fp32", "--no-fallback", "-o", old)
    assert r.returncode == 1 and "unsupported op" in r.stderr
    assert old.read_bytes() == b"the user's program" and sorted(os.listdir(tmp_path)) == ["old.mfp"]


def test_run_that_fails_leaves_the_old_outputs(files, tmp_path):
    old = tmp_path / "y.npz"
    old.write_bytes(b"the user's outputs")
    np.save(tmp_path / "x.npy", np.zeros((2, 5), np.float32))  # the program takes [1, 4]
    r = run_cli("run", files / "scale.mfp", "--input", tmp_path / "x.npy", "-o", old)
    assert r.returncode == 1
    assert old.read_bytes() == b"the user's outputs"


def test_firmware_build_that_fails_leaves_the_old_directory(files, tmp_path, monkeypatch):
    old = tmp_path / "fw"
    assert run_cli("firmware", files / "scale.mfp", "--board", "qemu-m55", "-o", old).returncode == 0
    before = tree(old)
    monkeypatch.setenv("MCUFLOW_CROSS_PREFIX", "no-such-toolchain-")
    r = run_cli("firmware", files / "scale.mfp", "--board", "qemu-m55", "-o", old)
    assert r.returncode == 1, r.stderr
    assert tree(old) == before and sorted(os.listdir(tmp_path)) == ["fw"]
