"""Float32 programs on the FPU cores (qemu-m4, qemu-m7, qemu-m33): the float reference kernels
against the DSP tier's float kernels (conv_f32_dsp, conv_f32_1x1_dsp, dwconv_f32_dsp, fc_f32_dsp).

Two models: the digits demo's CNN (examples/digits, trained as the demo trains it, over its first
--images held-out images) and the zoo's DS-CNN (--samples evaluation inputs). Each is compiled with
precision fp32 for the "reference" target and for the board's core; both programs run on the
board, one firmware run over all inputs each. A figure is the firmware's per-inference counter
(instructions (QEMU) of Session::run, every op), median over the inputs. Every board output must
equal the host's bit for bit (the host runs the reference kernels) for both programs. Prints
Markdown; exit code 1 if any output differs.

    .venv/bin/python bench/float_fpu.py [--boards qemu-m4 qemu-m7 qemu-m33] [--images 50] [--samples 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

import mcuflow
from mcuflow import device, zoo
from mcuflow.boards import get_board

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "digits"))
from train import train  # noqa: E402

BOARDS = ["qemu-m4", "qemu-m7", "qemu-m33"]
BOARD_TIMEOUT_S = 600.0


def measure(name: str, ep, inputs: list, board: str) -> dict:
    """Median instructions per inference for both targets, the float kernels used and whether
    every board output equals the host's bits."""
    record = {"model": name, "board": board, "inputs": len(inputs)}
    host = None
    for tier, target in (("reference", "reference"), ("tier", get_board(board).core)):
        program = mcuflow.compile(ep, target=target, precision="fp32")
        print(f"float_fpu: {name}, {target} kernels on {board}", file=sys.stderr, flush=True)
        fw = device.cached_build(program, board)
        outputs, counts = device.run_elf_on_inputs(fw, program, inputs, board, timeout=BOARD_TIMEOUT_S)
        host = host or [program.run(x) for x in inputs]
        record[tier] = int(statistics.median(counts))
        record[f"{tier}_mismatches"] = sum(not np.array_equal(b.view(np.uint32), h.view(np.uint32))
                                           for bo, ho in zip(outputs, host) for b, h in zip(bo, ho))
        if tier == "tier":
            record["kernels"] = sorted({op["kernel"] for op in program.metadata["ops"] if op["kernel"].endswith("_dsp")})
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", nargs="+", default=BOARDS)
    ap.add_argument("--images", type=int, default=50, help="digits held-out images")
    ap.add_argument("--samples", type=int, default=5, help="DS-CNN evaluation inputs")
    args = ap.parse_args(argv)

    digits, splits = train()
    images = splits.held_out.images[:args.images]
    digits_ep = torch.export.export(digits, (torch.from_numpy(images[:1]),))
    ds_cnn = zoo.get("ds_cnn", seed=0)
    ds_cnn_ep = ds_cnn.export()
    ds_cnn_inputs = [[x[None]] for x in ds_cnn.evaluation(args.samples)]

    records = []
    for board in args.boards:
        records.append(measure("digits", digits_ep, [[images[i:i + 1]] for i in range(len(images))], board))
        records.append(measure("DS-CNN", ds_cnn_ep, ds_cnn_inputs, board))

    print("Float32 programs, instructions (QEMU) per inference (every op), median over the inputs\n")
    print("| model | board | inputs | reference kernels | DSP float kernels | fewer | host != board (ref / tier) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in records:
        print(f"| {r['model']} | {r['board']} | {r['inputs']} | {r['reference']:,} | {r['tier']:,} | "
              f"{r['reference'] / r['tier']:.2f}x | {r['reference_mismatches']} / {r['tier_mismatches']} |")
    print(f"\nDSP float kernels used: {', '.join(sorted({k for r in records for k in r['kernels']}))}")
    return 1 if any(r["reference_mismatches"] or r["tier_mismatches"] for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
