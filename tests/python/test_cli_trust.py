"""What a new user (or a careless one) does wrong on the command line: inputs matched by name,
outputs never over inputs, useless programs named, and mistakes reported before any work."""

import importlib
import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import mcuflow
from test_cli import assert_user_error, mcuflow as run_cli

V = importlib.import_module("mcuflow.validate")  # `mcuflow.validate` is the function


class AMinusTwoB(torch.nn.Module):
    """Two inputs that give a different answer when swapped."""

    def forward(self, a, b):
        return torch.relu(a - 2.0 * b)


class Wide(torch.nn.Module):
    """A single linear layer large enough to show plan and program sizes."""

    def __init__(self, features: int):
        super().__init__()
        self.fc = torch.nn.Linear(features, features)

    def forward(self, x):
        return self.fc(x)


@pytest.fixture(scope="module")
def two_inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("two_inputs")
    example = (torch.zeros(1, 8), torch.zeros(1, 8))
    torch.export.save(torch.export.export(AMinusTwoB(), example), d / "ab.pt2")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 16, 8)).astype(np.float32)
    np.savez(d / "calib.npz", a=a, b=b)  # one array per input, the documented form
    assert run_cli("compile", d / "ab.pt2", "--precision", "fp32", "-o", d / "ab32.mfp").returncode == 0
    return d, a, b


def expected(a, b):
    return np.maximum(a - 2.0 * b, 0.0)


# --- 4: inputs matched by name ------------------------------------------------------------

def test_cli_calibrates_a_two_input_model_from_one_array_per_input(two_inputs):
    d, a, b = two_inputs
    r = run_cli("compile", d / "ab.pt2", "--calibration", d / "calib.npz", "-o", d / "ab.mfp")
    assert r.returncode == 0, r.stderr
    program = mcuflow.Program.load(d / "ab.mfp")
    assert [spec["name"] for spec in program.inputs] == ["a", "b"]
    assert np.max(np.abs(program.run([a, b])[0] - expected(a, b))) < 0.1  # int8 steps of about 0.03


def test_run_matches_npz_arrays_to_inputs_by_name_not_file_order(two_inputs):
    d, a, b = two_inputs
    np.savez(d / "swapped.npz", b=b[:3], a=a[:3])  # file order b, a
    r = run_cli("run", d / "ab32.mfp", "--input", d / "swapped.npz", "-o", d / "y.npz")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(d / "y.npz")["output_0"], expected(a[:3], b[:3]), atol=1e-6)
    # unnamed arrays (np.savez(path, x, y)) go in file order
    np.savez(d / "positional.npz", a[:3], b[:3])
    assert run_cli("run", d / "ab32.mfp", "--input", d / "positional.npz", "-o", d / "y.npz").returncode == 0
    np.testing.assert_allclose(np.load(d / "y.npz")["output_0"], expected(a[:3], b[:3]), atol=1e-6)


@pytest.mark.parametrize("arrays, fragments", [
    ({"a": 0, "c": 0}, ["(a, c)", "no array named b", "c names no input"]),
    ({"a": 0}, ["1 array (a)", "the model takes 2 inputs (a, b)", "no array named b"]),
    ({"a": 0, "b": 0, "extra": 0}, ["extra names no input"]),
])
def test_a_name_mismatch_is_one_line(two_inputs, arrays, fragments):
    d, a, _ = two_inputs
    np.savez(d / "bad.npz", **{k: a[:2] for k in arrays})
    for args in (["run", d / "ab32.mfp", "--input", d / "bad.npz", "-o", d / "y.npz"],
                 ["compile", d / "ab.pt2", "--calibration", d / "bad.npz", "-o", d / "bad.mfp"]):
        assert_user_error(run_cli(*args), *fragments)
    assert not (d / "bad.mfp").exists()


def test_validate_takes_evaluation_inputs_by_name(two_inputs):
    d, a, b = two_inputs
    program = mcuflow.Program.load(d / "ab32.mfp")
    request = V.check_request(program, {"b": b, "a": a}, None, "qemu-m55", None, None, 5)
    np.testing.assert_array_equal(request.eval_arrays[0], a)
    np.testing.assert_array_equal(request.eval_arrays[1], b)


def test_an_extra_calibration_array_is_an_error_not_more_samples(tmp_path):
    torch.export.save(torch.export.export(Wide(4), (torch.zeros(1, 4),)), tmp_path / "m.pt2")
    x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    np.savez(tmp_path / "calib.npz", x=x, labels=x)
    assert_user_error(run_cli("compile", tmp_path / "m.pt2", "--calibration", tmp_path / "calib.npz",
                              "-o", tmp_path / "m.mfp"), "labels names no input")
    assert not (tmp_path / "m.mfp").exists()


# --- 5: never over an input ----------------------------------------------------------------

def test_compile_refuses_to_write_over_its_input_model(tmp_path):
    model = tmp_path / "model.pt2"
    torch.export.save(torch.export.export(Wide(4), (torch.zeros(1, 4),)), model)
    before = model.read_bytes()
    assert_user_error(run_cli("compile", model, "--precision", "fp32", "-o", model), "is the model given")
    assert_user_error(run_cli("compile", model, "--precision", "fp32", "-o", tmp_path / "." / "model.pt2"),
                      "is the model given")
    assert model.read_bytes() == before


# --- 8: useless programs are named ----------------------------------------------------------

@pytest.fixture(scope="module")
def wide_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("wide")
    torch.export.save(torch.export.export(Wide(16), (torch.zeros(1, 16),)), d / "m.pt2")
    np.savez(d / "calib.npz", x=np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32))
    return d


@pytest.mark.parametrize("scale, fragment", [(0.0, "held one value in all 8 samples (x = 0"),
                                             (1e30, "beyond 1e12 (x reaches")])
def test_degenerate_calibration_warns_on_stderr_and_in_inspect(wide_model, tmp_path, scale, fragment):
    x = np.load(wide_model / "calib.npz")["x"] * np.float32(scale)
    np.savez(tmp_path / "calib.npz", x=x)
    r = run_cli("compile", wide_model / "m.pt2", "--calibration", tmp_path / "calib.npz", "-o", tmp_path / "m.mfp")
    assert r.returncode == 0, r.stderr
    assert "WARNING" in r.stderr and fragment in r.stderr
    shown = run_cli("inspect", tmp_path / "m.mfp")
    assert fragment in shown.stdout
    assert any(fragment in w for w in json.loads(run_cli("inspect", tmp_path / "m.mfp", "--json").stdout)["warnings"])


def test_an_observer_that_clips_a_large_share_warns(wide_model, tmp_path):
    args = ["compile", wide_model / "m.pt2", "--calibration", wide_model / "calib.npz", "-o", tmp_path / "m.mfp",
            "--observer", "percentile", "--percentile"]
    r = run_cli(*args, "60")
    assert r.returncode == 0 and "saturate more than 1% of their calibration values" in r.stderr, r.stderr
    r = run_cli(*args, "99.99")
    assert r.returncode == 0 and "WARNING" not in r.stderr, r.stderr


def test_representative_calibration_gives_no_warning(wide_model, tmp_path):
    r = run_cli("compile", wide_model / "m.pt2", "--calibration", wide_model / "calib.npz", "-o", tmp_path / "m.mfp")
    assert r.returncode == 0 and "WARNING" not in r.stderr, r.stderr
    assert mcuflow.Program.load(tmp_path / "m.mfp").warnings() == []


def test_a_plan_larger_than_the_named_board_warns(tmp_path):
    class Big(torch.nn.Module):  # a 1x8x96x96 float input and output: 288 KiB live at once
        def forward(self, x):
            return x * 2.0

    torch.export.save(torch.export.export(Big(), (torch.zeros(1, 8, 96, 96),)), tmp_path / "big.pt2")
    r = run_cli("compile", tmp_path / "big.pt2", "--precision", "fp32", "--target", "cortex-m0", "--memory",
                "qemu-m0", "-o", tmp_path / "big.mfp")
    assert r.returncode == 0, r.stderr
    assert "memory plan: region" in r.stderr and "cannot run there" in r.stderr
    assert "memory plan: region" in run_cli("inspect", tmp_path / "big.mfp").stdout


def test_a_program_larger_than_every_board_of_its_core_warns(tmp_path):
    torch.export.save(torch.export.export(Wide(400), (torch.zeros(1, 400),)), tmp_path / "wide.pt2")  # 641 KB
    r = run_cli("compile", tmp_path / "wide.pt2", "--precision", "fp32", "--target", "cortex-m0",
                "-o", tmp_path / "wide.mfp")
    assert r.returncode == 0, r.stderr
    assert "fit no cortex-m0 board's code memory (qemu-m0" in r.stderr
    r = run_cli("compile", tmp_path / "wide.pt2", "--precision", "fp32", "--target", "cortex-m55",
                "-o", tmp_path / "wide55.mfp")
    assert r.returncode == 0 and "WARNING" not in r.stderr, r.stderr


def test_batch_of_zero_and_zero_evaluation_samples_are_user_errors(wide_model, tmp_path):
    assert run_cli("compile", wide_model / "m.pt2", "--precision", "fp32", "-o", tmp_path / "m.mfp").returncode == 0
    np.save(tmp_path / "none.npy", np.zeros((0, 16), np.float32))
    assert_user_error(run_cli("run", tmp_path / "m.mfp", "--input", tmp_path / "none.npy", "-o", tmp_path / "y.npz"),
                      "no samples")
    with pytest.raises(mcuflow.InputError, match="no samples"):
        V.check_request(mcuflow.Program.load(tmp_path / "m.mfp"), np.zeros((0, 16), np.float32), None,
                        "qemu-m55", None, None, 5)


# --- 8: mistakes found before any work ------------------------------------------------------

def cli_in_fresh_process(*args, cwd: Path):
    """The CLI in a new interpreter: its result, whether it imported torch, and the CPU seconds
    it used (not wall time, which other jobs on a shared machine stretch)."""
    code = ("import sys; from mcuflow import cli; rc = cli.main(sys.argv[1:]); "
            "print('torch imported' if 'torch' in sys.modules else 'torch not imported'); sys.exit(rc)")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                       timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_usage_errors_return_at_once_and_create_nothing(wide_model, tmp_path):
    assert run_cli("compile", wide_model / "m.pt2", "--precision", "fp32", "-o", tmp_path / "m.mfp").returncode == 0
    np.save(tmp_path / "eval.npy", np.zeros((4, 16), np.float32))
    (tmp_path / "budgets.toml").write_text("[flash]\nmax_byte = 1\n")
    work = tmp_path / "work"
    work.mkdir()
    model, calib, program = wide_model / "m.pt2", wide_model / "calib.npz", tmp_path / "m.mfp"
    compile_args = ["compile", model, "--calibration", calib]
    cases = [
        (compile_args + ["--target", "cortex-a53", "-o", "m.mfp"], "unknown target 'cortex-a53'"),
        (compile_args + ["--observer", "median", "-o", "m.mfp"], "unknown observer 'median'"),
        (compile_args + ["-o", work / "missing" / "m.mfp"], "does not exist"),
        (compile_args + ["--memory", "qemu-m99", "-o", "m.mfp"], "qemu-m99"),
        (compile_args + ["--patches", "0", "-o", "m.mfp"], "patches"),
        (["validate", "--model", model, "--program", program, "--eval", tmp_path / "eval.npy", "--budgets",
          tmp_path / "budgets.toml", "-o", "record"], "unknown key max_byte in [flash]"),
        (["validate", "--model", model, "--program", program, "--eval", tmp_path / "eval.npy", "--board",
          "qemu-m99", "-o", "record"], "qemu-m99"),
    ]
    for args, fragment in cases:
        r, seconds = cli_in_fresh_process(*args, cwd=work)
        assert_user_error(r, fragment)
        assert "torch not imported" in r.stdout, (args, r.stdout)
        assert seconds < 3.0, (args, seconds)  # importing torch and loading the model alone take more
    assert list(work.iterdir()) == []
