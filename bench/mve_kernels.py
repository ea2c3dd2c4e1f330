"""MVE kernels against the reference kernels, layer by layer, on the same board (qemu-m55).

Each layer is a one-op program with int8 input and output (io="int8": no quantize/dequantize
ops), compiled twice from the same exported model and calibration: for target "reference"
(the reference kernels only) and for cortex-m55 (MVE tier). Both run on qemu-m55; the figure
is the firmware's per-inference counter, i.e. instructions (QEMU) of Session::run for that one
op (kernel plus the runtime's dispatch), median over the samples.
With --models, whole zoo models the same way (float input quantized on the board, as
deployed; MACs are the program's conv and linear MACs; every op of the program counts).
With --constants, zoo models' constant bytes (weights, biases, tables and what the tier
kernels precompute) compiled for the reference kernels and for cortex-m55, the MVE kernels'
own share and the cortex-m55 arena; no board runs. Prints Markdown tables; --json prints the raw records.

    .venv/bin/python bench/mve_kernels.py [--samples 3] [--json] [--only TEXT] [--models ds_cnn resnet8 ...]
                                          [--constants mobilenet_v1_025 ...]
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

BOARD = "qemu-m55"


def layers():
    """(name, module, input shape NCHW or NC) — DS-CNN's layer types and two larger layers."""
    torch.manual_seed(0)
    return [
        ("DS-CNN conv 10x4 s2 1->64, 49x10, pad (5,1)", nn.Conv2d(1, 64, (10, 4), stride=2, padding=(5, 1)),
         (1, 1, 49, 10)),
        ("DS-CNN depthwise 3x3 64ch, 25x5, pad 1", nn.Conv2d(64, 64, 3, padding=1, groups=64), (1, 64, 25, 5)),
        ("DS-CNN pointwise 64->64, 25x5", nn.Conv2d(64, 64, 1), (1, 64, 25, 5)),
        ("DS-CNN FC 64->12", nn.Linear(64, 12), (1, 64)),
        ("conv 3x3 16->32, 48x48, pad 1", nn.Conv2d(16, 32, 3, padding=1), (1, 16, 48, 48)),
        ("pointwise 128->128, 12x12", nn.Conv2d(128, 128, 1), (1, 128, 12, 12)),
        ("FC 640->128 (autoencoder)", nn.Linear(640, 128), (1, 640)),
    ]


def measure_programs(ep, calibration, samples, io: str) -> dict:
    """Compiles `ep` for the scalar and MVE tiers and runs both on the board over `samples`."""
    record = {}
    outputs = {}
    for tier, target in (("reference", "reference"), ("mve", "cortex-m55")):
        program = mcuflow.compile(ep, target=target, calibration=calibration, io=io)
        ops = program.metadata["ops"]
        fw = device.cached_build(program, BOARD)
        outs, counts = device.run_elf_on_inputs(fw, program, samples, BOARD)
        outputs[tier] = outs
        record[tier] = {"kernels": sorted({op["kernel"] for op in ops}), "macs": sum(op["macs"] for op in ops),
                        "instructions": int(statistics.median(counts)), "counts": counts}
    record["bit_exact"] = all(np.array_equal(a, b) for ra, rb in zip(outputs["reference"], outputs["mve"])
                              for a, b in zip(ra, rb))
    return record


def measure_layer(module: nn.Module, shape, samples: int) -> dict:
    rng = np.random.RandomState(0)
    calibration = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]
    ep = torch.export.export(module.eval(), (torch.from_numpy(calibration[0]),))
    xs = [[rng.randint(-128, 128, size=shape).astype(np.int8)] for _ in range(samples)]
    return measure_programs(ep, calibration, xs, io="int8")


def measure_model(name: str, samples: int) -> dict:
    model = zoo.get(name, seed=0)
    xs = [[x[None]] for x in model.evaluation(samples)]
    return measure_programs(model.export(), model.calibration(32), xs, io="float32")


def measure_constants(name: str) -> dict:
    model = zoo.get(name, seed=0)
    ep, calibration = model.export(), model.calibration(32)
    record = {"model": name}
    for tier, target in (("reference", "reference"), ("mve", "cortex-m55")):
        d = mcuflow.compile(ep, target=target, calibration=calibration, io="float32").describe()
        # What the MVE kernels precompute: their trailing constant inputs (after the reference's five).
        prepared = {op["inputs"][i] for op in d["ops"] if op["kernel"].endswith("_mve")
                    for i in range(5, len(op["inputs"])) if d["tensors"][op["inputs"][i]]["storage"] == "constant"}
        record[tier] = {"constant_bytes": d["constant_bytes"], "program_bytes": d["program_bytes"],
                        "arena_bytes": d["arena_bytes"], "mve_prepared_bytes": sum(d["tensors"][t]["bytes"] for t in prepared)}
    return record


def print_constants(records: list) -> None:
    print("Zoo models compiled with float32 I/O: constant bytes")
    print("| model | reference constants | cortex-m55 constants | of which MVE-prepared | cortex-m55 program bytes | cortex-m55 arena |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in records:
        ref, mve = r["reference"], r["mve"]
        print(f"| {r['model']} | {ref['constant_bytes']} | {mve['constant_bytes']} | {mve['mve_prepared_bytes']} | "
              f"{mve['program_bytes']} | {mve['arena_bytes']} |")


def print_table(title: str, records: list) -> None:
    print(title)
    print("| layer | MACs | reference instr | MACs/instr | MVE kernels | MVE instr | MACs/instr | speed-up | same output |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---|")
    for r in records:
        ref, mve = r["reference"], r["mve"]
        kernels = ", ".join(k for k in mve["kernels"] if k.endswith("_mve"))
        print(f"| {r['layer']} | {ref['macs']} | {ref['instructions']} | {ref['macs'] / ref['instructions']:.3f} | "
              f"{kernels} | {mve['instructions']} | {mve['macs'] / mve['instructions']:.2f} | "
              f"{ref['instructions'] / mve['instructions']:.1f}x | {'yes' if r['bit_exact'] else 'NO'} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default="", help="only layers whose name contains this text")
    ap.add_argument("--models", nargs="*", default=[], help="whole zoo models too: " + ", ".join(zoo.names()))
    ap.add_argument("--constants", nargs="*", default=[], help="only the constant bytes of these zoo models")
    args = ap.parse_args(argv)
    if args.constants:
        records = [measure_constants(name) for name in args.constants]
        if args.json:
            print(json.dumps(records, indent=1))
        else:
            print_constants(records)
        return 0
    layer_records = [{"layer": name, **measure_layer(module, shape, args.samples)}
                     for name, module, shape in layers() if args.only in name]
    model_records = [{"layer": name, **measure_model(name, args.samples)} for name in args.models]
    if args.json:
        print(json.dumps(layer_records + model_records, indent=1))
    else:
        note = f"instructions (QEMU) per inference on {BOARD}, median of {args.samples} inputs; reference = target 'reference' (reference kernels only)"
        if layer_records:
            print_table(f"Single layers, int8 in/out, random int8 inputs ({note})", layer_records)
        if model_records:
            print_table(f"Zoo models, evaluation inputs ({note})", model_records)
    return 0 if all(r["bit_exact"] for r in layer_records + model_records) else 1


if __name__ == "__main__":
    sys.exit(main())
