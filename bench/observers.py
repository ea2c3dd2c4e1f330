"""Calibration range observers on the zoo: how far each int8 program's outputs are from the float
model's on held-out inputs, with the activation ranges chosen by min/max, percentile or MSE
(docs/quantization.md).

    .venv/bin/python bench/observers.py [--models ds_cnn ...] [--calibration 100] [--evaluation 100]
                                        [--glitches 2] [--percentile 99.99]

Each model is compiled (cortex-m55, float32 I/O) twice per observer: on its clean calibration
inputs, and on the same inputs with `--glitches` values per side replaced by ±10 times the
largest calibration magnitude (a sensor glitch left in recorded data). The programs run on the
host runtime (the same integers as the device) over the evaluation inputs, which never contain
glitches, and are compared with the eager float model: mean and max absolute error, and top-1
agreement for classifiers; "relative" is the mean error over the float outputs' standard
deviation. Compile seconds are host wall clock, calibration included. The Markdown table goes to
stdout with the command and commit; progress to stderr.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

import mcuflow
from mcuflow import zoo

OBSERVERS = ("minmax", "percentile", "mse", "entropy")


def with_glitches(calibration: np.ndarray, per_side: int, seed: int = 0) -> np.ndarray:
    """A copy of `calibration` with `per_side` values at +10·max|x| and as many at -10·max|x|."""
    glitched = calibration.copy()
    flat = glitched.reshape(-1)
    size = 10 * float(np.abs(calibration).max())
    where = np.random.default_rng(seed).choice(flat.size, 2 * per_side, replace=False)
    flat[where[:per_side]], flat[where[per_side:]] = size, -size
    return glitched


def errors(program: mcuflow.Program, inputs: np.ndarray, expected: np.ndarray, classes: bool) -> dict:
    outputs = program.run([inputs])[0].reshape(expected.shape)
    diff = np.abs(outputs - expected)
    row = {"mean": float(diff.mean()), "relative": float(diff.mean() / expected.std()), "max": float(diff.max())}
    if classes:
        row["top1"] = float((outputs.argmax(1) == expected.argmax(1)).mean())
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=zoo.names())
    parser.add_argument("--calibration", type=int, default=100, help="calibration inputs per model")
    parser.add_argument("--evaluation", type=int, default=100, help="held-out inputs per model")
    parser.add_argument("--glitches", type=int, default=2, help="glitched values per side in the second set")
    parser.add_argument("--percentile", type=float, default=99.99)
    args = parser.parse_args()

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    print(f"`{shlex.join(['bench/observers.py'] + sys.argv[1:])}` at commit {commit}, mcuflow "
          f"{getattr(mcuflow, '__version__', '?')}; errors are |int8 program - float model| on "
          f"{args.evaluation} held-out inputs (host runtime, cortex-m55 program)\n")
    print("| model | calibration | observer | mean abs error | relative | max abs error | top-1 agreement | compile s |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name in args.models:
        model = zoo.get(name)
        ep = model.export()
        evaluation = model.evaluation(args.evaluation)
        with torch.no_grad():
            expected = model.module(torch.from_numpy(evaluation)).numpy()
        clean = model.calibration(args.calibration)
        for label, calibration in (("clean", clean), (f"{args.glitches} glitches/side", with_glitches(clean, args.glitches))):
            for observer in OBSERVERS:
                print(f"{name}: {label}, {observer}", file=sys.stderr)
                start = time.perf_counter()
                program = mcuflow.compile(ep, "cortex-m55", calibration, observer=observer,
                                          percentile=args.percentile if observer == "percentile" else None)
                seconds = time.perf_counter() - start
                e = errors(program, evaluation, expected, model.spec.output == "classes")
                top1 = f"{e['top1']:.1%}" if "top1" in e else "-"
                shown = f"percentile {args.percentile:g}" if observer == "percentile" else observer
                print(f"| {name} | {label} | {shown} | {e['mean']:.4g} | {e['relative']:.3f} | {e['max']:.4g} | {top1} | {seconds:.1f} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
