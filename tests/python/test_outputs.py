"""Outputs are written whole or not at all, with the user's umask, and never over an input."""

import importlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from mcuflow import outputs
from mcuflow import InputError

V = importlib.import_module("mcuflow.validate")  # `mcuflow.validate` is the function


class Killed(BaseException):
    """A SIGKILL: the process stops before the call; no handler, no cleanup runs after it."""


def kill_before_call(monkeypatch, n: int) -> list[str]:
    """Makes the n-th (0-based) rename, replace, exchange or tree removal kill the process."""
    calls: list[str] = []

    def wrap(owner, name):
        real = getattr(owner, name)

        def killing(*args, **kwargs):
            calls.append(name)
            if len(calls) - 1 == n:
                raise Killed
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, killing)

    wrap(os, "rename")
    wrap(os, "replace")
    wrap(shutil, "rmtree")
    wrap(outputs, "_exchange")
    return calls


def write_record(target, text: str) -> None:
    record = V.RecordWriter(target)
    record.write_text("report.txt", text)
    record.commit({"format": V.RECORD_FORMAT, "report": text})


def complete_record_text(target) -> str:
    manifest = json.loads((target / V.MANIFEST).read_text())
    for name, digest in manifest["files"].items():
        assert V.file_sha256(target / name) == digest, name
    return manifest["report"]


def test_a_record_commit_killed_at_any_step_leaves_the_old_or_the_new_record(tmp_path, monkeypatch):
    target = tmp_path / "record"
    steps = 0
    while True:
        shutil.rmtree(tmp_path)
        tmp_path.mkdir()
        write_record(target, "old")
        with monkeypatch.context() as m:
            calls = kill_before_call(m, steps)
            try:
                write_record(target, "new")
                finished = True
            except Killed:
                finished = False
        assert complete_record_text(target) in ("old", "new"), f"killed before call {steps} of {calls}"
        if finished:
            assert complete_record_text(target) == "new"
            break
        steps += 1


def test_outputs_get_the_users_umask(tmp_path, small_program):
    previous = os.umask(0o027)
    try:
        small_program.save(tmp_path / "m.mfp")
        write_record(tmp_path / "record", "r")
        outputs.write_file(tmp_path / "f.bin", b"x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "m.mfp").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "f.bin").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "record").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "record" / "report.txt").stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "y.npz"
    target.write_bytes(b"old")

    def fails(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        outputs.write_file(target, fails)
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["y.npz"]


@pytest.fixture(scope="module")
def small_program():
    import torch

    import mcuflow

    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * 2.0

    ep = torch.export.export(Scale(), (torch.zeros(1, 4),))
    return mcuflow.compile(ep, target="cortex-m55", precision="fp32")


def test_refuses_an_output_that_is_an_input(tmp_path):
    model = tmp_path / "model.pt2"
    model.write_bytes(b"user's model")
    os.symlink(model, tmp_path / "link.pt2")
    for output in (model, tmp_path / "link.pt2", tmp_path / "." / "model.pt2"):
        with pytest.raises(InputError, match="is the model given to this command"):
            outputs.refuse_overwriting_inputs(output, {"the model": model})
    with pytest.raises(InputError, match="holds the model"):
        outputs.refuse_overwriting_inputs(tmp_path, {"the model": model})
    outputs.refuse_overwriting_inputs(tmp_path / "other.mfp", {"the model": model})
    assert model.read_bytes() == b"user's model"


WRITER = """
import sys, time
from mcuflow import outputs

def stall(f):
    f.write(b"half")
    f.flush()
    print("writing", flush=True)
    time.sleep(600)

kind, target = sys.argv[1], sys.argv[2]
if kind == "file":
    outputs.write_file(target, stall)
else:
    outputs.staging_dir(target)
    print("writing", flush=True)
    time.sleep(600)
"""


def start_writer(kind: str, target) -> subprocess.Popen:
    """A process stopped in the middle of writing ``target`` (a file, or a staging directory)."""
    p = subprocess.Popen([sys.executable, "-c", WRITER, kind, str(target)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "writing\n"
    return p


def age(paths, seconds: float) -> None:
    then = time.time() - seconds
    for p in paths:
        os.utime(p, (then, then))


def test_the_next_write_removes_what_killed_writers_left_and_nothing_else(tmp_path):
    target = tmp_path / "out.bin"
    for kind in ("file", "dir"):
        killed = start_writer(kind, target)
        killed.kill()  # SIGKILL: no handler runs, the temporary stays
        killed.wait()
    stale = set(tmp_path.iterdir())
    assert len(stale) == 2 and any(p.is_dir() for p in stale)
    live = start_writer("file", target)
    try:
        (live_temporary,) = set(tmp_path.iterdir()) - stale
        others = [tmp_path / n for n in (".out.bin.short.tmp", ".other.bin.abcdefgh.tmp", ".out.bin.abcdefgh.tmp.1",
                                         "out.bin.stopped-abcdefgh")]
        for p in others:
            p.write_bytes(b"someone else's")
        fresh = tmp_path / "out.bin.partial-abcdefgh"  # our pattern, but young: maybe just created, not yet locked
        fresh.mkdir()
        age([*stale, live_temporary, *others], 2 * outputs.STALE_SECONDS)

        outputs.write_file(target, b"whole")

        assert target.read_bytes() == b"whole"
        assert set(tmp_path.iterdir()) == {target, live_temporary, fresh, *others}
        age([fresh], 2 * outputs.STALE_SECONDS)
        outputs.write_file(target, b"again")
        assert set(tmp_path.iterdir()) == {target, live_temporary, *others}
    finally:
        live.kill()
        live.wait()
