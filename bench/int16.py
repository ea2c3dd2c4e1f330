"""int16 activations (precision="int16", A16W8) against int8 on zoo models: accuracy against the
float model, memory, and instructions on an emulated board (docs/quantization.md "int16 activations").

    .venv/bin/python bench/int16.py [--models ds_cnn ...] [--board qemu-m55] [--calibration 64]
                                    [--evaluation 64] [--board-inputs 3]

Each model is compiled for the board's core with float32 I/O at int8 and at int16 precision on
the same calibration inputs, and at int8 for target "reference" (the reference kernels only). On the host runtime (the device's integers) over the evaluation
inputs: output SNR against the eager float model (10 log10 of signal over error energy) and
top-1 agreement with it. On the board under QEMU: instructions per inference (whole
Session::run: input quantization, inference, output dequantization; median over --board-inputs
inputs) and whether the board's outputs equal the host's bit for bit. The Markdown table goes to
stdout with the command and commit; progress to stderr. Instruction counts are "instructions
(QEMU)", never cycles or milliseconds.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

import mcuflow
from mcuflow import device, zoo
from mcuflow.boards import get_board

# (row label, precision, target): int8 also on the reference kernels alone, to tell the cost of
# the wider type from that of the tier kernels (int16 has MVE kernels for conv, depthwise, 1x1,
# linear and average pooling, and DSP kernels for the same five; none on the scalar tier yet).
VARIANTS = (("int8", "int8", None), ("int8, reference kernels", "int8", "reference"), ("int16", "int16", None))


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def snr_db(y: np.ndarray, ref: np.ndarray) -> float:
    error = np.sum((y.astype(np.float64) - ref) ** 2)
    return float(10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / error))


def on_board(program: mcuflow.Program, board: str, inputs: np.ndarray) -> tuple[int, bool]:
    """(median instructions, board outputs == host outputs) over `inputs`."""
    fw = device.cached_build(program, board)
    samples = [[inputs[i:i + 1]] for i in range(len(inputs))]
    outputs, counts = device.run_elf_on_inputs(fw, program, samples, board, 300.0)
    board_out = np.concatenate([o[0] for o in outputs])
    return int(statistics.median(counts)), bool(np.array_equal(board_out, program.run(inputs)[0]))


def measure(name: str, board: str, n_cal: int, n_eval: int, n_board: int) -> list[dict]:
    model = zoo.get(name)
    ep = model.export()
    calibration, evaluation = model.calibration(n_cal), model.evaluation(n_eval)
    with torch.no_grad():
        ref = model.module(torch.from_numpy(evaluation)).numpy()
    core = get_board(board).core
    rows = []
    for label, precision, target in VARIANTS:
        log(f"{name} {label}: compile, host, {board}")
        program = mcuflow.compile(ep, target or core, calibration, precision=precision)
        out = program.run(evaluation)[0]
        instructions, exact = on_board(program, board, evaluation[:n_board])
        rows.append({"model": name, "precision": label, "snr_db": snr_db(out, ref),
                     "top1": float(np.mean(out.argmax(1) == ref.argmax(1))) if out.ndim == 2 else None,
                     "arena": program.arena_bytes, "program": len(program.data), "instructions": instructions,
                     "bit_exact": exact})
    return rows


def markdown(rows: list[dict], board: str, argv: list[str]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"`{shlex.join(['.venv/bin/python', 'bench/int16.py', *argv])}` at {commit}, board {board}", "",
             "| model | precision | SNR vs float (dB) | top-1 = float | arena (B) | program (B) | "
             "instructions (QEMU) | vs int8 | host == board |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    int8 = {r["model"]: r["instructions"] for r in rows if r["precision"] == "int8"}
    for r in rows:
        top1 = "" if r["top1"] is None else f"{100 * r['top1']:.1f}%"
        lines.append(f"| {r['model']} | {r['precision']} | {r['snr_db']:.2f} | {top1} | {r['arena']:,} | "
                     f"{r['program']:,} | {r['instructions']:,} | {r['instructions'] / int8[r['model']]:.2f}x | "
                     f"{'yes' if r['bit_exact'] else 'NO'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["ds_cnn"], choices=zoo.names())
    parser.add_argument("--board", default="qemu-m55")
    parser.add_argument("--calibration", type=int, default=64)
    parser.add_argument("--evaluation", type=int, default=64)
    parser.add_argument("--board-inputs", type=int, default=3)
    args = parser.parse_args(argv)
    rows = [r for name in args.models
            for r in measure(name, args.board, args.calibration, args.evaluation, args.board_inputs)]
    print(markdown(rows, args.board, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
