"""Packed int4 weights (weights="int4", W4A8) against int8 on zoo models: accuracy against the
float model, weight and constant bytes, and instructions on emulated boards (docs/quantization.md
"int4 weights").

    .venv/bin/python bench/int4.py [--models ds_cnn fc_autoencoder] [--boards qemu-m55 qemu-m4]
                                   [--calibration 64] [--evaluation 64] [--board-inputs 3]

Each model is compiled for each board's core with float32 I/O, int8 weights and int4 weights, on
the same calibration inputs. On the host runtime (the device's integers) over the evaluation
inputs: output SNR against the eager float model (10 log10 of signal over error energy) and top-1
agreement with it. Weight bytes are the weight tensors' records (int8 or packed int4, the tier
kernels' prepared copies of them not counted); constant bytes the whole constants section (weights,
biases, requantization tables and every tier kernel's prepared inputs); device bytes the program
image a firmware carries; arena bytes the planned arena (the int4 tier kernels' scratch included). On the board under QEMU: instructions per inference (whole Session::run,
median over --board-inputs inputs) and host == board bit for bit; a program larger than the board's
code memory, or whose arena and stack exceed its RAM, is reported as not fitting instead. Markdown to stdout with the command and commit.
Instruction counts are "instructions (QEMU)", never cycles or milliseconds.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys

import numpy as np
import torch

import mcuflow
from mcuflow import zoo
from mcuflow.boards import get_board
from mcuflow.errors import DeviceError
from mcuflow.memory_map import CODE_RESERVE

from int16 import log, on_board, snr_db

WEIGHTED = ("conv_s8", "dwconv_s8", "fc_s8")  # the kernels (and their tier kernels) whose input 1 is the weights


def weight_bytes(program: mcuflow.Program) -> int:
    tensors = program.describe()["tensors"]
    return sum(tensors[op["inputs"][1]]["bytes"] for op in program.describe()["ops"]
               if op["kernel"].startswith(WEIGHTED))


def board_run(program: mcuflow.Program, board: str, inputs: np.ndarray, run: bool = True) -> tuple:
    """(instructions, host == board, why it does not fit or None): a program larger than the
    board's code memory, or whose arena and stack exceed its RAM, does not run."""
    spec = get_board(board)
    flash = spec.region(spec.code_region).size
    misfit = None if len(program.device_image) + CODE_RESERVE <= flash else f"{flash // 1024} KiB flash"
    try:
        if run and misfit is None:
            return (*on_board(program, board, inputs), None)
    except DeviceError as e:  # the arena and stack need more RAM than the board has
        misfit = str(e).split(": ", 1)[1]
    return None, None, misfit


def measure(name: str, boards: list[str], n_cal: int, n_eval: int, n_board: int) -> list[dict]:
    model = zoo.get(name)
    ep = model.export()
    calibration, evaluation = model.calibration(n_cal), model.evaluation(n_eval)
    with torch.no_grad():
        ref = model.module(torch.from_numpy(evaluation)).numpy()
    rows = []
    for board in boards:
        for weights in ("int8", "int4"):
            log(f"{name} {weights} weights: compile, host, {board}")
            program = mcuflow.compile(ep, get_board(board).core, calibration, weights=weights)
            out = program.run(evaluation)[0]
            instructions, exact, misfit = board_run(program, board, evaluation[:n_board])
            rows.append({"model": name, "board": board, "weights": weights, "snr_db": snr_db(out, ref),
                         "top1": float(np.mean(out.argmax(1) == ref.argmax(1))) if name != "fc_autoencoder" else None,
                         "weight_bytes": weight_bytes(program), "constants": program.describe()["constant_bytes"],
                         "device": len(program.device_image), "arena": program.describe()["arena_bytes"], "misfit": misfit, "instructions": instructions,
                         "bit_exact": exact})
    return rows


def markdown(rows: list[dict], argv: list[str]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"`{shlex.join(['.venv/bin/python', 'bench/int4.py', *argv])}` at {commit}", "",
             "| model | board | weights | SNR vs float (dB) | top-1 = float | weight bytes | constant bytes | "
             "device bytes | arena bytes | instructions (QEMU) | vs int8 | host == board |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    base = {(r["model"], r["board"]): r for r in rows if r["weights"] == "int8"}
    for r in rows:
        b = base[(r["model"], r["board"])]
        top1 = "" if r["top1"] is None else f"{100 * r['top1']:.1f}%"

        def ratio(key: str) -> str:
            return "" if r["weights"] == "int8" else f" ({r[key] / b[key]:.2f}x)"

        if r["instructions"] is None:
            run = f"does not fit ({r['misfit']})", "", ""
        else:
            vs = "" if b["instructions"] is None else f"{r['instructions'] / b['instructions']:.2f}x"
            run = f"{r['instructions']:,}", vs, "yes" if r["bit_exact"] else "NO"
        lines.append(f"| {r['model']} | {r['board']} | {r['weights']} | {r['snr_db']:.2f} | {top1} | "
                     f"{r['weight_bytes']:,}{ratio('weight_bytes')} | {r['constants']:,}{ratio('constants')} | "
                     f"{r['device']:,}{ratio('device')} | {r['arena']:,} | {run[0]} | {run[1]} | {run[2]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["ds_cnn"], choices=zoo.names())
    parser.add_argument("--boards", nargs="+", default=["qemu-m55", "qemu-m4"])
    parser.add_argument("--calibration", type=int, default=64)
    parser.add_argument("--evaluation", type=int, default=64)
    parser.add_argument("--board-inputs", type=int, default=3)
    args = parser.parse_args(argv)
    rows = [r for name in args.models
            for r in measure(name, args.boards, args.calibration, args.evaluation, args.board_inputs)]
    print(markdown(rows, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
