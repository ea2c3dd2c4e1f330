"""int16 table activations and softmax (lut_s16, softmax_s16) against int8: per layer, output SNR
against float and instructions on emulated boards (docs/quantization.md "int16 table activations
and softmax").

    .venv/bin/python bench/int16_tables.py [--boards qemu-m55 qemu-m4] [--samples 16] [--channels 64] [--only TEXT ...]

The layers run side by side in one program (float32 I/O), compiled for the board's core at int8
and at int16 precision and for target "reference" at int16 (the int16 reference kernels), all on
the same calibration inputs (normal, scaled per layer as in the table). SNR: 10 log10 of signal
over error energy of each layer's output on the host runtime against the eager float layer, over
--samples inputs drawn like the calibration ones. Instructions (QEMU): each layer's op in the
per-op profile of `mcuflow bench` (one run, no warm-up), and whether the board's outputs equal the
host's bit for bit. --channels sets the activations' channels (their 8x8 images), --only keeps the
layers whose name contains one of the texts (qemu-m0's 16 KiB of RAM holds --channels 16 --only sigmoid).
Prints Markdown with the command and commit; progress to stderr.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import mcuflow
from mcuflow import device
from mcuflow.bench import run_bench
from mcuflow.boards import get_board

from int16 import log, snr_db



def layers(channels: int) -> list[tuple]:
    """(name, function, input shape, input scale): a layer's inputs are `scale` times standard normal."""
    image = (1, channels, 8, 8)
    return [
        (f"sigmoid {channels}x8x8", torch.sigmoid, image, 3.0),
        (f"tanh {channels}x8x8", torch.tanh, image, 2.0),
        (f"hardswish {channels}x8x8", F.hardswish, image, 3.0),
        (f"silu {channels}x8x8", F.silu, image, 3.0),
        ("softmax 12 (DS-CNN head)", lambda x: torch.softmax(x, dim=-1), (1, 12), 4.0),
        ("softmax 8 rows of 64 (attention)", lambda x: torch.softmax(x, dim=-1), (8, 64), 2.0),
        ("softmax 1000", lambda x: torch.softmax(x, dim=-1), (1, 1000), 3.0),
    ]


LAYERS: list[tuple] = layers(64)  # the measured layers (main sets them)
VARIANTS = [("int8", "int8", None), ("int16", "int16", None), ("int16, reference kernels", "int16", "reference")]


class Layers(nn.Module):
    def forward(self, *xs):
        return tuple(fn(x) for (_, fn, _, _), x in zip(LAYERS, xs))


def samples(n: int, seed: int) -> list[list[np.ndarray]]:
    rng = np.random.RandomState(seed)
    return [[(scale * rng.standard_normal(shape)).astype(np.float32) for _, _, shape, scale in LAYERS]
            for _ in range(n)]


def layer_instructions(record: dict, kernels: list[str]) -> list[int]:
    """Instructions of each layer's op, in LAYERS order (the side-by-side layers' ops are emitted
    in that order; their kernels are the table kernels, after the input quantizations)."""
    ops = [op for op in record["profile"]["ops"] if op["kernel"].startswith(("lut_", "softmax_"))]
    assert [op["kernel"] for op in ops] == kernels, (ops, kernels)
    return [op["instructions"] for op in ops]


def measure(board: str, n_samples: int) -> list[dict]:
    calibration = [tuple(s) for s in samples(16, 1)]
    evaluation = samples(n_samples, 2)
    ep = torch.export.export(Layers().eval(), tuple(torch.from_numpy(x) for x in calibration[0]))
    with torch.no_grad():
        ref = [[fn(torch.from_numpy(x)).numpy() for (_, fn, _, _), x in zip(LAYERS, s)] for s in evaluation]
    core = get_board(board).core
    rows = []
    for label, precision, target in VARIANTS:
        log(f"{board} {label}: compile, host, board")
        program = mcuflow.compile(ep, target or core, calibration, precision=precision)
        host = [program.run(s) for s in evaluation]
        on_board, _ = device.run_elf_on_inputs(device.cached_build(program, board), program, evaluation[:2], board)
        exact = all(all(np.array_equal(b, h) for b, h in zip(bo, ho)) for bo, ho in zip(on_board, host))
        kernels = [op["kernel"] for op in program.metadata["ops"] if op["kernel"].startswith(("lut_", "softmax_"))]
        counts = layer_instructions(run_bench(program, board, warmup=0, runs=1, inputs=evaluation[0]), kernels)
        for i, (name, _, _, _) in enumerate(LAYERS):
            out = np.concatenate([h[i] for h in host])
            rows.append({"board": board, "layer": name, "precision": label, "kernel": kernels[i],
                         "snr_db": snr_db(out, np.concatenate([r[i] for r in ref])), "instructions": counts[i],
                         "bit_exact": exact})
    return rows


def markdown(rows: list[dict], argv: list[str]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"`{shlex.join(['.venv/bin/python', 'bench/int16_tables.py', *argv])}` at {commit}", "",
             "| board | layer | precision | kernel | SNR vs float (dB) | instructions (QEMU) | vs int8 | host == board |",
             "|---|---|---|---|---:|---:|---:|---|"]
    int8 = {(r["board"], r["layer"]): r["instructions"] for r in rows if r["precision"] == "int8"}
    for r in rows:
        lines.append(f"| {r['board']} | {r['layer']} | {r['precision']} | `{r['kernel']}` | {r['snr_db']:.2f} | "
                     f"{r['instructions']:,} | {r['instructions'] / int8[(r['board'], r['layer'])]:.2f}x | "
                     f"{'yes' if r['bit_exact'] else 'NO'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", nargs="+", default=["qemu-m55", "qemu-m4"])
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--only", nargs="+", default=[""])
    args = parser.parse_args(argv)
    LAYERS[:] = [layer for layer in layers(args.channels) if any(text in layer[0] for text in args.only)]
    rows = [r for board in args.boards for r in measure(board, args.samples)]
    print(markdown(rows, argv))
    return 0 if all(r["bit_exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
