"""mcuflow end to end on the 8×8 digits: train a small CNN, compile it to INT8 and FP32 for the
Cortex-M55, run both on the host runtime and on the emulated board (QEMU) over the whole
held-out split, and print accuracy, host/board agreement, sizes and instruction counts.

    .venv/bin/python examples/digits/demo.py

Exits with status 1 when the Arm toolchain or QEMU is missing, or when the INT8 board outputs
are not bit-exact with the host runtime.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

import mcuflow
from mcuflow.crossbuild import FirmwareBuild, toolchain_available
from mcuflow.device import cached_build, run_elf_on_inputs
from mcuflow.qemu import qemu_available

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train import Splits, accuracy, predict, train  # noqa: E402

TARGET = "cortex-m55"
BOARD = "qemu-m55"
CALIBRATION_COUNT = 100
CALIBRATION_SEED = 0
BOARD_TIMEOUT_S = 300.0
PRECISIONS = ("int8", "fp32")


@dataclass
class Evaluation:
    """One precision's results over the held-out split."""
    float_accuracy: float
    host_accuracy: float
    board_accuracy: float
    mismatches: int
    max_abs_difference: float
    float_board_agreement: float
    program_bytes: int
    arena_bytes: int
    median_instructions: int


def missing_tools() -> list[str]:
    missing = [] if toolchain_available() else ["arm-none-eabi-gcc"]
    return missing + ([] if qemu_available() else ["qemu-system-arm"])


def calibration_indices(splits: Splits, count: int = CALIBRATION_COUNT, seed: int = CALIBRATION_SEED) -> np.ndarray:
    """Positions in the training split of the calibration samples (drawn without replacement)."""
    return np.random.default_rng(seed).choice(len(splits.train.labels), size=count, replace=False)


def compile_program(model: torch.nn.Module, splits: Splits, precision: str) -> mcuflow.Program:
    exported = torch.export.export(model, (torch.from_numpy(splits.train.images[:1]),))
    calibration = splits.train.images[calibration_indices(splits)] if precision == "int8" else None
    return mcuflow.compile(exported, target=TARGET, calibration=calibration, precision=precision)


def run_on_board(firmware: FirmwareBuild, program: mcuflow.Program, images: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """One firmware run over the whole batch: logits and per-inference instruction counts."""
    samples = [[images[i:i + 1]] for i in range(len(images))]
    outputs, instructions = run_elf_on_inputs(firmware, program, samples, BOARD, timeout=BOARD_TIMEOUT_S)
    return np.concatenate([out[0] for out in outputs]), instructions


@contextmanager
def timed(timings: dict[str, float], name: str):
    """Records the wall time of a block under `name`."""
    start = time.perf_counter()
    yield
    timings[name] = time.perf_counter() - start


def evaluate(program: mcuflow.Program, float_logits: np.ndarray, splits: Splits, timings: dict) -> Evaluation:
    images, labels = splits.held_out.images, splits.held_out.labels
    with timed(timings, f"{program.precision} host"):
        host_logits = program.run(images)[0]
    with timed(timings, f"{program.precision} firmware build"):
        firmware = cached_build(program, BOARD)
    with timed(timings, f"{program.precision} board run"):
        board_logits, instructions = run_on_board(firmware, program, images)
    differs = np.any(host_logits != board_logits, axis=1)
    return Evaluation(
        float_accuracy=accuracy(float_logits, labels),
        host_accuracy=accuracy(host_logits, labels),
        board_accuracy=accuracy(board_logits, labels),
        mismatches=int(differs.sum()),
        max_abs_difference=float(np.max(np.abs(host_logits - board_logits))),
        float_board_agreement=float(np.mean(np.argmax(float_logits, 1) == np.argmax(board_logits, 1))),
        program_bytes=len(program.data),
        arena_bytes=program.arena_bytes,
        median_instructions=int(np.median(instructions)),
    )


def table(results: dict[str, Evaluation], held_out_count: int) -> str:
    rows = [
        ("float accuracy (eager PyTorch)", lambda e: f"{e.float_accuracy:.4f}"),
        ("host accuracy", lambda e: f"{e.host_accuracy:.4f}"),
        (f"board accuracy ({BOARD})", lambda e: f"{e.board_accuracy:.4f}"),
        ("host-vs-board mismatches", lambda e: f"{e.mismatches} / {held_out_count}"),
        ("max |host - board|", lambda e: f"{e.max_abs_difference:.3g}"),
        ("top-1 agreement float vs board", lambda e: f"{e.float_board_agreement:.4f}"),
        ("program bytes", lambda e: f"{e.program_bytes}"),
        ("arena bytes", lambda e: f"{e.arena_bytes}"),
        ("median instructions (QEMU)", lambda e: f"{e.median_instructions}"),
    ]
    lines = [f"{'':<32}" + "".join(f"{p.upper():>12}" for p in results)]
    lines += [f"{label:<32}" + "".join(f"{cell(e):>12}" for e in results.values()) for label, cell in rows]
    return "\n".join(lines)


def main() -> int:
    missing = missing_tools()
    if missing:
        print(f"demo: {' and '.join(missing)} not found; run `make deps` (or install them) first", file=sys.stderr)
        return 1
    timings: dict[str, float] = {}
    with timed(timings, "training"):
        model, splits = train(seed=0)
    float_logits = predict(model, splits.held_out.images)
    results = {}
    for precision in PRECISIONS:
        with timed(timings, f"{precision} compile"):
            program = compile_program(model, splits, precision)
        try:
            results[precision] = evaluate(program, float_logits, splits, timings)
        except mcuflow.McuflowError as e:
            print(f"demo: {precision}: {e}", file=sys.stderr)
            return 1
    held_out_count = len(splits.held_out.labels)
    print(f"digits 8x8: {len(splits.train.labels)} training / {held_out_count} held-out images, "
          f"{CALIBRATION_COUNT} calibration samples from the training split, target {TARGET}, board {BOARD}")
    print(table(results, held_out_count))
    print("wall time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in timings.items()))
    if results["int8"].mismatches:
        print(f"demo: FAILED: {results['int8'].mismatches} INT8 board outputs differ from the host runtime",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
