"""The zoo benchmark: every zoo model on every emulated board, as the seed's table asks.

    .venv/bin/python bench/zoo/run.py [--boards qemu-m4 ...] [--models ds_cnn ...] [--json out.json]

For each model × board: compile int8 for the board's core (qemu-m4 → cortex-m4 ...), with int8
inputs and outputs for the four MLPerf Tiny models (their reference models take and give int8;
the evaluation inputs are quantized with the program's input scale) and float32 I/O for the
others, build the
firmware (mcuflow firmware's harness, cached per program and sources), run a few evaluation
inputs on the board under QEMU and report

* instructions per inference (QEMU, -icount): median over the inputs, whole Session::run
  including, for float32 I/O, the input quantization and output dequantization;
* RAM = arena (as linked) + static .data/.bss outside the arena + stack high-water mark;
* flash code = everything but the program (runtime, kernels, harness, startup, libc) and
  flash total, from the ELF's sections and linker map (mcuflow size);
* the planned arena next to the liveness lower bound;
* whether the board's outputs are bit-identical to the host runtime's.

A board whose memory cannot hold a model gets "does not fit: needs N KiB ...". The Markdown
table goes to stdout with the command, commit, compiler and flags; progress goes to stderr.
Instruction counts are "instructions (QEMU)", never cycles or milliseconds.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import mcuflow
from mcuflow import device, measure, zoo
from mcuflow.boards import UnknownBoardError, get_board
from mcuflow.errors import McuflowError
from mcuflow.outputs import write_file

DEFAULT_BOARDS = ["qemu-m0", "qemu-m4", "qemu-m7", "qemu-m33", "qemu-m55"]
KiB = 1024
_DOES_NOT_FIT = re.compile(r"needs \d+ KiB of [\w ]+?, board has \d+ KiB")
MLPERF_TINY = ("ds_cnn", "mobilenet_v1_025", "resnet8", "fc_autoencoder")  # int8 in, int8 out


def program_inputs(program: mcuflow.Program, inputs: np.ndarray) -> np.ndarray:
    """`inputs` as the program takes them: float32 as they are, int8 quantized with the
    program's input scale and zero point (rounding half away from zero, saturating)."""
    spec = program.inputs[0]
    if spec["dtype"] != np.int8:
        return inputs
    scaled = inputs.astype(np.float64) / spec["scale"]
    return np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) + spec["zero_point"], -128, 127).astype(np.int8)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def firmware_footprint(elf: Path) -> dict:
    """Flash and RAM of a `mcuflow firmware` build, with the stack high-water mark of one run
    (mcuflow size)."""
    report = measure.size_report(elf)
    ram, flash = report["ram"], report["flash"]
    program_bytes = sum(c["bytes"] for c in flash["components"] if c["group"] == "program")
    arena = sum(ram["arena"].values())
    static = ram["data"] + ram["bss"] + sum(ram["other"].values())
    return {
        "flash_total": flash["total"],
        "flash_code": flash["total"] - program_bytes,
        "flash_program": program_bytes,
        "flash_components": {c["group"]: c["bytes"] for c in flash["components"]},
        "ram_total": arena + static + ram["stack_high_water"],
        "ram_arena": arena,
        "ram_static": static,
        "ram_stack_high_water": ram["stack_high_water"],
        "ram_stack_reserved": ram["stack_reserved"],
        "heap_used": ram["heap_used"],
        "record": report["record"],
    }


def bench_one(model: zoo.ZooModel, program: mcuflow.Program, board: str, inputs: np.ndarray, timeout: float) -> dict:
    inputs = program_inputs(program, inputs)
    row = {"model": model.name, "board": board, "target": program.metadata.get("target"),
           "io": "int8" if program.inputs[0]["dtype"] == np.int8 else "float32",
           "arena_planned": program.arena_bytes, "arena_lower_bound": program.arena_lower_bound,
           "program_bytes": len(program.data)}
    try:
        fw = device.cached_build(program, board)
        samples = [[inputs[i:i + 1]] for i in range(len(inputs))]
        outputs, counts = device.run_elf_on_inputs(fw, program, samples, board, timeout)
    except device.DeviceError as e:
        fit = _DOES_NOT_FIT.search(str(e))
        if fit:
            return {**row, "status": f"does not fit: {fit.group(0)}"}
        log(str(e))  # the whole compiler or QEMU output; the table keeps its first line
        return {**row, "status": f"failed: {str(e).splitlines()[0]}"}
    host = program.run(inputs)[0]
    board_out = np.concatenate([o[0] for o in outputs])
    mismatches = int(np.count_nonzero(board_out != host))
    return {**row, "status": "ok", "elf": str(fw.elf),
            "instructions_median": int(statistics.median(counts)), "instructions": counts,
            "bit_exact": mismatches == 0, "mismatched_values": mismatches,
            **firmware_footprint(fw.elf), "build_info": str(fw.build_info)}


def _uncommitted_changes() -> bool:
    """Whether tracked sources differ from the commit the figures name."""
    diff = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=device.source_root(), capture_output=True)
    return diff.returncode != 0


def provenance(rows: list[dict], script: str, args, wall_seconds: float) -> dict:
    """The command, the commit and the firmware compiler and flags (from the first board run's
    build record) that the figures of `rows` come from."""
    first = next((r for r in rows if r.get("build_info")), None)
    info = json.loads(Path(first["build_info"]).read_text()) if first else {}
    flags = info.get("flags", {})
    return {
        "command": " ".join(shlex.quote(a) for a in [".venv/bin/python", script, *sys.argv[1:]]),
        "mcuflow_version": mcuflow.__version__,
        "commit": info.get("git_commit") or _head_commit(),
        "uncommitted_changes": _uncommitted_changes(),
        "compiler": info.get("compiler", {}).get("version", "?"),
        "flags": " ".join([flags.get("opt_level", "?"), f"(kernels {flags.get('kernel_opt_level', '?')})",
                           *flags.get("common", []), *flags.get("c++", []),
                           "+ per board -mcpu/-mfpu/-mfloat-abi -mthumb"]),
        "samples": args.samples,
        "seed": args.seed,
        "wall_seconds": round(wall_seconds, 1),
    }


def _head_commit() -> str:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=device.source_root(), capture_output=True, text=True)
    return head.stdout.strip() or "?"


def _kib(n: int) -> str:
    return f"{n / KiB:.1f}"


def markdown(rows: list[dict], header: dict) -> str:
    lines = [f"Command: `{header['command']}`  ",
             f"mcuflow {header['mcuflow_version']}, commit {header['commit']}"
             f"{' + uncommitted changes' if header['uncommitted_changes'] else ''}; compiler: {header['compiler']}  ",
             f"Flags: `{header['flags']}`  ",
             f"Inputs per board: {header['samples']} evaluation inputs; instructions are QEMU `-icount` counts "
             f"(not cycles). RAM = arena + static (.data/.bss outside the arena) + stack high-water. "
             f"Flash code = flash total − program.", "",
             "I/O: int8 inputs and outputs for the MLPerf Tiny models (" + ", ".join(MLPERF_TINY) + "), as their "
             "reference models; float32 for the others (the program quantizes and dequantizes).", "",
             "| model | board | instructions (QEMU), median | RAM KiB (arena + static + stack bytes) | flash code KiB "
             "| flash total KiB | arena planned / lower bound (bytes) | host = board |",
             "|---|---|---:|---|---:|---:|---|---|"]
    for r in rows:
        plan = f"{r['arena_planned']:,} / {r['arena_lower_bound']:,}" if "arena_planned" in r else ""
        if r["status"] != "ok":
            lines.append(f"| {r['model']} | {r['board']} | {r['status']} | | | | {plan} | |")
            continue
        ram = f"{_kib(r['ram_total'])} ({r['ram_arena']:,} + {r['ram_static']:,} + {r['ram_stack_high_water']:,} B)"
        exact = "bit-exact" if r["bit_exact"] else f"**{r['mismatched_values']} values differ**"
        lines.append(f"| {r['model']} | {r['board']} | {r['instructions_median']:,} | {ram} | {_kib(r['flash_code'])} "
                     f"| {_kib(r['flash_total'])} | {plan} | {exact} |")
    return "\n".join(lines)


def run(args) -> int:
    boards = [get_board(b).name for b in args.boards]
    models = args.models or zoo.names()
    for name in models:
        zoo.spec(name)  # fails early, with the known names, before any work
    started = time.monotonic()
    rows = []
    for name in models:
        log(f"[{time.monotonic() - started:6.0f} s] {name}: building the model and exporting it")
        model = zoo.get(name, seed=args.seed)
        ep = model.export()
        calibration = model.calibration(args.calibration_samples)
        inputs = model.evaluation(args.samples)
        programs: dict[str, mcuflow.Program | McuflowError] = {}
        for board in boards:
            core = get_board(board).core
            if core not in programs:
                try:
                    programs[core] = mcuflow.compile(ep, target=core, calibration=calibration,
                                                     io="int8" if name in MLPERF_TINY else "float32")
                except McuflowError as e:
                    programs[core] = e
            log(f"[{time.monotonic() - started:6.0f} s] {name} on {board} ({core}): build, run {args.samples} inputs")
            program = programs[core]
            if isinstance(program, McuflowError):
                row = {"model": name, "board": board, "target": core, "status": f"failed: compile: {program}"}
            else:
                row = bench_one(model, program, board, inputs, args.timeout)
            rows.append(row)
            if row["status"] == "ok":
                log(f"         {row['instructions_median']:,} instructions, RAM {row['ram_total']:,} B, "
                    f"flash {row['flash_total']:,} B, {'bit-exact' if row['bit_exact'] else 'NOT bit-exact'}")
            else:
                log(f"         {row['status']}")
    header = provenance(rows, "bench/zoo/run.py", args, time.monotonic() - started)
    table = markdown(rows, header)
    print(table)
    print(f"\nWall time: {header['wall_seconds']} s")
    if args.json:
        write_file(args.json, json.dumps({"header": header, "rows": rows, "markdown": table}, indent=1) + "\n")
        log(f"wrote {args.json}")
    return 0 if all(r["status"].startswith(("ok", "does not fit")) and r.get("bit_exact", True) for r in rows) else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", nargs="+", default=DEFAULT_BOARDS, help=f"default: {' '.join(DEFAULT_BOARDS)}")
    parser.add_argument("--models", nargs="+", help="default: every zoo model")
    parser.add_argument("--samples", type=int, default=3, help="evaluation inputs per board (default 3)")
    parser.add_argument("--calibration-samples", type=int, default=64, help="int8 calibration inputs (default 64)")
    parser.add_argument("--seed", type=int, default=0, help="weights and data seed (default 0)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per QEMU run (default 600)")
    parser.add_argument("--json", help="write every figure, with the raw counts and provenance, here")
    args = parser.parse_args(argv)
    if args.samples < 1 or args.calibration_samples < 1:
        parser.error("--samples and --calibration-samples must be at least 1")
    if args.json and not Path(args.json).resolve().parent.is_dir():
        parser.error(f"--json: directory {Path(args.json).resolve().parent} does not exist")
    try:
        return run(args)
    except (McuflowError, UnknownBoardError) as e:
        print(f"bench/zoo: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
