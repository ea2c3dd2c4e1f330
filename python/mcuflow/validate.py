"""Numerical validation and the deployment gate: ``mcuflow validate``.

One evaluation set, serialized once, goes through four stages — PyTorch eager, the exported
float graph (the FP32 mcuflow program of the same exported model, on the host runtime), the
quantized program on the host runtime, and the quantized program on a board — and four
comparisons between them: (1) eager vs float graph, (2) float graph vs quantized host, (3)
quantized host vs board, which must be bit-exact, (4) eager vs board. Flash, static RAM and
latency of the board's firmware and the quality figures are checked against a TOML budgets file,
one PASS/FAIL line each. Everything lands in a record directory that appears only when complete
(docs/validation.md describes the record and the budgets file).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .api import CALIBRATION_SAMPLES_KEY, Program, compile as compile_program, sample_hash
from .errors import InputError, McuflowError
from .inputs import file_sha256
from .outputs import commit_dir, release_dir, staging_dir
from .progress import PROGRESS_MIN_SAMPLES, Progress

RECORD_FORMAT = "mcuflow-validation-record"
RECORD_VERSION = 1
MANIFEST = "record.json"  # written last: a directory without it is not a record
STREAM = "results.jsonl"  # events appended while the run goes on
BOARD_CHUNK_SAMPLES = 256  # inputs per emulator run: bounds what an interruption loses
HOST_CHUNK_SAMPLES = 1024  # inputs per batched Program.run (all cores): progress moves between them
DRILLDOWN_SAMPLES = 32
DRILLDOWN_SHOWN = 5
DEFAULT_FLOAT_TOLERANCE = 1e-4  # (1): eager and our float kernels sum in different orders
DEFAULT_BOARD_TIMEOUT_S = 300.0

STAGES = {
    "eager": "PyTorch eager",
    "float_graph": "float graph",
    "quantized_host": "quantized host",
    "board": "board",
}


@dataclass(frozen=True)
class ComparisonSpec:
    key: str
    label: str
    first: str
    second: str
    bit_exact: bool = False


COMPARISONS = (
    ComparisonSpec("1", "(1) eager vs float graph", "eager", "float_graph"),
    ComparisonSpec("2", "(2) float graph vs quantized host", "float_graph", "quantized_host"),
    ComparisonSpec("3", "(3) quantized host vs board", "quantized_host", "board", bit_exact=True),
    ComparisonSpec("4", "(4) eager vs board", "eager", "board"),
)

BUDGET_KEYS = {
    "flash": {"max_bytes"},
    "ram": {"max_bytes"},
    "quality": {"min_accuracy", "max_accuracy_drop", "min_top1_agreement", "max_abs_error", "max_float_abs_error"},
}
LATENCY_KEYS = {"max_median_instructions", "max_median_cycles"}


class CalibrationReuseWarning(UserWarning):
    """Evaluation samples that were also calibration samples: the evaluation is not independent."""


@dataclass
class Verdict:
    passed: bool
    line: str


@dataclass
class ValidationResult:
    """What ``validate`` found. ``report`` is the text the CLI prints."""
    passed: bool
    verdicts: list[Verdict]
    comparisons: dict[str, dict]
    accuracy: dict[str, float] | None
    drilldown: list[dict]
    measurements: dict
    calibration_overlap: list[int] | None  # None: the program records no calibration hashes
    outputs: dict[str, list[np.ndarray]]  # stage -> per output, shaped (inputs, *output shape)
    report: str
    record_dir: Path | None = None
    warnings: list[str] = field(default_factory=list)


# --- measurements, as `mcuflow size` and `mcuflow bench` take them --------------------------

def firmware_footprint(firmware) -> dict:
    """Flash occupied (text + data) and static RAM (data + bss: the arena, the reserved stack and
    heap included) of a firmware build, from its ELF and linker map (``measure.analyze``, what
    ``mcuflow size`` prints); ``size_report`` is that full report, by component."""
    from .measure import analyze

    report, _ = analyze(firmware.elf, firmware.map, firmware.info or None)
    return {"flash_bytes": report["flash"]["total"], "static_ram_bytes": report["ram"]["static_total"],
            "arena_bytes": sum(report["ram"]["arena"].values()), "stack_reserved": report["ram"]["stack_reserved"],
            "size_report": report}


def latency_summary(instructions: Sequence[int]) -> dict:
    """Median, p90, p99, min and max of the per-input instruction counts (``bench.summarize``)."""
    from .bench import summarize

    return {"unit": "instructions (QEMU)", **summarize([int(c) for c in instructions])}


def _number(value) -> str:
    """An integral figure without a fractional part (a median of two counts may end in .5)."""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


# --- the board stage (tests replace run_board_chunk) ---------------------------------------

def build_board_firmware(program: Program, board: str):
    from .device import cached_build

    return cached_build(program, board)


def run_board_chunk(firmware, program: Program, samples: list[list[np.ndarray]], board: str,
                    timeout: float) -> tuple[list[list[np.ndarray]], list[int]]:
    """Board outputs (per input, per output) and per-input instruction counts for one chunk."""
    from .device import run_elf_on_inputs

    return run_elf_on_inputs(firmware, program, samples, board, timeout)


# --- small helpers -------------------------------------------------------------------------

def arrays_sha256(arrays: Sequence[np.ndarray]) -> str:
    """SHA-256 over dtype, shape and bytes of each array: equal data, equal hash, whatever file held it."""
    digest = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(f"{a.dtype.str}{a.shape}".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def index_ranges(indices: Sequence[int]) -> str:
    """[1, 2, 3, 7] -> "1-3, 7": every index, compactly."""
    runs: list[list[int]] = []
    for i in sorted(indices):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


# --- the record directory ------------------------------------------------------------------

def is_record(path: Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def check_record_target(target: Path) -> None:
    """A record may replace only a record or an empty directory."""
    if target.exists() and not (target.is_dir() and (is_record(target) or not any(target.iterdir()))):
        raise InputError(f"{target} exists and is not a validation record: choose another -o directory")


class RecordWriter:
    """Builds a record in ``<target>.partial-XXXX`` beside the target, streaming results into it,
    and renames it into place only when complete. With ``target=None`` nothing is written."""

    def __init__(self, target: str | os.PathLike | None):
        self.target = Path(target) if target is not None else None
        self.dir: Path | None = None
        self._stream = None
        if self.target is None:
            return
        check_record_target(self.target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.dir = staging_dir(self.target, prefix=f"{self.target.name}.partial-")
        self._stream = open(self.dir / STREAM, "a")

    def event(self, **fields) -> None:
        if self._stream:
            self._stream.write(json.dumps(fields, default=_json_default) + "\n")
            self._stream.flush()

    def array(self, name: str, shape: tuple, dtype) -> np.ndarray:
        """An output array streamed to ``outputs/<name>.npy`` (rows filled as stages advance)."""
        if self.dir is None:
            return np.zeros(shape, dtype)
        (self.dir / "outputs").mkdir(exist_ok=True)
        return np.lib.format.open_memmap(self.dir / "outputs" / f"{name}.npy", mode="w+", dtype=dtype, shape=shape)

    def path(self, name: str) -> Path | None:
        if self.dir is None:
            return None
        p = self.dir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def write_json(self, name: str, obj) -> None:
        if self.dir is not None:
            self.path(name).write_text(json.dumps(obj, indent=1, default=_json_default) + "\n")

    def write_text(self, name: str, text: str) -> None:
        if self.dir is not None:
            self.path(name).write_text(text)

    def copy(self, source: Path, name: str) -> None:
        if self.dir is not None:
            shutil.copyfile(source, self.path(name))

    def commit(self, manifest: dict) -> Path | None:
        """Hashes every file into the manifest, writes it last, then swaps the directory in
        (outputs.commit_dir: the old record or the new one is at the target whenever killed)."""
        if self.dir is None:
            return None
        self._stream.close()
        files = sorted(p for p in self.dir.rglob("*") if p.is_file())
        manifest["files"] = {str(p.relative_to(self.dir)): file_sha256(p) for p in files}
        self.write_json(MANIFEST, manifest)
        commit_dir(self.dir, self.target)
        return self.target

    def abandon(self) -> None:
        """Keeps what was measured, renamed ``<target>.stopped-XXXX`` (no manifest: not a record),
        where the next write's clean-up of killed writers' partial directories leaves it."""
        if self.dir is None:
            return
        self._stream.close()
        kept = self.dir.with_name(self.dir.name.replace(".partial-", ".stopped-", 1))
        os.rename(self.dir, kept)
        release_dir(self.dir)
        print(f"mcuflow validate: stopped; what was measured so far is in {kept} (not a record)", file=sys.stderr)


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


# --- inputs --------------------------------------------------------------------------------

def _eval_samples(eval_inputs, program: Program) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """The evaluation arrays (one per input) and their samples, each exactly as the program takes it."""
    if hasattr(eval_inputs, "files") and not isinstance(eval_inputs, Mapping):  # an open NpzFile
        eval_inputs = {k: eval_inputs[k] for k in eval_inputs.files}
    arrays, count, batched = program._batched_inputs(eval_inputs)  # a dict: by input name
    arrays = [np.ascontiguousarray(a) for a in arrays]
    for i, a in enumerate(arrays):
        finite = np.isfinite(a.reshape(count if batched else 1, -1)).all(axis=1)
        if not finite.all():
            raise InputError(f"evaluation input {i} of sample {int(np.argmin(finite))} contains NaN or Inf")
    samples = [[a[k:k + 1] if batched else a for a in arrays] for k in range(count)]
    return arrays, samples


def _check_labels(labels, count: int) -> np.ndarray | None:
    if labels is None:
        return None
    labels = np.asarray(labels.detach().cpu().numpy() if hasattr(labels, "detach") else labels)
    if labels.ndim != 1 or len(labels) != count or not np.issubdtype(labels.dtype, np.integer):
        raise InputError(f"labels must be {count} integers (one per evaluation input), got {labels.dtype} "
                         f"shape {list(labels.shape)}")
    return labels


def load_budgets(budgets) -> tuple[dict, str | None]:
    """Budgets from a TOML path or an already parsed dict (checked key by key); and the TOML text."""
    if budgets is None:
        return {}, None
    text = None
    if isinstance(budgets, (str, os.PathLike)):
        try:
            import tomllib
        except ImportError:
            raise InputError("budgets files need Python 3.11 or newer (tomllib)") from None
        try:
            text = Path(budgets).read_text()
            budgets = tomllib.loads(text)
        except OSError as e:
            raise InputError(f"cannot read budgets file {budgets}: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"budgets file {budgets} is not valid TOML: {e}") from None
    if not isinstance(budgets, Mapping):
        raise InputError(f"budgets must be a TOML file or a dict, got {type(budgets).__name__}")
    for section, table in budgets.items():
        if section == "latency":
            if not isinstance(table, Mapping) or not all(isinstance(t, Mapping) for t in table.values()):
                raise InputError('budgets: [latency] holds one table per board, e.g. [latency.qemu-m55]')
            for board, limits in table.items():
                _check_budget_table(f"latency.{board}", limits, LATENCY_KEYS)
        elif section in BUDGET_KEYS:
            _check_budget_table(section, table, BUDGET_KEYS[section])
        else:
            raise InputError(f"budgets: unknown section [{section}] (known: flash, ram, latency, quality)")
    return dict(budgets), text


def _check_budget_table(name: str, table, allowed: set[str]) -> None:
    if not isinstance(table, Mapping):
        raise InputError(f"budgets: {name} must be a table")
    for key, value in table.items():
        if key not in allowed:
            raise InputError(f"budgets: unknown key {key} in [{name}] (known: {', '.join(sorted(allowed))})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise InputError(f"budgets: [{name}] {key} must be a number, got {value!r}")


# --- stages --------------------------------------------------------------------------------

def _as_output_list(result) -> list:
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


def _run_eager(eager, samples, out, progress, record) -> None:
    import torch

    progress.start(STAGES["eager"])
    # One sample at a time gains nothing from intra-op threads, and they crawl on a busy machine.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _eager_outputs(eager, samples, out, progress)
    finally:
        torch.set_num_threads(threads)
    record.event(stage="eager", done=len(samples))


def _eager_outputs(eager, samples, out, progress) -> None:
    import torch

    with torch.no_grad():
        for k, sample in enumerate(samples):
            results = _as_output_list(eager(*[torch.from_numpy(x) for x in sample]))
            if len(results) != len(out):
                raise InputError(f"the eager model returns {len(results)} output(s); the program has {len(out)}")
            for j, (r, o) in enumerate(zip(results, out)):
                r = r.detach().cpu().numpy() if hasattr(r, "detach") else np.asarray(r)
                if r.shape != o.shape[1:]:
                    raise InputError(f"eager output {j} has shape {list(r.shape)}; the program's has "
                                     f"{list(o.shape[1:])} (was the program compiled from this model?)")
                o[k] = r
            progress.advance(1)


def _run_host(program: Program, stage: str, samples, out, progress, record) -> None:
    progress.start(STAGES[stage])
    for start in range(0, len(samples), HOST_CHUNK_SAMPLES):
        chunk = samples[start:start + HOST_CHUNK_SAMPLES]
        batch = [np.concatenate(column) for column in zip(*chunk)]
        for o, r in zip(out, program.run(batch)):
            o[start:start + len(chunk)] = r.reshape(len(chunk), *o.shape[1:])
        progress.advance(len(chunk))
    record.event(stage=stage, done=len(samples))


def _run_board(program: Program, board: str, samples, out, progress, record, timeout: float):
    progress.note(f"mcuflow validate: building the firmware for {board} (reused when cached)")
    firmware = build_board_firmware(program, board)
    progress.start(f"{STAGES['board']} {board}")
    instructions: list[int] = []
    for start in range(0, len(samples), BOARD_CHUNK_SAMPLES):
        chunk = samples[start:start + BOARD_CHUNK_SAMPLES]
        outputs, counts = run_board_chunk(firmware, program, chunk, board, timeout)
        if len(outputs) != len(chunk) or len(counts) != len(chunk):
            raise McuflowError(f"{board}: the firmware reported {len(outputs)} outputs and {len(counts)} "
                               f"instruction counts for {len(chunk)} inputs")
        for k, sample_outputs in enumerate(outputs):
            for o, r in zip(out, sample_outputs):
                o[start + k] = r
        for o in out:
            if hasattr(o, "flush"):
                o.flush()
        instructions += [int(c) for c in counts]
        record.event(stage="board", done=start + len(chunk), instructions=[int(c) for c in counts])
        progress.advance(len(chunk))
    return firmware, instructions


# --- comparisons ---------------------------------------------------------------------------

def is_classifier(program: Program) -> bool:
    """One output of shape [1, classes] (or [classes]) with at least two classes."""
    shapes = [o["shape"] for o in program.outputs]
    return len(shapes) == 1 and shapes[0][-1] >= 2 and int(np.prod(shapes[0])) == shapes[0][-1]


def _top1(outputs: list[np.ndarray]) -> np.ndarray:
    return np.argmax(outputs[0].reshape(len(outputs[0]), -1), axis=1)


def compare(first: list[np.ndarray], second: list[np.ndarray], *, tolerance: float | None, bit_exact: bool,
            classifier: bool, worst: int) -> dict:
    """Errors between two stages' outputs, per input and overall. Mismatches: inputs whose bytes
    differ (bit-exact) or whose largest error exceeds ``tolerance``; None when neither applies."""
    count = len(first[0])
    per_input = np.zeros(count)
    differs = np.zeros(count, dtype=bool)
    abs_sum, elements = 0.0, 0
    for a, b in zip(first, second):
        a2, b2 = np.ascontiguousarray(a).reshape(count, -1), np.ascontiguousarray(b).reshape(count, -1)
        error = np.abs(a2.astype(np.float64) - b2.astype(np.float64))
        per_input = np.fmax(per_input, np.where(np.isnan(error), np.inf, error).max(axis=1, initial=0.0))
        abs_sum += float(np.nansum(error))
        elements += error.size
        if bit_exact:
            differs |= np.any(a2.view(np.uint8) != b2.view(np.uint8), axis=1)
    if tolerance is not None and not bit_exact:
        differs = per_input > tolerance
    order = [i for i in np.argsort(-per_input, kind="stable")[:worst] if per_input[i] > 0]
    result = {
        "max_abs_error": float(per_input.max(initial=0.0)),
        "mean_abs_error": abs_sum / max(elements, 1),
        "bit_exact": bit_exact,
        "tolerance": tolerance,
        "mismatches": [int(i) for i in np.flatnonzero(differs)] if bit_exact or tolerance is not None else None,
        "worst": [{"index": int(i), "max_abs_error": float(per_input[i])} for i in order],
        "top1_agreement": None,
        "top1_disagreements": None,
    }
    if classifier:
        agree = _top1(first) == _top1(second)
        result["top1_agreement"] = float(np.mean(agree))
        result["top1_disagreements"] = [int(i) for i in np.flatnonzero(~agree)]
    return result


def layer_drift(float_program: Program, quantized_program: Program, samples: list[list[np.ndarray]]) -> list[dict]:
    """Per model tensor, in execution order, over ``samples``: the quantized value's error against
    the float graph's — mean and max absolute, relative RMS (‖q − f‖ / ‖f‖) — and ``drift_added``,
    its relative error minus the largest of the tensors it is computed from: where outputs change."""
    sums: dict[int, list[float]] = {}
    order: list[int] = []
    for sample in samples:
        reference, quantized = float_program.trace(sample), quantized_program.trace(sample)
        for ir, f in reference.items():
            if ir not in quantized:
                continue
            if ir not in sums:
                sums[ir] = [0.0, 0.0, 0.0, 0.0, 0]
                order.append(ir)
            error = quantized[ir].astype(np.float64) - f.astype(np.float64)
            s = sums[ir]
            s[0] += float(np.sum(error ** 2))
            s[1] += float(np.sum(f.astype(np.float64) ** 2))
            s[2] += float(np.sum(np.abs(error)))
            s[3] = max(s[3], float(np.max(np.abs(error), initial=0.0)))
            s[4] += error.size
    upstream = _upstream_tensors(float_program)
    names = quantized_program.tensor_names()
    shapes = {t["ir"]: t["shape"] for t in float_program.metadata.get("tensors", []) if t.get("ir", -1) >= 0}
    relative: dict[int, float] = {}
    rows = []
    for ir in order:
        sq_err, sq_ref, abs_err, max_err, count = sums[ir]
        relative[ir] = float(np.sqrt(sq_err / sq_ref)) if sq_ref > 0 else (0.0 if sq_err == 0 else float("inf"))
        inherited = max((relative[u] for u in upstream.get(ir, ()) if u in relative), default=0.0)
        rows.append({"ir": ir, "name": names.get(ir, f"tensor {ir}"), "shape": shapes.get(ir),
                     "mean_abs_error": abs_err / max(count, 1), "max_abs_error": max_err,
                     "relative_error": relative[ir], "drift_added": relative[ir] - inherited})
    return rows


def _upstream_tensors(program: Program) -> dict[int, set[int]]:
    """Compiler tensor id of each op output -> ids of the model tensors its op reads (views resolved)."""
    meta = program.metadata.get("tensors", [])

    def ir_of(index: int) -> int:
        while meta[index].get("alias_of", -1) >= 0:
            index = meta[index]["alias_of"]
        return meta[index].get("ir", -1)

    upstream: dict[int, set[int]] = {}
    for op in program.describe()["ops"]:
        reads = {ir_of(i) for i in op["inputs"]} - {-1}
        for o in op["outputs"]:
            if ir_of(o) >= 0:
                upstream.setdefault(ir_of(o), set()).update(reads)
    return upstream


# --- budgets -------------------------------------------------------------------------------

def check_budgets(budgets: dict, facts: dict, board: str) -> list[Verdict]:
    """One verdict per budget line; figures that cannot be measured fail (a gate never passes
    silently). The bit-exact check of (3) is always the first line."""
    verdicts = [_bit_exact_verdict(facts["comparisons"]["3"], facts["inputs"])]

    def limit(name: str, measured, bound, maximum: bool, fmt: str, unit: str = "") -> None:
        ok = measured <= bound if maximum else measured >= bound
        value = _number(measured) if fmt == "" else f"{measured:{fmt}}"
        sign = ("<=" if ok else ">") if maximum else (">=" if ok else "<")
        shown = f"{bound:d}" if isinstance(bound, int) else f"{bound:g}"
        verdicts.append(Verdict(ok, f"{'PASS' if ok else 'FAIL'} {name}: {value}{unit} {sign} {shown}{unit}"))

    def unmeasurable(name: str, why: str) -> None:
        verdicts.append(Verdict(False, f"FAIL {name}: {why}"))

    sizes = facts["firmware"]
    if "max_bytes" in budgets.get("flash", {}):
        limit("flash (text + data)", sizes["flash_bytes"], budgets["flash"]["max_bytes"], True, "d", " bytes")
    if "max_bytes" in budgets.get("ram", {}):
        limit("static RAM (data + bss, arena and stack included)", sizes["static_ram_bytes"],
              budgets["ram"]["max_bytes"], True, "d", " bytes")
    latency = budgets.get("latency", {})
    if latency:
        name = f"latency {board}"
        limits = latency.get(board)
        if limits is None:
            unmeasurable(name, f"no budget for this board (budgets give {', '.join(latency)})")
        elif "max_median_cycles" in limits:
            unmeasurable(name, "a cycles budget cannot be checked on an emulated board, which counts instructions "
                               "(QEMU); give max_median_instructions")
        elif "max_median_instructions" in limits:
            limit(name + " median", facts["latency"]["median"], limits["max_median_instructions"], True, "",
                  " instructions (QEMU)")
    quality = budgets.get("quality", {})
    accuracy = facts["accuracy"]
    eager_board = facts["comparisons"]["4"]
    for key, bound in quality.items():
        if key == "min_accuracy":
            if accuracy is None:
                unmeasurable("accuracy (board vs labels)", "needs labels (--labels) and a classifier output")
            else:
                limit("accuracy (board vs labels)", accuracy["board"], bound, False, ".4f")
        elif key == "max_accuracy_drop":
            if accuracy is None:
                unmeasurable("accuracy drop (eager - board)", "needs labels (--labels) and a classifier output")
            else:
                limit("accuracy drop (eager - board)", accuracy["eager"] - accuracy["board"], bound, True, ".4f")
        elif key == "min_top1_agreement":
            if eager_board["top1_agreement"] is None:
                unmeasurable("top-1 agreement (eager vs board)", "the model is not a classifier")
            else:
                limit("top-1 agreement (eager vs board)", eager_board["top1_agreement"], bound, False, ".4f")
        elif key == "max_abs_error":
            limit("max abs error (eager vs board)", eager_board["max_abs_error"], bound, True, ".6g")
        elif key == "max_float_abs_error":
            limit("max abs error (eager vs float graph)", facts["comparisons"]["1"]["max_abs_error"], bound, True,
                  ".6g")
    return verdicts


def _bit_exact_verdict(comparison: dict, inputs: int) -> Verdict:
    mismatches = comparison["mismatches"]
    line = f"bit-exact (quantized host vs board): {len(mismatches)} of {inputs} inputs differ"
    if mismatches:
        return Verdict(False, f"FAIL {line}: {index_ranges(mismatches)}")
    return Verdict(True, f"PASS {line}")


# --- the report ----------------------------------------------------------------------------

def _report_text(facts: dict, verdicts: list[Verdict], notes: list[str], budgets_name: str | None) -> str:
    program = facts["program"]
    lines = [f"mcuflow validate: {facts['inputs']} inputs, board {facts['board']}, program {program['precision']} for "
             f"{program['target']} ({program['tier']} tier), {program['bytes']} bytes",
             f"eager model: {facts['eager_model']}"]
    lines += [f"WARNING: {n}" for n in notes]
    lines.append(f"{'comparison':<36} {'max |err|':>11} {'mean |err|':>11} {'top-1 agree':>11}  mismatches")
    for spec in COMPARISONS:
        c = facts["comparisons"][spec.key]
        agree = f"{c['top1_agreement']:.4f}" if c["top1_agreement"] is not None else "-"
        if c["mismatches"] is None:
            mism = "-"
        elif c["bit_exact"]:
            mism = f"{len(c['mismatches'])} (bit-exact required)"
        else:
            mism = f"{len(c['mismatches'])} (tolerance {c['tolerance']:g})"
        lines.append(f"{spec.label:<36} {c['max_abs_error']:>11.4g} {c['mean_abs_error']:>11.4g} {agree:>11}  {mism}")
    if facts["accuracy"]:
        lines.append("accuracy vs labels: " + ", ".join(f"{STAGES[s]} {a:.4f}" for s, a in facts["accuracy"].items()))
    lines.append("worst inputs (index: max |err|):")
    for spec in COMPARISONS:
        worst = facts["comparisons"][spec.key]["worst"]
        listed = ", ".join(f"{w['index']}: {w['max_abs_error']:.4g}" for w in worst)
        lines.append(f"  {spec.label}: {listed or 'none (all outputs equal)'}")
    drift = facts["drilldown"]
    if drift:
        adding = [r for r in drift if r["drift_added"] > 0]
        shown = sorted(sorted(adding, key=lambda r: -r["drift_added"])[:DRILLDOWN_SHOWN], key=drift.index)
        lines.append(f"where (2) drifts: the {len(shown)} layers adding the most relative error, in execution order "
                     f"({facts['drilldown_inputs']} inputs; all {len(drift)} in report.json):")
        for r in shown:
            lines.append(f"  {r['name']:<28} {str(r['shape']):<16} relative {r['relative_error']:.4f} "
                         f"({r['drift_added']:+.4f})  mean |err| {r['mean_abs_error']:.4g}  max |err| "
                         f"{r['max_abs_error']:.4g}")
    sizes, latency = facts["firmware"], facts["latency"]
    lines.append(f"firmware: flash {sizes['flash_bytes']} bytes (text + data), static RAM {sizes['static_ram_bytes']} "
                 f"bytes (data + bss; planned arena {program['arena_bytes']})")
    lines.append(f"latency on {facts['board']}: median {_number(latency['median'])} instructions (QEMU), p90 {latency['p90']}, "
                 f"p99 {latency['p99']}, min {latency['min']}, max {latency['max']} ({latency['runs']} runs)")
    lines.append(f"budgets ({budgets_name or 'none given: only the bit-exact check'}):")
    lines += [v.line for v in verdicts]
    lines.append(f"verdict: {'PASS' if all(v.passed for v in verdicts) else 'FAIL'}")
    return "\n".join(lines)


# --- provenance ----------------------------------------------------------------------------

def _calibration_hashes(program: Program) -> list[str] | None:
    listed = program.metadata.get("source", {}).get(CALIBRATION_SAMPLES_KEY)
    return listed.split() if listed is not None else None


def _save_model(record: RecordWriter, exported_program, model_path) -> str | None:
    """The model archive in the record and its SHA-256 (the user's .pt2 when given)."""
    target = record.path("model.pt2")
    if model_path is not None:
        if target is not None:
            shutil.copyfile(model_path, target)
        return file_sha256(Path(model_path))
    if target is None:
        return None
    import torch

    torch.export.save(exported_program, str(target))
    return file_sha256(target)


# --- the entry point -----------------------------------------------------------------------

@dataclass
class _Run:
    """Everything checked and prepared before the first stage runs."""
    program: Program
    float_program: Program
    exported_program: Any
    eager: Any
    eager_model: str
    eval_arrays: list[np.ndarray]
    samples: list[list[np.ndarray]]
    labels: np.ndarray | None
    classifier: bool
    board: str
    budgets: dict
    budgets_text: str | None
    budgets_name: str | None
    float_tolerance: float
    worst: int
    progress: str  # Progress mode
    timeout: float
    model_path: Path | None


@dataclass
class _Request:
    """What check_request found usable."""
    budgets: dict
    budgets_text: str | None
    eval_arrays: list[np.ndarray]
    samples: list[list[np.ndarray]]
    labels: np.ndarray | None
    classifier: bool


def check_request(program: Program, eval_inputs, labels, board: str, budgets, record_dir, worst: int) -> _Request:
    """Every check that needs neither the model nor a compile (program, board, budgets, record
    directory, evaluation inputs and labels): `mcuflow validate` runs it before loading the model,
    so a mistake is reported in well under a second; validate() runs it first."""
    from .boards import board_named
    from .device import check_board

    if not isinstance(program, Program):
        raise InputError(f"program must be an mcuflow.Program, got {type(program).__name__}")
    for what, specs in (("input", program.inputs), ("output", program.outputs)):
        if any(s["dtype"] != np.float32 and not (what == "input" and s["dtype"] == np.int32) for s in specs):  # ids
            raise InputError(f"validate needs a program with float32 {what}s (compile with io='float32')")
    if worst < 0:
        raise InputError(f"worst must be 0 or more, got {worst}")
    check_board(program, board_named(board))  # before any stage runs: a board that cannot run it is bad input
    budget_table, budgets_text = load_budgets(budgets)
    if record_dir is not None:
        check_record_target(Path(record_dir))
    eval_arrays, samples = _eval_samples(eval_inputs, program)
    labels = _check_labels(labels, len(samples))
    classifier = is_classifier(program)
    if labels is not None and not classifier:
        raise InputError("labels given, but the program's output is not one [1, classes] tensor")
    return _Request(budget_table, budgets_text, eval_arrays, samples, labels, classifier)


def validate(model, exported_program, program: Program, eval_inputs, labels=None, board: str = "qemu-m55",
             budgets=None, record_dir: str | os.PathLike | None = None, *, worst: int = 5,
             float_tolerance: float | None = None, progress: bool | None = None,
             timeout: float = DEFAULT_BOARD_TIMEOUT_S, model_path: str | os.PathLike | None = None) -> ValidationResult:
    """Validates ``program`` (compiled from ``exported_program``) against the eager ``model`` on
    ``eval_inputs`` (one array per input with a leading batch dimension, or a dict/.npz of them).

    ``model``: the nn.Module (eval mode); None uses ``exported_program.module()`` and says so.
    ``budgets``: a TOML path or dict (docs/validation.md). ``record_dir``: where the record goes
    (created atomically; None writes nothing). ``worst``: how many worst inputs to list.
    ``float_tolerance``: largest error of (1) not counted as a mismatch (default: budgets'
    max_float_abs_error, else 1e-4). ``progress``: True a bar on stderr, False nothing; None a
    bar when stderr is a terminal and there are at least 500 inputs, else a line per stage.
    ``model_path``: the .pt2 ``exported_program`` came from.
    """
    if model is not None and getattr(model, "training", False):
        raise InputError("the model is in training mode: call model.eval() before validating")
    request = check_request(program, eval_inputs, labels, board, budgets, record_dir, worst)
    budget_table, eval_arrays, samples, labels = request.budgets, request.eval_arrays, request.samples, request.labels
    if float_tolerance is None:
        float_tolerance = budget_table.get("quality", {}).get("max_float_abs_error", DEFAULT_FLOAT_TOLERANCE)
    float_program = compile_program(exported_program, target=program.metadata.get("target", "cortex-m55"),
                                    precision="fp32")
    if [o["shape"] for o in float_program.outputs] != [o["shape"] for o in program.outputs]:
        raise InputError("the program's outputs differ from the exported model's: was it compiled from this model?")
    if progress is None:
        mode = "bar" if sys.stderr.isatty() and len(samples) >= PROGRESS_MIN_SAMPLES else "lines"
    else:
        mode = "bar" if progress else "off"
    run = _Run(
        program=program, float_program=float_program, exported_program=exported_program,
        eager=model if model is not None else exported_program.module(),
        eager_model=(f"the nn.Module given ({type(model).__name__})" if model is not None else
                     "exported_program.module() (no nn.Module given: eager = the exported module)"),
        eval_arrays=eval_arrays, samples=samples, labels=labels, classifier=request.classifier, board=board,
        budgets=budget_table, budgets_text=request.budgets_text,
        budgets_name=str(budgets) if isinstance(budgets, (str, os.PathLike)) else ("given as a dict" if budgets else None),
        float_tolerance=float_tolerance, worst=worst, progress=mode, timeout=timeout,
        model_path=Path(model_path) if model_path is not None else None)
    record = RecordWriter(record_dir)
    try:
        return _validate(record, run)
    except BaseException:
        record.abandon()
        raise


def _save_inputs_check_provenance(record: RecordWriter, run: _Run, notes: list[str]) -> tuple[str | None, list[int] | None]:
    """Saves the serialized inputs, model and program; returns the model hash and the evaluation
    inputs that are calibration samples (None when the program lists none)."""
    program, samples = run.program, run.samples
    if record.dir is not None:
        np.savez(record.path("eval.npz"), **{f"input_{i}": x for i, x in enumerate(run.eval_arrays)})
        record.write_text("eval_samples.sha256", "".join(sample_hash(s) + "\n" for s in samples))
        if run.labels is not None:
            np.save(record.path("labels.npy"), run.labels)
        program.save(record.path("program.mfp"))
        if run.budgets_text is not None:
            record.write_text("budgets.toml", run.budgets_text)
    model_sha = _save_model(record, run.exported_program, run.model_path)
    compiled_from = program.metadata.get("source", {}).get("model_sha256")
    if model_sha and compiled_from and compiled_from != model_sha:
        notes.append(f"the program was compiled from model SHA-256 {compiled_from[:16]}..., "
                     f"not from the model validated here ({model_sha[:16]}...)")
    calibration = _calibration_hashes(program)
    if calibration is None:
        notes.append("the program records no calibration sample hashes (compiled by an older mcuflow): "
                     "calibration/evaluation overlap not checked")
        return model_sha, None
    known = set(calibration)
    overlap = [k for k, s in enumerate(samples) if sample_hash(s) in known]
    if overlap:
        notes.append(f"{len(overlap)} of {len(samples)} evaluation inputs are calibration samples (by SHA-256): "
                     f"{index_ranges(overlap)}; calibration data must not be reused for evaluation")
        warnings.warn(notes[-1], CalibrationReuseWarning, stacklevel=4)
    return model_sha, overlap


def _validate(record: RecordWriter, run: _Run) -> ValidationResult:
    from .version import __version__, mcuflow_commit
    from .firmware_sources import kernel_tier

    program, samples, board = run.program, run.samples, run.board
    count = len(samples)
    notes: list[str] = []
    # Identical serialized inputs: these arrays, saved as eval.npz, feed every stage.
    eval_hash = arrays_sha256(run.eval_arrays)
    model_sha, overlap = _save_inputs_check_provenance(record, run, notes)
    record.event(stage="inputs", inputs=count, evaluation_sha256=eval_hash, calibration_overlap=overlap)

    progress = Progress(count, run.progress, "validate")
    outputs = {stage: [record.array(f"{stage}_{j}", (count, *spec["shape"]), np.float32)
                       for j, spec in enumerate(program.outputs)] for stage in STAGES}
    _run_eager(run.eager, samples, outputs["eager"], progress, record)
    _run_host(run.float_program, "float_graph", samples, outputs["float_graph"], progress, record)
    _run_host(program, "quantized_host", samples, outputs["quantized_host"], progress, record)
    firmware, instructions = _run_board(program, board, samples, outputs["board"], progress, record, run.timeout)

    comparisons = {}
    for spec in COMPARISONS:
        comparisons[spec.key] = compare(outputs[spec.first], outputs[spec.second],
                                        tolerance=run.float_tolerance if spec.key == "1" else None,
                                        bit_exact=spec.bit_exact, classifier=run.classifier, worst=run.worst)
        record.event(comparison=spec.key, **comparisons[spec.key])
    accuracy = None
    if run.labels is not None:
        accuracy = {stage: float(np.mean(_top1(outputs[stage]) == run.labels)) for stage in STAGES}
    picks = np.unique(np.linspace(0, count - 1, min(count, DRILLDOWN_SAMPLES)).round().astype(int))
    drilldown = layer_drift(run.float_program, program, [samples[k] for k in picks])

    sizes = firmware_footprint(firmware)
    if "size_report" in sizes:
        record.write_json("size.json", sizes.pop("size_report"))
    latency = latency_summary(instructions)
    for name in ("firmware.elf", "firmware.map", "firmware.bin", "build_info.json"):
        if (Path(firmware.out_dir) / name).is_file():
            record.copy(Path(firmware.out_dir) / name, f"firmware/{name}")
    record.write_json("timings.json", {**latency, "instructions": instructions,
                                       "note": "one run per evaluation input, in input order"})

    facts = {
        "inputs": count, "board": board, "eager_model": run.eager_model,
        "program": {"precision": program.precision, "target": program.metadata.get("target"),
                    "tier": program.metadata.get("tier"), "bytes": len(program.data),
                    "arena_bytes": program.arena_bytes, "sha256": hashlib.sha256(program.data).hexdigest()},
        "comparisons": comparisons, "accuracy": accuracy, "drilldown": drilldown, "drilldown_inputs": len(picks),
        "firmware": sizes, "latency": latency,
    }
    verdicts = check_budgets(run.budgets, facts, board)
    passed = all(v.passed for v in verdicts)
    report = _report_text(facts, verdicts, notes, run.budgets_name)
    ops = [{"index": op["index"], "kind": op["kind"], "kernel": op["kernel"], "tier": kernel_tier(op["kernel"]),
            "reason": op["reason"], "source": op["source"], "macs": op["macs"]} for op in program.describe()["ops"]]
    record.write_json("report.json", {**facts, "verdicts": [v.__dict__ for v in verdicts], "passed": passed,
                                      "warnings": notes, "calibration_overlap": overlap,
                                      "budgets": run.budgets, "ops": ops})
    record.write_text("report.txt", report + "\n")
    source = program.metadata.get("source", {})
    calibration = _calibration_hashes(program)
    build_info = json.loads(Path(firmware.build_info).read_text()) if Path(firmware.build_info).is_file() else {}
    import torch

    manifest = {
        "format": RECORD_FORMAT, "version": RECORD_VERSION,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "mcuflow": {"version": __version__, "git_commit": mcuflow_commit()},
        "environment": {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
                        "platform": platform.platform()},
        "model": {"sha256": model_sha, "file": "model.pt2", "eager": run.eager_model},
        "program": {"sha256": facts["program"]["sha256"], "file": "program.mfp", "source": source,
                    "compiler_settings": {"target": program.metadata.get("target"),
                                          "tier": program.metadata.get("tier"), "precision": program.precision,
                                          "header_flags": program.header.get("flags")}},
        "calibration": {"file_sha256": source.get("calibration_sha256"),
                        "sample_hashes": len(calibration) if calibration is not None else None,
                        "evaluation_inputs_reused": overlap},
        "evaluation": {"sha256": eval_hash, "inputs": count, "file": "eval.npz",
                       "labels_sha256": arrays_sha256([run.labels]) if run.labels is not None else None},
        "board": board,
        "firmware": {"compiler": build_info.get("compiler"), "flags": build_info.get("flags"),
                     "mcpu": build_info.get("mcpu"), "git_commit": build_info.get("git_commit")},
        "passed": passed,
    }
    record_path = record.commit(manifest)
    if record_path is not None:
        report += f"\nrecord: {record_path}"
    return ValidationResult(passed=passed, verdicts=verdicts, comparisons=comparisons, accuracy=accuracy,
                            drilldown=drilldown,
                            measurements={"firmware": sizes, "latency": latency, "instructions": instructions},
                            calibration_overlap=overlap,
                            outputs={stage: [np.asarray(o) for o in arrays] for stage, arrays in outputs.items()},
                            report=report, record_dir=record_path, warnings=notes)


# --- compare two records -------------------------------------------------------------------

def load_record(path: str | os.PathLike) -> tuple[dict, dict]:
    path = Path(path)
    if not is_record(path):
        raise InputError(f"{path} is not a complete validation record (no {MANIFEST}; an interrupted run "
                         f"leaves only a {path.name}.stopped-* or {path.name}.partial-* directory)")
    try:
        manifest = json.loads((path / MANIFEST).read_text())
        report = json.loads((path / "report.json").read_text())
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read the validation record {path}: {e}") from None
    if manifest.get("format") != RECORD_FORMAT:
        raise InputError(f"{path}/{MANIFEST} is not an mcuflow validation record")
    return manifest, report


def compare_records(old: str | os.PathLike, new: str | os.PathLike) -> str:
    """What changed from the record ``old`` to ``new``: flash, RAM, latency, accuracy, errors and
    (on the same evaluation data) the board outputs themselves."""
    (old_manifest, old_report), (new_manifest, new_report) = load_record(old), load_record(new)
    lines = [f"mcuflow validate --compare {old} -> {new}"]

    def identity(label: str, before, after) -> None:
        lines.append(f"{label}: unchanged" if before == after else
                     f"{label}: changed (SHA-256 {str(before)[:16]}... -> {str(after)[:16]}...)")

    identity("model", old_manifest["model"]["sha256"], new_manifest["model"]["sha256"])
    identity("program", old_manifest["program"]["sha256"], new_manifest["program"]["sha256"])
    identity("evaluation data", old_manifest["evaluation"]["sha256"], new_manifest["evaluation"]["sha256"])
    identity("firmware.elf", old_manifest["files"].get("firmware/firmware.elf"),
             new_manifest["files"].get("firmware/firmware.elf"))
    if old_manifest["mcuflow"] != new_manifest["mcuflow"]:
        versions = [f"{m['mcuflow']['version']} at {str(m['mcuflow']['git_commit'])[:12]}"
                    for m in (old_manifest, new_manifest)]
        lines.append(f"mcuflow: {versions[0]} -> {versions[1]}")
    if old_report["board"] != new_report["board"]:
        lines.append(f"board: {old_report['board']} -> {new_report['board']}")

    def change(label: str, before, after, fmt: str, unit: str = "") -> None:
        if before is None or after is None:
            shown = [("n/a" if v is None else f"{v:{fmt}}" if fmt else _number(v)) for v in (before, after)]
            lines.append(f"{label}: {shown[0]} -> {shown[1]}{unit}")
            return
        delta = after - before
        share = f", {100 * delta / before:+.1f}%" if before else ""
        if fmt:
            lines.append(f"{label}: {before:{fmt}} -> {after:{fmt}}{unit} ({delta:+{fmt}}{share})")
        else:
            lines.append(f"{label}: {_number(before)} -> {_number(after)}{unit} ({'+' if delta >= 0 else '-'}"
                         f"{_number(abs(delta))}{share})")

    change("flash (text + data)", old_report["firmware"]["flash_bytes"], new_report["firmware"]["flash_bytes"],
           "", " bytes")
    change("static RAM (data + bss)", old_report["firmware"]["static_ram_bytes"],
           new_report["firmware"]["static_ram_bytes"], "", " bytes")
    change("arena", old_report["program"]["arena_bytes"], new_report["program"]["arena_bytes"], "", " bytes")
    change(f"latency median ({new_report['board']})", old_report["latency"]["median"], new_report["latency"]["median"],
           "", f" {new_report['latency']['unit']}")
    old_accuracy, new_accuracy = old_report.get("accuracy") or {}, new_report.get("accuracy") or {}
    for stage in ("eager", "board"):
        if stage in old_accuracy or stage in new_accuracy:
            change(f"accuracy ({STAGES[stage]})", old_accuracy.get(stage), new_accuracy.get(stage), ".4f")
    for spec in COMPARISONS:
        before, after = old_report["comparisons"][spec.key], new_report["comparisons"][spec.key]
        change(f"{spec.label} max |err|", before["max_abs_error"], after["max_abs_error"], ".4g")
        if before["top1_agreement"] is not None and after["top1_agreement"] is not None:
            change(f"{spec.label} top-1 agreement", before["top1_agreement"], after["top1_agreement"], ".4f")
    if old_manifest["evaluation"]["sha256"] == new_manifest["evaluation"]["sha256"]:
        lines += _output_changes(Path(old), Path(new), len(new_report["comparisons"]["3"]["worst"]))
    else:
        lines.append("outputs: not compared (the evaluation data differ)")
    lines.append(f"verdict: {'PASS' if old_report['passed'] else 'FAIL'} -> {'PASS' if new_report['passed'] else 'FAIL'}")
    return "\n".join(lines)


def _output_changes(old: Path, new: Path, worst: int) -> list[str]:
    lines = []
    for stage in ("quantized_host", "board"):
        names = sorted(p.name for p in (new / "outputs").glob(f"{stage}_*.npy"))
        if not names or any(not (old / "outputs" / n).is_file() for n in names):
            lines.append(f"{STAGES[stage]} outputs: not comparable (different outputs)")
            continue
        before = [np.load(old / "outputs" / n) for n in names]
        after = [np.load(new / "outputs" / n) for n in names]
        if any(b.shape != c.shape for b, c in zip(before, after)):
            lines.append(f"{STAGES[stage]} outputs: not comparable (shapes differ)")
            continue
        c = compare(before, after, tolerance=None, bit_exact=True, classifier=False, worst=worst)
        changed = c["mismatches"]
        if not changed:
            lines.append(f"{STAGES[stage]} outputs: identical on all {len(before[0])} inputs")
            continue
        lines.append(f"{STAGES[stage]} outputs: {len(changed)} of {len(before[0])} inputs changed, max |old - new| "
                     f"{c['max_abs_error']:.4g}, mean {c['mean_abs_error']:.4g}; most changed: "
                     + ", ".join(f"{w['index']}: {w['max_abs_error']:.4g}" for w in c["worst"]))
    return lines
