"""Scalar-tier (Armv6-M) kernels against the reference kernels, layer by layer, on qemu-m0.

Each layer is a one-op program with int8 input and output, compiled twice from the same exported
model and calibration: for the "reference" target (reference kernels only) and for cortex-m0
(scalar tier). Both run on qemu-m0 (Cortex-M0), or on qemu-m3 when the layer's tensors exceed
the micro:bit's 16 KiB of RAM (the Cortex-M3 runs the same Armv6-M kernels; their C parts are
then compiled for the M3). The figure is the firmware's per-inference counter: instructions
(QEMU) of Session::run for that one op, median over the samples. --models: whole zoo models the
same way (float input quantized on the board), on qemu-m0. Also prints the code bytes of the
scalar kernels and adapters linked into each firmware (ELF symbol sizes). Exit code 1 if any
output differs between the two builds.

    .venv/bin/python bench/kernels/scalar.py [--samples 3] [--only TEXT] [--models ds_cnn] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

import mcuflow
from mcuflow import crossbuild, device, zoo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dsp_kernels import layers  # noqa: E402  (the same DS-CNN and larger layers as the DSP bench)

TARGETS = (("reference", "reference"), ("scalar", "cortex-m0"))


def board_for(programs: dict) -> str:
    try:
        for program in programs.values():
            device.check_fits(program, "qemu-m0")
        return "qemu-m0"
    except device.DeviceError:
        return "qemu-m3"


def scalar_code_bytes(elf: Path) -> int:
    """Bytes of the linked functions whose names mention a scalar kernel (kernels, adapters)."""
    nm = subprocess.run([crossbuild.tool_path("nm"), "--print-size", "--demangle", str(elf)], check=True,
                        capture_output=True, text=True).stdout
    total = 0
    for line in nm.splitlines():
        fields = line.split(maxsplit=3)
        if len(fields) == 4 and fields[2] in "tTW" and "_scalar" in fields[3]:
            total += int(fields[1], 16)
    return total


def measure_programs(ep, calibration, samples, io: str, board: str | None = None) -> dict:
    programs = {tier: mcuflow.compile(ep, target=target, calibration=calibration, io=io) for tier, target in TARGETS}
    board = board or board_for(programs)
    record = {"board": board}
    outputs = {}
    for tier, program in programs.items():
        ops = program.metadata["ops"]
        fw = device.cached_build(program, board)
        outs, counts = device.run_elf_on_inputs(fw, program, samples, board)
        outputs[tier] = outs
        record[tier] = {"kernels": sorted({op["kernel"] for op in ops}), "macs": sum(op["macs"] for op in ops),
                        "instructions": int(statistics.median(counts)), "counts": counts,
                        "arena_bytes": sum(program.region_bytes), "scalar_code_bytes": scalar_code_bytes(fw.elf)}
    record["bit_exact"] = all(np.array_equal(a, b) for ra, rb in zip(outputs["reference"], outputs["scalar"])
                              for a, b in zip(ra, rb))
    return record


def measure_layer(module, shape, samples: int) -> dict:
    rng = np.random.RandomState(0)
    calibration = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]
    ep = torch.export.export(module.eval(), (torch.from_numpy(calibration[0]),))
    xs = [[rng.randint(-128, 128, size=shape).astype(np.int8)] for _ in range(samples)]
    return measure_programs(ep, calibration, xs, "int8")


def measure_model(name: str, samples: int) -> dict:
    model = zoo.get(name, seed=0)
    xs = [[x[None]] for x in model.evaluation(samples)]
    return measure_programs(model.export(), model.calibration(32), xs, "float32", board="qemu-m0")


def print_table(title: str, records: list) -> None:
    print(title)
    print("| layer | board | MACs | reference instr | MACs/instr | scalar kernels | scalar instr | MACs/instr "
          "| speed-up | scalar code bytes | arena ref / scalar | same output |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for r in records:
        ref, fast = r["reference"], r["scalar"]
        kernels = ", ".join(k for k in fast["kernels"] if k.endswith("_scalar"))
        print(f"| {r['layer']} | {r['board']} | {ref['macs']} | {ref['instructions']} | "
              f"{ref['macs'] / ref['instructions']:.3f} | {kernels} | {fast['instructions']} | "
              f"{fast['macs'] / fast['instructions']:.3f} | {ref['instructions'] / fast['instructions']:.2f}x | "
              f"{fast['scalar_code_bytes']} | {ref['arena_bytes']} / {fast['arena_bytes']} | "
              f"{'yes' if r['bit_exact'] else 'NO'} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default="", help="only layers whose name contains this text")
    ap.add_argument("--models", nargs="*", default=["ds_cnn"], help="whole zoo models: " + ", ".join(zoo.names()))
    args = ap.parse_args(argv)
    layer_records = [{"layer": name, **measure_layer(module, shape, args.samples)}
                     for name, module, shape in layers() if args.only in name]
    model_records = [{"layer": name, **measure_model(name, args.samples)} for name in args.models]
    if args.json:
        print(json.dumps(layer_records + model_records, indent=1))
    else:
        note = f"instructions (QEMU) per inference, median of {args.samples} inputs"
        if layer_records:
            print_table(f"Single layers, int8 in/out, random int8 inputs ({note})", layer_records)
        if model_records:
            print_table(f"Zoo models, evaluation inputs ({note})", model_records)
    return 0 if all(r["bit_exact"] for r in layer_records + model_records) else 1


if __name__ == "__main__":
    sys.exit(main())
