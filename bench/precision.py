"""int8, int16 (A16W8), W4A8 and mixed precision side by side: accuracy against the float model,
arena, flash and instructions on emulated boards (docs/quantization.md "Mixed precision").

    nice .venv/bin/python bench/precision.py [--models digits ds_cnn ...] [--boards qemu-m55 ...]
                                             [--calibration 64] [--evaluation 64] [--board-inputs 3]
                                             [--no-board]

Each model is compiled for each board's core with float32 I/O at int8, int16 and int4 weights
(W4A8), and mixed: precision and weights "mixed" with an arena of at most 1.25x the int8
program's (the issue's target) and, on the calibration data, either at least the int8 program's
top-1 agreement with float there (classifiers), or its output SNR + 1 dB; a budget no choice
meets is a row with the compiler's one-line reason. "digits" is the digits demo
(examples/digits: trained, 100 calibration images from the training split, the 450 held-out images
evaluated, accuracy against their labels); zoo models use seeded weights, --calibration and
--evaluation inputs. On the host runtime (the device's integers) over the evaluation inputs:
output SNR against the eager float model, top-1 agreement with it (and for digits the accuracy).
Flash is the device image (the program without metadata). On the board under QEMU (skipped with
--no-board): instructions per inference (whole Session::run, median over --board-inputs inputs) and
host == board bit for bit; a program that does not fit the board is reported as such. Markdown to
stdout with the command and commit, progress to stderr. "instructions (QEMU)", never cycles.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

import mcuflow
from mcuflow import zoo
from mcuflow.boards import get_board
from mcuflow.errors import BudgetError
from mcuflow.mixed import accuracy

from int16 import log, snr_db
from int4 import board_run

ARENA_FACTOR = 1.25  # mixed's arena budget over the int8 program's (the target)


def digits() -> tuple:
    """(exported model, calibration, evaluation inputs, eager float outputs, labels) of the demo."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "digits"))
    from demo import calibration_indices
    from train import predict, train

    model, splits = train()
    ep = torch.export.export(model, (torch.from_numpy(splits.train.images[:1]),))
    images = splits.held_out.images
    return ep, splits.train.images[calibration_indices(splits)], images, predict(model, images), splits.held_out.labels


def zoo_model(name: str, n_cal: int, n_eval: int) -> tuple:
    model = zoo.get(name)
    evaluation = model.evaluation(n_eval)
    with torch.no_grad():
        ref = model.module(torch.from_numpy(evaluation)).numpy()
    return model.export(), model.calibration(n_cal), evaluation, ref, None


def variants(ep, core: str, calibration):
    """(label, program) for int8, int16, W4A8 and the mixed budgets (a BudgetError's message
    instead of a program when no choice meets them)."""
    int8 = mcuflow.compile(ep, core, calibration)
    yield "int8", int8
    yield "int16", mcuflow.compile(ep, core, calibration, precision="int16")
    yield "W4A8", mcuflow.compile(ep, core, calibration, weights="int4")
    fp32 = mcuflow.compile(ep, core, precision="fp32")
    batch = np.concatenate(list(calibration)) if isinstance(calibration, list) else calibration
    measured = accuracy(int8.run(batch), fp32.run(batch))
    arena = int(ARENA_FACTOR * sum(int8.region_bytes))
    budgets = {"mixed, SNR >= int8 + 1 dB": dict(min_snr_db=measured.snr_db + 1)}
    if measured.agreement is not None:
        budgets = {"mixed, top-1 >= int8": dict(min_agreement=measured.agreement), **budgets}
    for label, budget in budgets.items():
        try:
            yield label, mcuflow.compile(ep, core, calibration, precision="mixed", weights="mixed",
                                         max_arena_bytes=arena, **budget)
        except BudgetError as e:
            yield label, str(e)


def choices(program) -> str:
    """How many layers took each choice: "A16W8 2, A8W8 3, A8W4 6"."""
    found = [op["precision"].split(":")[0] for op in program.metadata["ops"] if op.get("precision")]
    return ", ".join(f"{c} {found.count(c)}" for c in ("A16W8", "A8W8", "A8W4") if c in found)


def measure(name: str, boards: list[str], n_cal: int, n_eval: int, n_board: int, run_boards: bool) -> list[dict]:
    ep, calibration, evaluation, ref, labels = digits() if name == "digits" else zoo_model(name, n_cal, n_eval)
    rows = []
    for board in boards:
        core = get_board(board).core
        for label, program in variants(ep, core, calibration):
            log(f"{name} {label}: compiled for {core}; host, {board if run_boards else 'no board'}")
            if isinstance(program, str):
                rows.append({"model": name, "board": board, "precision": label, "refused": program})
                continue
            out = program.run(evaluation)[0]
            classes = out.ndim == 2 and out.shape[1] > 1
            instructions, exact, misfit = board_run(program, board, evaluation[:n_board], run_boards)
            rows.append({"model": name, "board": board, "precision": label, "choices": choices(program),
                         "snr_db": snr_db(out, ref),
                         "top1": float(np.mean(out.argmax(1) == ref.argmax(1))) if classes else None,
                         "accuracy": None if labels is None else float(np.mean(out.argmax(1) == labels)),
                         "float_accuracy": None if labels is None else float(np.mean(ref.argmax(1) == labels)),
                         "arena": sum(program.region_bytes), "flash": len(program.device_image), "misfit": misfit,
                         "instructions": instructions, "bit_exact": exact})
    return rows


def markdown(rows: list[dict], argv: list[str]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"`{shlex.join(['nice', '.venv/bin/python', 'bench/precision.py', *argv])}` at {commit}", "",
             "| model | board | precision | layers | SNR vs float (dB) | top-1 = float | accuracy (float) | "
             "arena (B) | flash (B) | instructions (QEMU) | vs int8 | host == board |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    base = {(r["model"], r["board"]): r for r in rows if r["precision"] == "int8"}
    for r in rows:
        if "refused" in r:
            lines.append(f"| {r['model']} | {r['board']} | {r['precision']} | {r['refused']} ||||||||||")
            continue
        b = base[(r["model"], r["board"])]
        top1 = "" if r["top1"] is None else f"{100 * r['top1']:.1f}%"
        acc = "" if r["accuracy"] is None else f"{100 * r['accuracy']:.2f}% ({100 * r['float_accuracy']:.2f}%)"
        ratio = lambda key: "" if r is b else f" ({r[key] / b[key]:.2f}x)"  # noqa: E731
        if r["instructions"] is None:
            run = (f"does not fit ({r['misfit']})" if r["misfit"] else "not run"), "", ""
        else:
            vs = "" if b["instructions"] is None else f"{r['instructions'] / b['instructions']:.2f}x"
            run = f"{r['instructions']:,}", vs, "yes" if r["bit_exact"] else "NO"
        lines.append(f"| {r['model']} | {r['board']} | {r['precision']} | {r['choices']} | {r['snr_db']:.2f} | {top1} | "
                     f"{acc} | {r['arena']:,}{ratio('arena')} | {r['flash']:,}{ratio('flash')} | {run[0]} | {run[1]} | "
                     f"{run[2]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["digits", "ds_cnn"], choices=["digits", *zoo.names()])
    parser.add_argument("--boards", nargs="+", default=["qemu-m55"])
    parser.add_argument("--calibration", type=int, default=64)
    parser.add_argument("--evaluation", type=int, default=64)
    parser.add_argument("--board-inputs", type=int, default=3)
    parser.add_argument("--no-board", action="store_true", help="host-side numbers only")
    args = parser.parse_args(argv)
    rows = [r for name in args.models
            for r in measure(name, args.boards, args.calibration, args.evaluation, args.board_inputs, not args.no_board)]
    print(markdown(rows, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
