"""Conv1d against the equivalent Conv2d on the boards: instructions (QEMU) per inference.

A Conv1d runs as the conv2d of one row (docs/frontend_contract.md), so it gets the tier's
convolution kernel; this compares one-op int8 programs (int8 I/O, compiled for the board's core)
of a Conv1d on (1, C, L), the same layer as a 1xK Conv2d on (1, C, 1, L) and as a Kx1 Conv2d on
(1, C, L, 1) (both layouts the 1-D layer could have been given). The Conv1d program also holds
the model boundary's two layout copies: its (N, C, L) input and output are channels-first, the
kernels' images NHWC. Median of --samples random inputs; every output is checked equal to the
host runtime's.

    .venv/bin/python bench/conv1d.py [--boards qemu-m0 qemu-m4 qemu-m55] [--samples 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np
import torch
import torch.nn as nn

import mcuflow
from mcuflow import device
from mcuflow.boards import get_board


def layers():
    torch.manual_seed(0)
    c, o, k, n = 16, 32, 5, 64
    conv1d = nn.Conv1d(c, o, k, padding=k // 2)
    rows = nn.Conv2d(c, o, (1, k), padding=(0, k // 2))
    cols = nn.Conv2d(c, o, (k, 1), padding=(k // 2, 0))
    dw1d = nn.Conv1d(o, o, k, padding=k // 2, groups=o)
    dw_rows = nn.Conv2d(o, o, (1, k), padding=(0, k // 2), groups=o)
    with torch.no_grad():
        rows.weight.copy_(conv1d.weight.unsqueeze(2)); cols.weight.copy_(conv1d.weight.unsqueeze(3))
        rows.bias.copy_(conv1d.bias); cols.bias.copy_(conv1d.bias)
        dw_rows.weight.copy_(dw1d.weight.unsqueeze(2)); dw_rows.bias.copy_(dw1d.bias)
    return [(f"Conv1d k{k} {c}->{o}, L={n}", conv1d, (1, c, n)),
            (f"Conv2d 1x{k} {c}->{o}, 1x{n}", rows, (1, c, 1, n)),
            (f"Conv2d {k}x1 {c}->{o}, {n}x1", cols, (1, c, n, 1)),
            (f"depthwise Conv1d k{k} {o} ch, L={n}", dw1d, (1, o, n)),
            (f"depthwise Conv2d 1x{k} {o} ch, 1x{n}", dw_rows, (1, o, 1, n))]


def measure(module, shape, board: str, samples: int) -> dict:
    rng = np.random.RandomState(0)
    calibration = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]
    ep = torch.export.export(module.eval(), (torch.from_numpy(calibration[0]),))
    program = mcuflow.compile(ep, target=get_board(board).core, calibration=calibration, io="int8")
    xs = [[rng.randint(-128, 128, size=shape).astype(np.int8)] for _ in range(samples)]
    fw = device.cached_build(program, board)
    outputs, counts = device.run_elf_on_inputs(fw, program, xs, board)
    exact = all(np.array_equal(a, b) for x, out in zip(xs, outputs) for a, b in zip(out, program.run(x)))
    return {"kernels": [op["kernel"] for op in program.metadata["ops"]], "instructions": int(statistics.median(counts)),
            "exact": exact}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", nargs="+", default=["qemu-m0", "qemu-m4", "qemu-m55"])
    ap.add_argument("--samples", type=int, default=3)
    args = ap.parse_args(argv)
    ok = True
    for board in args.boards:
        print(f"\n{board} ({get_board(board).core})\n\n| layer | kernels | instructions (QEMU) | same as host |\n|---|---|---:|---|")
        for name, module, shape in layers():
            r = measure(module, shape, board, args.samples)
            ok = ok and r["exact"]
            print(f"| {name} | {', '.join(r['kernels'])} | {r['instructions']:,} | {'yes' if r['exact'] else 'NO'} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
