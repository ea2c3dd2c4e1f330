"""Kernel benchmark for every tier: per layer and per whole model, instructions (QEMU).

For each board, each layer is a one-op program with int8 input and output (io="int8": no
quantize/dequantize ops), compiled twice from the same exported model and calibration: for the
"reference" target (the portable reference kernels) and for the board's own core (its tier:
scalar on qemu-m0/m3, DSP on qemu-m4/m7/m33, MVE on qemu-m55). Both run on that board; a
figure is the firmware's per-inference counter — instructions (QEMU) of Session::run for the
one op (kernel plus the runtime's dispatch), median over the samples — and the two outputs
must be equal bit for bit. Whole zoo models (--models, default the DS-CNN; float input as
deployed) are measured with `mcuflow bench`'s harness: the inference ops alone, without the
input quantization and output dequantization; the DS-CNN next to its instruction targets and Arm
CMSIS-NN's figures on the same boards. For each model also the constant bytes for the
reference target and for the board's core, and how many of them the tier's kernels added
(prepared tables, re-laid-out weights). Prints Markdown; --json prints the raw records. Exit
code 1 if any output differs.

--precision fp32 measures the float32 programs instead: layers with float input and output
(random normal samples) and whole models, each compiled for the "reference" target (the float
reference kernels) and for the board's core (the float MVE kernels on qemu-m55), both run on
the board, outputs compared bit for bit.

    .venv/bin/python bench/kernels/run.py [--boards qemu-m3 qemu-m4 ...] [--samples 3] [--only TEXT]
                                          [--models ds_cnn mobilenet_v1_025 ...] [--precision fp32] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

import numpy as np
import torch
import torch.nn as nn

import mcuflow
from mcuflow import device, zoo
from mcuflow.bench import run_bench
from mcuflow.boards import get_board
from mcuflow.errors import McuflowError

BOARDS = ["qemu-m0", "qemu-m3", "qemu-m4", "qemu-m7", "qemu-m33", "qemu-m55"]
# Whole DS-CNN, instructions per inference: (target, Arm CMSIS-NN measured on that board)
# (the targets: 2.5x fewer than CMSIS-NN on Helium and the scalar cores, 2x on the DSP cores)
DS_CNN_FIGURES = {"qemu-m55": (712_000, 1_781_798), "qemu-m4": (3_900_000, 7_841_939),
                  "qemu-m7": (3_900_000, 7_757_876), "qemu-m33": (3_900_000, 7_797_713),
                  "qemu-m0": (11_600_000, 28_981_045), "qemu-m3": (11_600_000, 28_981_045)}


class ChannelOp(nn.Module):
    """op(x, a constant per channel): one element-wise int8 op with its second input broadcast."""

    def __init__(self, channels: int, op):
        super().__init__()
        self.op = op
        self.register_buffer("c", torch.rand(1, channels, 1, 1) + 0.5)

    def forward(self, x):
        return self.op(x, self.c)


def layers():
    """(name, module, input shape NCHW or NC): DS-CNN's layers, element-wise ops, a max pool, two larger convs,
    a grouped conv (RegNetX's group width 16), a table-lookup activation (MobileNetV3's hardswish), a 5x5 depthwise conv."""
    torch.manual_seed(0)
    return [
        ("DS-CNN conv 10x4 s2 1->64, 49x10, pad (5,1)", nn.Conv2d(1, 64, (10, 4), stride=2, padding=(5, 1)),
         (1, 1, 49, 10)),
        ("DS-CNN depthwise 3x3 64ch, 25x5, pad 1", nn.Conv2d(64, 64, 3, padding=1, groups=64), (1, 64, 25, 5)),
        ("DS-CNN pointwise 64->64, 25x5", nn.Conv2d(64, 64, 1), (1, 64, 25, 5)),
        ("DS-CNN avg pool 25x5, 64ch", nn.AvgPool2d((25, 5)), (1, 64, 25, 5)),
        ("DS-CNN FC 64->12", nn.Linear(64, 12), (1, 64)),
        ("DS-CNN softmax 12", nn.Softmax(dim=-1), (1, 12)),
        ("add per-channel constant, 16x16x32", ChannelOp(32, torch.add), (1, 32, 16, 16)),
        ("mul per-channel constant, 16x16x32", ChannelOp(32, torch.mul), (1, 32, 16, 16)),
        ("max pool 2x2 s2, 24x24x32", nn.MaxPool2d(2), (1, 32, 24, 24)),
        ("conv 3x3 16->32, 48x48, pad 1", nn.Conv2d(16, 32, 3, padding=1), (1, 16, 48, 48)),
        ("pointwise 128->128, 12x12", nn.Conv2d(128, 128, 1), (1, 128, 12, 12)),
        ("grouped conv 3x3 64->64, 4 groups, 16x16, pad 1", nn.Conv2d(64, 64, 3, padding=1, groups=4),
         (1, 64, 16, 16)),
        ("hardswish (table lookup), 16x16x16", nn.Hardswish(), (1, 16, 16, 16)),
        ("depthwise 5x5 32ch, 12x12, pad 2 (MobileNetV3, MnasNet, EfficientNet)",
         nn.Conv2d(32, 32, 5, padding=2, groups=32), (1, 32, 12, 12)),
    ]


def run(program, samples, board: str) -> dict:
    fw = device.cached_build(program, board)
    outputs, counts = device.run_elf_on_inputs(fw, program, samples, board)
    ops = program.metadata["ops"]
    return {"kernels": [op["kernel"] for op in ops], "macs": sum(op["macs"] for op in ops),
            "instructions": int(statistics.median(counts)), "counts": counts, "outputs": outputs}


def measure_layer(module: nn.Module, shape, samples: int, board: str, precision: str = "int8") -> dict:
    rng = np.random.RandomState(0)
    calibration = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]
    ep = torch.export.export(module.eval(), (torch.from_numpy(calibration[0]),))
    if precision == "fp32":
        xs = [[rng.standard_normal(shape).astype(np.float32)] for _ in range(samples)]
        options = {"precision": "fp32"}
    else:
        xs = [[rng.randint(-128, 128, size=shape).astype(np.int8)] for _ in range(samples)]
        options = {"calibration": calibration, "io": "int8"}
    record = {"board": board, "shape": list(shape)}
    try:
        for tier, target in (("reference", "reference"), ("tier", get_board(board).core)):
            print(f"kernels: {type(module).__name__} {list(shape)}, {target} kernels on {board}", file=sys.stderr,
                  flush=True)
            program = mcuflow.compile(ep, target=target, **options)
            record[tier] = run(program, xs, board)
    except McuflowError as e:  # e.g. the layer does not fit the board's RAM
        return {**record, "error": str(e).splitlines()[0]}
    record["bit_exact"] = all(np.array_equal(a.view(np.uint8), b.view(np.uint8)) for ra, rb in zip(record["reference"].pop("outputs"),
                                                                     record["tier"].pop("outputs"))
                              for a, b in zip(ra, rb))
    return record


def constant_bytes(ep, calibration, target: str) -> dict:
    """Constant bytes of `ep` compiled for the reference target and for `target`, and those the
    tier's kernels added (their trailing constant inputs: both programs list the same ops)."""
    ref, tier = (mcuflow.compile(ep, target=t, calibration=calibration).describe() for t in ("reference", target))
    added = {t for op_ref, op in zip(ref["ops"], tier["ops"]) for t in op["inputs"][len(op_ref["inputs"]):]
             if tier["tensors"][t]["storage"] == "constant"}
    return {"reference": ref["constant_bytes"], "tier": tier["constant_bytes"],
            "tier_added": sum(tier["tensors"][t]["bytes"] for t in added)}


def measure_model(name: str, board: str) -> dict:
    model = zoo.get(name, seed=0)
    ep, calibration, target = model.export(), model.calibration(32), get_board(board).core
    program = mcuflow.compile(ep, target=target, calibration=calibration)
    record = {"model": name, "board": board, "constants": constant_bytes(ep, calibration, target)}
    print(f"kernels: whole {name} on {board}", file=sys.stderr, flush=True)
    try:
        r = run_bench(program, board, warmup=0, runs=1, inputs=[model.evaluation(1)])
    except McuflowError as e:  # e.g. the model does not fit the board
        return {**record, "error": str(e).splitlines()[0]}
    return {**record, "instructions": r["regions"]["inference"]["median"],
            "macs": sum(op["macs"] for op in program.metadata["ops"]), "arena_bytes": program.arena_bytes}


def measure_float_model(name: str, board: str) -> dict:
    """A zoo model in float32, for the reference target and the board's core, inference ops."""
    model = zoo.get(name, seed=0)
    ep, record = model.export(), {"model": name, "board": board}
    for tier, target in (("reference", "reference"), ("tier", get_board(board).core)):
        program = mcuflow.compile(ep, target=target, precision="fp32")
        print(f"kernels: whole {name} fp32, {target} kernels on {board}", file=sys.stderr, flush=True)
        try:
            r = run_bench(program, board, warmup=0, runs=1, inputs=[model.evaluation(1)])
        except McuflowError as e:  # e.g. the model does not fit the board
            return {**record, "error": str(e).splitlines()[0]}
        record[tier] = r["regions"]["inference"]["median"]
        record["macs"] = sum(op["macs"] for op in program.metadata["ops"])
    return record


def print_float_models(records: list) -> None:
    print("\nWhole models in float32 (inference ops)\n")
    print("| model | board | MACs | reference kernels | board's kernels | MACs/instr | fewer |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in records:
        if "error" in r:
            print(f"| {r['model']} | {r['board']} | {r['error']} | | | | |")
            continue
        print(f"| {r['model']} | {r['board']} | {r['macs']:,} | {r['reference']:,} | {r['tier']:,} | "
              f"{r['macs'] / r['tier']:.3f} | {r['reference'] / r['tier']:.2f}x |")


def print_layers(board: str, records: list) -> None:
    b = get_board(board)
    print(f"\n{board} ({b.core}, {b.tier} tier)\n")
    print("| layer | MACs | reference instr | MACs/instr | kernel | instr | MACs/instr | speed-up | same output |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---|")
    for r in records:
        if "error" in r:
            print(f"| {r['layer']} | | | | {r['error']} | | | | |")
            continue
        ref, opt = r["reference"], r["tier"]
        macs = ref["macs"]

        def rate(x):
            return f"{macs / x['instructions']:.3f}" if macs else "-"

        print(f"| {r['layer']} | {macs} | {ref['instructions']:,} | {rate(ref)} | {', '.join(opt['kernels'])} | "
              f"{opt['instructions']:,} | {rate(opt)} | {ref['instructions'] / opt['instructions']:.1f}x | "
              f"{'yes' if r['bit_exact'] else 'NO'} |")


def print_models(records: list) -> None:
    print("\nWhole models (inference ops; the float input is quantized before and the output dequantized "
          "after, untimed)\n")
    print("| model | board | tier | instructions (QEMU) | MACs/instr | target | met | Arm CMSIS-NN | vs CMSIS-NN "
          "| constants: reference / tier (tier-added) |")
    print("|---|---|---|---:|---:|---:|---|---:|---:|---|")
    for r in records:
        target, cmsis = DS_CNN_FIGURES[r["board"]] if r["model"] == "ds_cnn" else (None, None)
        c = r["constants"]
        constants = f"{c['reference']:,} / {c['tier']:,} ({c['tier_added']:,})"
        tier = get_board(r["board"]).tier
        if "error" in r:
            print(f"| {r['model']} | {r['board']} | {tier} | {r['error']} | | | | | | {constants} |")
            continue
        n = r["instructions"]
        met = ("yes" if n <= target else "NO") if target else ""
        print(f"| {r['model']} | {r['board']} | {tier} | {n:,} | {r['macs'] / n:.3f} | "
              f"{f'{target:,}' if target else ''} | {met} | {f'{cmsis:,}' if cmsis else ''} | "
              f"{f'{cmsis / n:.2f}x fewer' if cmsis else ''} | {constants} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", nargs="+", default=BOARDS, choices=BOARDS)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--only", default="", help="only layers whose name contains this text")
    ap.add_argument("--models", nargs="*", default=["ds_cnn"], help="whole zoo models: " + ", ".join(zoo.names()))
    ap.add_argument("--precision", choices=["int8", "fp32"], default="int8")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    per_board = {board: [{"layer": name, **measure_layer(module, shape, args.samples, board, args.precision)}
                         for name, module, shape in layers() if args.only in name]
                 for board in args.boards}
    measure = measure_float_model if args.precision == "fp32" else measure_model
    models = [measure(name, board) for name in args.models for board in args.boards]
    if args.json:
        print(json.dumps({"layers": per_board, "models": models}, indent=1))
    else:
        print(f"Instructions (QEMU) per inference, median of {args.samples} random {args.precision} inputs; "
              "reference = the portable reference kernels on the same board.")
        for board, records in per_board.items():
            print_layers(board, records)
        if models:
            (print_float_models if args.precision == "fp32" else print_models)(models)
    layers_exact = all(r.get("bit_exact", True) for records in per_board.values() for r in records)
    return 0 if layers_exact else 1


if __name__ == "__main__":
    sys.exit(main())
