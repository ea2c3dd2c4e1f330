"""The `mcuflow` command line: success paths and every kind of bad input (one line, exit 1)."""

import contextlib
import io
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest
import torch

from models import make_model

from mcuflow import cli, progress
from mcuflow.progress import PROGRESS_MIN_SAMPLES


def mcuflow(*args):
    """Runs the CLI in this process (importing torch per call would dominate the suite)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return types.SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def test_the_installed_command_runs_and_reports_errors_in_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mcuflow.cli", "inspect", str(tmp_path / "none.mfp")],
                       capture_output=True, text=True, timeout=300)
    assert_user_error(r, "cannot read")


def assert_user_error(result, *fragments):
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got: {result.stderr}"
    assert lines[0].startswith("mcuflow: error: ")
    assert "Traceback" not in result.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    model = make_model("small_cnn")
    torch.export.save(torch.export.export(model, model.example_input()), d / "model.pt2")
    np.savez(d / "calib.npz", x=model.example_input(seed=1, batch=16)[0].numpy())
    np.save(d / "x.npy", model.example_input(seed=2, batch=3)[0].numpy())
    sin = make_model("sin")
    torch.export.save(torch.export.export(sin, sin.example_input()), d / "sin.pt2")
    assert mcuflow("compile", d / "model.pt2", "--calibration", d / "calib.npz", "-o", d / "model.mfp").returncode == 0
    return d


def test_compile_inspect_run(workdir):
    r = mcuflow("inspect", workdir / "model.mfp", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["precision"] == "int8" and d["target"] == "cortex-m55"
    assert d["arena_bytes"] >= d["arena_lower_bound"] > 0
    assert any(op["kernel"].startswith("conv_s8") for op in d["ops"])
    text = mcuflow("inspect", workdir / "model.mfp")
    assert text.returncode == 0 and "memory plan" in text.stdout and "why:" in text.stdout
    r = mcuflow("run", workdir / "model.mfp", "--input", workdir / "x.npy", "-o", workdir / "y.npz")
    assert r.returncode == 0, r.stderr
    assert np.load(workdir / "y.npz")["output_0"].shape == (3, 10)


def test_unsupported_op_names_the_op_and_the_source_line(workdir):
    r = mcuflow("compile", workdir / "sin.pt2", "--precision", "fp32", "-o", workdir / "sin.mfp")
    assert_user_error(r, "aten.sin", "models.py:")
    assert not (workdir / "sin.mfp").exists()


def calibration_file(workdir, count):
    path = workdir / f"calib{count}.npz"
    if not path.exists():
        np.savez(path, x=make_model("small_cnn").example_input(seed=3, batch=count)[0].numpy())
    return path


def test_compile_draws_a_calibration_bar_only_when_asked_or_on_a_terminal(workdir):
    calib = calibration_file(workdir, PROGRESS_MIN_SAMPLES)
    quiet = mcuflow("compile", workdir / "model.pt2", "--calibration", calib, "-o", workdir / "quiet.mfp")
    assert quiet.returncode == 0 and quiet.stderr == ""  # stderr is no terminal here: a log stays clean
    for observer in ("minmax", "percentile"):  # one pass over the samples whatever the observer
        r = mcuflow("compile", workdir / "model.pt2", "--calibration", calib, "--observer", observer, "--progress",
                    "-o", workdir / "bar.mfp")
        assert r.returncode == 0, r.stderr
        assert r.stderr.startswith("\rcalibration") and r.stderr.endswith("\n") and r.stderr.count("\n") == 1
        runs = PROGRESS_MIN_SAMPLES
        assert f" {runs}/{runs} " in r.stderr.rsplit("\r", 1)[1]  # the last redraw: every sample run counted


def test_compile_on_a_terminal_draws_the_bar(workdir):
    """stderr a pseudo-terminal (in this process: a subprocess would spend its time importing
    torch) and no --progress."""
    import pty
    leader, follower = pty.openpty()
    with open(leader, "rb", buffering=0) as terminal, open(follower, "w") as stderr:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()) as out:
            code = cli.main(["compile", str(workdir / "model.pt2"), "--calibration",
                             str(calibration_file(workdir, PROGRESS_MIN_SAMPLES)), "-o", str(workdir / "tty.mfp")])
        drawn = os.read(terminal.fileno(), 65536)  # the bar is a few hundred bytes: the terminal buffers it all
    assert code == 0, drawn
    assert drawn.startswith(b"\rcalibration") and f" {PROGRESS_MIN_SAMPLES}/{PROGRESS_MIN_SAMPLES} ".encode() in drawn
    assert "wrote" in out.getvalue() and "calibration" not in out.getvalue()


def test_interrupted_calibration_ends_the_bar_line_and_writes_nothing(workdir, monkeypatch):
    """Ctrl-C while the bar is drawn (the callback runs Python with the GIL back, so the signal's
    KeyboardInterrupt surfaces there): it crosses the C++ compiler and stops compile cleanly."""
    def interrupting_advance(self, count):
        advance(self, count)
        raise KeyboardInterrupt

    advance = progress.Progress.advance
    monkeypatch.setattr(progress.Progress, "advance", interrupting_advance)
    r = mcuflow("compile", workdir / "model.pt2", "--calibration", calibration_file(workdir, 2000), "--progress",
                "-o", workdir / "stopped.mfp")
    assert r.returncode == 130
    bar, stopped = r.stderr.rsplit("\n", 2)[:2]
    assert bar.startswith("\rcalibration") and "/2000 " in bar and stopped == "mcuflow: interrupted"
    assert not (workdir / "stopped.mfp").exists()


def test_missing_and_empty_calibration(workdir):
    assert_user_error(mcuflow("compile", workdir / "model.pt2", "-o", workdir / "m.mfp"), "--calibration")
    assert_user_error(mcuflow("compile", workdir / "model.pt2", "--calibration", workdir / "nope.npz",
                              "-o", workdir / "m.mfp"), "does not exist")
    np.savez(workdir / "empty.npz", x=np.zeros((0, 1, 8, 8), np.float32))
    assert_user_error(mcuflow("compile", workdir / "model.pt2", "--calibration", workdir / "empty.npz",
                              "-o", workdir / "m.mfp"), "empty")
    np.savez(workdir / "none.npz")
    assert_user_error(mcuflow("compile", workdir / "model.pt2", "--calibration", workdir / "none.npz",
                              "-o", workdir / "m.mfp"))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_calibration(workdir, bad):
    x = np.random.default_rng(0).standard_normal((4, 1, 8, 8)).astype(np.float32)
    x[2, 0, 3, 3] = bad
    np.savez(workdir / "bad.npz", x=x)
    r = mcuflow("compile", workdir / "model.pt2", "--calibration", workdir / "bad.npz", "-o", workdir / "m.mfp")
    assert_user_error(r, "sample 2")


def test_wrong_input_shape_and_dtype(workdir):
    np.save(workdir / "wrong_shape.npy", np.zeros((2, 1, 7, 8), np.float32))
    assert_user_error(mcuflow("run", workdir / "model.mfp", "--input", workdir / "wrong_shape.npy", "-o",
                              workdir / "y.npz"), "shape")
    np.save(workdir / "wrong_dtype.npy", np.zeros((2, 1, 8, 8), np.int32))
    assert_user_error(mcuflow("run", workdir / "model.mfp", "--input", workdir / "wrong_dtype.npy", "-o",
                              workdir / "y.npz"), "dtype")
    x = np.zeros((2, 1, 8, 8), np.float32)
    x[1, 0, 0, 0] = np.nan
    np.save(workdir / "nan.npy", x)
    assert_user_error(mcuflow("run", workdir / "model.mfp", "--input", workdir / "nan.npy", "-o",
                              workdir / "y.npz"), "NaN")


def test_unreadable_and_foreign_program_files(workdir):
    assert_user_error(mcuflow("inspect", workdir / "missing.mfp"), "cannot read")
    assert_user_error(mcuflow("inspect", workdir / "calib.npz"), "not an mcuflow program")
    data = bytearray((workdir / "model.mfp").read_bytes())
    (workdir / "truncated.mfp").write_bytes(bytes(data[: len(data) // 2]))
    assert_user_error(mcuflow("inspect", workdir / "truncated.mfp"), "truncated")
    data[len(data) // 2] ^= 0xFF
    (workdir / "flipped.mfp").write_bytes(bytes(data))
    assert_user_error(mcuflow("run", workdir / "flipped.mfp", "--input", workdir / "x.npy", "-o", workdir / "y.npz"),
                      "bad_checksum")
    assert_user_error(mcuflow("compile", workdir / "calib.npz", "--calibration", workdir / "calib.npz",
                              "-o", workdir / "m.mfp"), "torch.export")


@pytest.mark.parametrize("args, fragment", [
    (["compile", "m.pt2", "--precision", "int4", "-o", "x.mfp"], "invalid choice: 'int4'"),
    (["compile"], "required: model, -o/--output"),
    (["bogus"], "invalid choice: 'bogus'"),
    ([], "required: command"),
    (["bench", "p.mfp"], "required: --board"),
])
def test_command_line_mistakes_are_one_line_user_errors(args, fragment):
    assert_user_error(mcuflow(*args), fragment, "--help")


def test_unknown_target_and_board(workdir):
    assert_user_error(mcuflow("compile", workdir / "model.pt2", "--calibration", workdir / "calib.npz",
                              "--target", "cortex-a53", "-o", workdir / "m.mfp"), "unknown target", "cortex-m55")
    assert_user_error(mcuflow("run", workdir / "model.mfp", "--input", workdir / "x.npy", "-o", workdir / "y.npz",
                              "--board", "qemu-m99"), "unknown board")


def test_bench_on_a_board_that_cannot_run_the_program_is_one_line_before_any_progress(workdir):
    r = mcuflow("bench", workdir / "model.mfp", "--board", "qemu-m0", "--html", workdir / "bench.html")
    assert_user_error(r, "qemu-m0", "lacks the MVE instructions")
    assert not (workdir / "bench.html").exists()


def test_a_failed_compile_keeps_the_existing_output(workdir):
    target = workdir / "keep.mfp"
    target.write_bytes(b"precious")
    r = mcuflow("compile", workdir / "sin.pt2", "--precision", "fp32", "-o", target)
    assert r.returncode == 1
    assert target.read_bytes() == b"precious"
