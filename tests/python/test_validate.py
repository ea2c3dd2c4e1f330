"""`mcuflow validate` on the digits demo (examples/digits) with its held-out split.

Two tests run the emulated Cortex-M55; the others replace the board with the host runtime
(``FakeBoard``), which is what a bit-exact board must return, so that faults can be injected.
Expected values come from independent host runs and eager PyTorch, never from validate itself.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import struct
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import mcuflow
from mcuflow import cli, device
from mcuflow.crossbuild import toolchain_available
from mcuflow.qemu import qemu_available

V = importlib.import_module("mcuflow.validate")  # `mcuflow.validate` is the function

DIGITS = Path(__file__).resolve().parents[2] / "examples" / "digits"
sys.path.insert(0, str(DIGITS))
import demo  # noqa: E402
from train import accuracy, predict, train  # noqa: E402
from program_bytes import with_crc  # noqa: E402

BOARD = "qemu-m55"
requires_board = pytest.mark.skipif(not (toolchain_available() and qemu_available()),
                                    reason="arm-none-eabi-gcc or qemu-system-arm not installed")


@pytest.fixture(scope="module")
def digits():
    model, splits = train(seed=0)
    exported = torch.export.export(model, (torch.from_numpy(splits.train.images[:1]),))
    calibration = splits.train.images[demo.calibration_indices(splits)]
    program = mcuflow.compile(exported, target="cortex-m55", calibration=calibration)
    return SimpleNamespace(model=model, exported=exported, program=program, splits=splits, calibration=calibration)


def with_classifier_clamp(program: mcuflow.Program, act_max: int) -> mcuflow.Program:
    """The program with the classifier's int8 output clamp lowered to ``act_max`` and its CRC fixed:
    it passes the device's verifier, but inputs with a logit above the clamp now compute otherwise."""
    data = bytearray(program.data)
    # docs/program_format.md: header u32 ops_offset at 32 and params_offset at 40; 28-byte OpRecords
    # with their params_offset at byte 20; kernels/include/mcuflow/kernels/params.h: FcParams.act_max at byte 28.
    ops_offset, params_offset = struct.unpack_from("<I", data, 32)[0], struct.unpack_from("<I", data, 40)[0]
    fc = next(op["index"] for op in program.describe()["ops"] if op["kernel"].startswith("fc_s8"))
    fc_params = struct.unpack_from("<I", data, ops_offset + 28 * fc + 20)[0]
    struct.pack_into("<i", data, params_offset + fc_params + 28, act_max)
    data = with_crc(data)
    return mcuflow.Program(bytes(data))


def median_top_logit(program: mcuflow.Program, images: np.ndarray) -> int:
    """The median over ``images`` of the largest int8 logit: clamping there changes about half."""
    logits = next(t for t in program.describe()["tensors"] if t["name"] == "linear_11")
    top = np.max(program.run(images)[0], axis=1)
    return int(np.median(np.round(top / logits["scale"]) + logits["zero_point"]))


class FakeBoard:
    """Stands in for the emulator: outputs of the host runtime (of ``runs_program`` when set),
    optionally nudged by one float step at ``corrupt`` indices; fixed sizes and counts."""

    def __init__(self, tmp_path: Path):
        self.firmware = SimpleNamespace(elf=tmp_path / "firmware.elf", map=tmp_path / "firmware.map",
                                        out_dir=tmp_path, build_info=tmp_path / "build_info.json", info={})
        self.corrupt: set[int] = set()
        self.runs_program: mcuflow.Program | None = None
        self.instructions = 5000
        self.flash, self.ram = 30_000, 19_000
        self.interrupt_at: int | None = None  # input index whose chunk raises KeyboardInterrupt
        self.done = 0

    def build(self, program, board):
        self.done = 0
        return self.firmware

    def run_chunk(self, firmware, program, samples, board, timeout):
        start, self.done = self.done, self.done + len(samples)
        if self.interrupt_at is not None and start <= self.interrupt_at < self.done:
            raise KeyboardInterrupt
        outputs = [(self.runs_program or program).run(s) for s in samples]
        for k, out in enumerate(outputs):
            if start + k in self.corrupt:
                out[0][0, 0] = np.nextafter(out[0][0, 0], np.float32(np.inf))
        return outputs, [self.instructions] * len(samples)

    def footprint(self, firmware):
        return {"flash_bytes": self.flash, "static_ram_bytes": self.ram, "arena_bytes": 3072, "stack_reserved": 16384}


@pytest.fixture
def fake_board(monkeypatch, tmp_path):
    board = FakeBoard(tmp_path)
    monkeypatch.setattr(V, "build_board_firmware", board.build)
    monkeypatch.setattr(V, "run_board_chunk", board.run_chunk)
    monkeypatch.setattr(V, "firmware_footprint", board.footprint)
    return board


def host_logits(program: mcuflow.Program, images: np.ndarray) -> np.ndarray:
    return program.run(images)[0]


def write_cli_inputs(d, tmp_path: Path, count: int, budgets: str | None = None) -> dict[str, Path]:
    paths = {"model": tmp_path / "digits.pt2", "program": tmp_path / "digits.mfp", "eval": tmp_path / "eval.npz",
             "labels": tmp_path / "labels.npy"}
    torch.export.save(d.exported, paths["model"])
    d.program.save(paths["program"])
    np.savez(paths["eval"], x=d.splits.held_out.images[:count])
    np.save(paths["labels"], d.splits.held_out.labels[:count])
    if budgets is not None:
        paths["budgets"] = tmp_path / "budgets.toml"
        paths["budgets"].write_text(budgets)
    return paths


def cli_args(paths: dict[str, Path], record: Path, *extra: str) -> list[str]:
    args = ["validate", "--model", str(paths["model"]), "--program", str(paths["program"]), "--eval",
            str(paths["eval"]), "--labels", str(paths["labels"]), "--board", BOARD, "-o", str(record)]
    return args + (["--budgets", str(paths["budgets"])] if "budgets" in paths else []) + list(extra)


# --- on the emulated board ------------------------------------------------------------------

@requires_board
def test_digits_pass_the_example_budgets_on_qemu_m55(digits, tmp_path):
    images, labels = digits.splits.held_out.images, digits.splits.held_out.labels
    result = mcuflow.validate(digits.model, digits.exported, digits.program, images, labels, board=BOARD,
                              budgets=DIGITS / "budgets.toml", record_dir=tmp_path / "record")

    assert result.passed, result.report
    lines = [v.line for v in result.verdicts]
    assert all(line.startswith("PASS ") for line in lines)
    for what in ("bit-exact", "flash", "static RAM", f"latency {BOARD} median", "accuracy (board vs labels)",
                 "accuracy drop", "top-1 agreement", "max abs error (eager vs board)",
                 "max abs error (eager vs float graph)"):
        assert any(line.startswith(f"PASS {what}") for line in lines), what
    # (3): the board's bytes are the host runtime's, input by input
    host = host_logits(digits.program, images)
    np.testing.assert_array_equal(result.outputs["board"][0].reshape(host.shape), host)
    assert result.comparisons["3"]["mismatches"] == []
    eager = predict(digits.model, images)
    assert result.accuracy["eager"] == pytest.approx(accuracy(eager, labels))
    assert result.accuracy["board"] == pytest.approx(accuracy(host, labels))
    assert result.comparisons["4"]["max_abs_error"] == pytest.approx(float(np.max(np.abs(eager - host))), rel=1e-6)
    assert result.comparisons["1"]["max_abs_error"] < 1e-4
    assert result.measurements["latency"]["median"] > 0

    record = tmp_path / "record"
    manifest = json.loads((record / "record.json").read_text())
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((record / name).read_bytes()).hexdigest() == digest, name
    for name in ("program.mfp", "model.pt2", "eval.npz", "labels.npy", "firmware/firmware.elf",
                 "firmware/firmware.map", "timings.json", "size.json", "budgets.toml"):
        assert name in manifest["files"], name
    assert (record / "program.mfp").read_bytes() == digits.program.data
    with np.load(record / "eval.npz") as saved:
        np.testing.assert_array_equal(saved["input_0"], images)
    assert manifest["program"]["sha256"] == hashlib.sha256(digits.program.data).hexdigest()
    assert manifest["calibration"]["sample_hashes"] == len(digits.calibration)
    assert manifest["calibration"]["evaluation_inputs_reused"] == []
    timings = json.loads((record / "timings.json").read_text())
    assert len(timings["instructions"]) == len(images)
    assert not list(tmp_path.glob("record.partial-*"))


@requires_board
def test_board_running_an_altered_program_is_caught_by_comparison_3(digits, monkeypatch, tmp_path):
    """The program's bytes change after the host run: the board runs a copy whose classifier clamps
    its output lower; every input whose outputs that changes must be named, and only those."""
    images = digits.splits.held_out.images[:64]
    altered = with_classifier_clamp(digits.program, median_top_logit(digits.program, images))
    firmware = device.cached_build(altered, BOARD)
    monkeypatch.setattr(V, "build_board_firmware", lambda program, board: firmware)
    monkeypatch.setattr(V, "run_board_chunk", lambda fw, program, samples, board, timeout:
                        device.run_elf_on_inputs(fw, altered, samples, board, timeout))

    result = mcuflow.validate(digits.model, digits.exported, digits.program, images, board=BOARD)

    changed = np.flatnonzero(np.any(host_logits(altered, images) != host_logits(digits.program, images), axis=1))
    assert 0 < len(changed) < len(images)
    assert result.comparisons["3"]["mismatches"] == changed.tolist()
    assert not result.passed
    assert result.verdicts[0].line == (f"FAIL bit-exact (quantized host vs board): {len(changed)} of {len(images)} "
                                       f"inputs differ: {V.index_ranges(changed.tolist())}")


# --- with the board replaced by the host runtime --------------------------------------------

def test_a_tight_budget_fails_with_the_exact_line(digits, fake_board, tmp_path, capsys):
    count = 60
    images, labels = digits.splits.held_out.images[:count], digits.splits.held_out.labels[:count]
    board_accuracy = accuracy(host_logits(digits.program, images), labels)
    paths = write_cli_inputs(digits, tmp_path, count, budgets=(
        "[flash]\nmax_bytes = 40000\n"
        f"[latency.{BOARD}]\nmax_median_instructions = 4999\n"
        "[quality]\nmin_accuracy = 0.999\nmin_top1_agreement = 0.9\n"))

    assert cli.main(cli_args(paths, tmp_path / "record")) == cli.EXIT_VALIDATION_FAILED
    out = capsys.readouterr().out.splitlines()
    assert f"FAIL latency {BOARD} median: 5000 instructions (QEMU) > 4999 instructions (QEMU)" in out
    assert f"FAIL accuracy (board vs labels): {board_accuracy:.4f} < 0.999" in out
    assert "PASS flash (text + data): 30000 bytes <= 40000 bytes" in out
    assert f"PASS bit-exact (quantized host vs board): 0 of {count} inputs differ" in out
    assert "verdict: FAIL" in out
    assert "eager model: exported_program.module() (no nn.Module given: eager = the exported module)" in out
    assert json.loads((tmp_path / "record" / "record.json").read_text())["passed"] is False


def test_an_injected_device_mismatch_is_named_by_input_index(digits, fake_board):
    images = digits.splits.held_out.images[:40]
    fake_board.corrupt = {3, 17, 18}

    result = mcuflow.validate(digits.model, digits.exported, digits.program, images, board=BOARD)

    assert result.comparisons["3"]["mismatches"] == [3, 17, 18]
    assert result.verdicts[0].line == "FAIL bit-exact (quantized host vs board): 3 of 40 inputs differ: 3, 17-18"
    assert not result.passed
    assert {w["index"] for w in result.comparisons["3"]["worst"]} == {3, 17, 18}


def test_calibration_samples_in_the_evaluation_set_warn_and_are_recorded(digits, fake_board, tmp_path):
    held_out = digits.splits.held_out.images[:10]
    images = np.concatenate([held_out[:2], digits.calibration[:1], held_out[2:6], digits.calibration[5:7], held_out[6:]])

    with pytest.warns(V.CalibrationReuseWarning, match="3 of 13 evaluation inputs are calibration samples"):
        result = mcuflow.validate(digits.model, digits.exported, digits.program, images, board=BOARD,
                                  record_dir=tmp_path / "record")

    assert result.calibration_overlap == [2, 7, 8]
    assert "WARNING: 3 of 13 evaluation inputs are calibration samples (by SHA-256): 2, 7-8" in result.report
    manifest = json.loads((tmp_path / "record" / "record.json").read_text())
    assert manifest["calibration"]["evaluation_inputs_reused"] == [2, 7, 8]


def test_an_interrupted_run_leaves_the_old_record_and_only_a_partial_directory(digits, fake_board, tmp_path,
                                                                               monkeypatch):
    images = digits.splits.held_out.images[:48]
    record = tmp_path / "record"
    mcuflow.validate(digits.model, digits.exported, digits.program, images, board=BOARD, record_dir=record)
    before = (record / "record.json").read_bytes()
    monkeypatch.setattr(V, "BOARD_CHUNK_SAMPLES", 16)
    fake_board.interrupt_at = 20  # the second chunk

    with pytest.raises(KeyboardInterrupt):
        mcuflow.validate(digits.model, digits.exported, digits.program, images, board=BOARD, record_dir=record)

    assert (record / "record.json").read_bytes() == before
    assert not list(tmp_path.glob("record.partial-*"))
    (partial,) = tmp_path.glob("record.stopped-*")  # kept, out of the way of the clean-up of killed writers
    assert not (partial / "record.json").exists()
    events = [json.loads(line) for line in (partial / "results.jsonl").read_text().splitlines()]
    assert [e.get("stage") for e in events] == ["inputs", "eager", "float_graph", "quantized_host", "board"]
    assert events[-1]["done"] == 16
    streamed = np.load(partial / "outputs" / "board_0.npy")
    np.testing.assert_array_equal(streamed[:16].reshape(16, -1), host_logits(digits.program, images[:16]))
    with pytest.raises(mcuflow.InputError, match="not a complete validation record"):
        V.load_record(partial)


def test_compare_shows_what_changed_between_two_records(digits, fake_board, tmp_path, capsys):
    count = 50
    paths = write_cli_inputs(digits, tmp_path, count)
    assert cli.main(cli_args(paths, tmp_path / "old", "--progress")) == 0
    progress = capsys.readouterr().err
    assert "inputs/s" in progress and "left" in progress
    altered = with_classifier_clamp(digits.program, median_top_logit(digits.program, digits.splits.held_out.images))
    altered.save(paths["program"])
    fake_board.flash, fake_board.instructions = 30_512, 4_800

    assert cli.main(cli_args(paths, tmp_path / "new")) == 0
    lines = capsys.readouterr().err.splitlines()
    assert not [line for line in lines if "inputs/s" in line]  # no bar unless stderr is a terminal or --progress
    assert f"mcuflow validate: quantized host: {count} inputs" in lines  # a line per stage instead
    assert any(line.startswith("mcuflow validate: quantized host: done in ") for line in lines)
    assert cli.main(["validate", "--compare", str(tmp_path / "old"), str(tmp_path / "new")]) == 0

    out = capsys.readouterr().out.splitlines()
    images, labels = digits.splits.held_out.images[:count], digits.splits.held_out.labels[:count]
    old_logits, new_logits = host_logits(digits.program, images), host_logits(altered, images)
    changed = int(np.sum(np.any(old_logits != new_logits, axis=1)))
    assert "program: changed" in " ".join(out)
    assert "evaluation data: unchanged" in out
    assert "flash (text + data): 30000 -> 30512 bytes (+512, +1.7%)" in out
    assert f"latency median ({BOARD}): 5000 -> 4800 instructions (QEMU) (-200, -4.0%)" in out
    old_accuracy, new_accuracy = accuracy(old_logits, labels), accuracy(new_logits, labels)
    assert any(line.startswith(f"accuracy (board): {old_accuracy:.4f} -> {new_accuracy:.4f} "
                               f"({new_accuracy - old_accuracy:+.4f}") for line in out)
    assert any(line.startswith(f"board outputs: {changed} of {count} inputs changed") for line in out)


def test_layer_drift_ends_at_the_output_error(digits):
    """The drill-down's last tensor is the output: its relative error is that of the host outputs."""
    images = digits.splits.held_out.images[:8]
    float_program = mcuflow.compile(digits.exported, target="cortex-m55", precision="fp32")
    rows = V.layer_drift(float_program, digits.program, [[images[k:k + 1]] for k in range(8)])

    f, q = float_program.run(images)[0].astype(np.float64), digits.program.run(images)[0].astype(np.float64)
    assert rows[-1]["relative_error"] == pytest.approx(np.sqrt(np.sum((q - f) ** 2) / np.sum(f ** 2)), rel=1e-6)
    assert rows[-1]["max_abs_error"] == pytest.approx(np.max(np.abs(q - f)), rel=1e-6)
    names = set(digits.program.tensor_names().values())
    assert [r["name"] for r in rows] and all(r["name"] in names for r in rows)
    assert rows[0]["drift_added"] == pytest.approx(rows[0]["relative_error"])


@pytest.mark.parametrize("budgets, message", [
    ("[flash]\nmax_byte = 1\n", "unknown key max_byte in [flash]"),
    ("[speed]\nmax = 1\n", "unknown section [speed]"),
    ("[quality]\nmin_accuracy = 'high'\n", "min_accuracy must be a number"),
    ("[latency]\nmax_median_instructions = 5\n", "one table per board"),
    ("[flash\n", "is not valid TOML"),
])
def test_bad_budgets_are_one_line_errors(digits, tmp_path, capsys, budgets, message):
    paths = write_cli_inputs(digits, tmp_path, 4, budgets=budgets)
    assert cli.main(cli_args(paths, tmp_path / "record")) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not list(tmp_path.glob("record*"))


def test_compare_refuses_what_is_not_a_record(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli.main(["validate", "--compare", str(tmp_path / "empty"), str(tmp_path / "missing")]) == 1
    assert "is not a complete validation record" in capsys.readouterr().err
