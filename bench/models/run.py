"""The model-family benchmark: the mobile families (bench/models/architectures.py) on every tier.

    .venv/bin/python bench/models/run.py [--models mnasnet_05 ...] [--targets cortex-m4 ...]
        [--no-boards] [--json bench/models/results.json] [--markdown bench/models/results.md]

For each model × target (cortex-m0, cortex-m4, cortex-m55: the scalar, DSP and MVE tiers): compile
int8 with float32 I/O (or give the compiler's error line), then list the ops left on reference
kernels with the compiler's reason (`mcuflow inspect`'s: "reference fallback: <why the tier kernel
refused>" is a limit of the tier kernel; "reference: no <tier> kernel for this op yet" is a kernel
nobody wrote) and the ops on float32 kernels with theirs, the planned arena and the program's
bytes. Then, unless --no-boards, the target's QEMU board (qemu-m0, qemu-m4, qemu-m55) runs it with
bench/zoo/run.py's machinery: instructions (QEMU) per inference, flash, RAM and whether the board's
outputs equal the host runtime's, or what does not fit.

Board runs are slow: the JSON keeps every row measured so far and a rerun replaces only the rows it
measures, so subsets can be run one after another (--models, --targets) into the same files.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import sys
import time
from pathlib import Path

import mcuflow
from mcuflow import zoo
from mcuflow.bench import run_bench
from mcuflow.errors import McuflowError
from mcuflow.firmware_sources import kernel_tier
from mcuflow.outputs import write_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from architectures import SPECS  # noqa: E402

_ZOO_RUN = Path(__file__).resolve().parents[1] / "zoo" / "run.py"
_zoo_spec = importlib.util.spec_from_file_location("bench_zoo_run", _ZOO_RUN)
bench_zoo = importlib.util.module_from_spec(_zoo_spec)
_zoo_spec.loader.exec_module(bench_zoo)

BOARDS = {"cortex-m0": "qemu-m0", "cortex-m4": "qemu-m4", "cortex-m55": "qemu-m55"}
HERE = Path(__file__).resolve().parent

# What stands in the way of a tier kernel for the reference kernels these models leave with "no <tier>
# kernel for this op yet" (results.md lists the ones a run still finds).
MISSING_TIER_KERNELS = {
    "quantize_f32_s8": "the float32 input conversion; the MVE and FPU DSP tiers have kernels (quantize_f32_s8_mve, "
                       "quantize_f32_s8_dsp). An FPU-less scalar core would need the reference's correctly rounded "
                       "soft-float division redone in integers. io=\"int8\" removes the op.",
}


def kernel_report(program: mcuflow.Program) -> dict:
    """Which kernels the program's ops run: the count on tier kernels, and every op left on a
    reference kernel or a float32 kernel, with the compiler's reason. The input quantization and
    output dequantization of float32 I/O count as ops like the others."""
    ops = program.describe()["ops"]
    on_reference = [{"index": op["index"], "kind": op["kind"], "kernel": op["kernel"], "reason": op["reason"]}
                    for op in ops if kernel_tier(op["kernel"]) == "reference" and not op.get("fallback")]
    return {"ops": len(ops), "tier_ops": sum(kernel_tier(op["kernel"]) != "reference" for op in ops),
            "kernels": dict(collections.Counter(op["kernel"] for op in ops)),
            "reference": on_reference, "float": program.fallbacks()}


def grouped(ops: list[dict]) -> list[str]:
    """'3× conv2d (dwconv_s8): reason' lines, one per distinct (kind, kernel, reason)."""
    counts = collections.Counter((op["kind"], op["kernel"], op["reason"]) for op in ops)
    return [f"{n}× {kind} ({kernel}): {reason}" for (kind, kernel, reason), n in counts.items()]


def measure(name: str, target: str, boards: bool, args) -> dict:
    model = zoo.get(SPECS[name], seed=args.seed)
    row = {"model": name, "target": target, "board": BOARDS[target]}
    try:
        program = mcuflow.compile(model.export(), target=target,
                                  calibration=model.calibration(args.calibration_samples))
    except McuflowError as e:
        return {**row, "status": f"failed: compile: {str(e).splitlines()[0]}"}
    row.update(status="compiled", tier=program.metadata.get("tier"), arena_planned=program.arena_bytes,
               arena_lower_bound=program.arena_lower_bound, program_bytes=len(program.device_image),
               **kernel_report(program))
    if boards:
        inputs = model.evaluation(args.samples)
        board_row = bench_zoo.bench_one(model, program, BOARDS[target], inputs, args.timeout)
        row.update({k: v for k, v in board_row.items() if k not in row or k == "status"})
        if args.profile and row["status"] == "ok" and row["reference"]:
            row["profile"] = reference_profile(program, BOARDS[target], inputs[:1], args.timeout)
    return row


def reference_profile(program: mcuflow.Program, board: str, inputs, timeout: float) -> dict:
    """Instructions (QEMU) of one inference spent in each reference kernel, from `mcuflow bench`'s
    per-op profile, and the profile's total."""
    record = run_bench(program, board, warmup=0, runs=1, inputs=[inputs], timeout=timeout)
    spent = collections.Counter()
    for op in record["profile"]["ops"]:
        if kernel_tier(op["kernel"]) == "reference":
            spent[op["kernel"]] += op["instructions"]
    return {"total": record["profile"]["total"], "reference_kernels": dict(spent)}


def _reference_cell(r: dict) -> str:
    lines = grouped(r["reference"]) + [f"float32: {f['kind']} ({f['kernel']}): {f['reason']}" for f in r["float"]]
    return "<br>".join(lines) if lines else "none"


def _profile_cell(r: dict) -> str:
    if "profile" not in r:
        return ""
    total = r["profile"]["total"]
    return "<br>".join(f"{kernel} {n:,} ({n / total:.1%})" for kernel, n in r["profile"]["reference_kernels"].items())


def markdown(rows: list[dict], header: dict) -> str:
    runs = list(dict.fromkeys(r["measured_by"] for r in rows))
    lines = [f"Rows measured by `{command}` at commit {commit}{' + uncommitted changes' if dirty else ''}  "
             for command, commit, dirty in runs]
    lines += [f"mcuflow {header['mcuflow_version']}; firmware compiler: {header['compiler']}  ",
              f"Inputs per board: {header['samples']} evaluation inputs, float32 I/O (the program quantizes and "
              f"dequantizes: those ops are counted); instructions are QEMU `-icount` counts (not cycles), whole "
              f"`Session::run`. Flash = the firmware's flash total; RAM = arena + static + stack high-water.", "",
              "| model | target | compiled | ops on tier kernels | arena planned / lower bound (bytes) | program bytes "
              "| board | instructions (QEMU), median | flash KiB | RAM KiB | host = board |",
              "|---|---|---|---:|---:|---:|---|---:|---:|---:|---|"]
    for r in rows:
        if "tier" not in r:  # not compiled
            lines.append(f"| {r['model']} | {r['target']} | {r['status']} | | | | | | | | |")
            continue
        head = (f"| {r['model']} | {r['target']} | yes | {r['tier_ops']} / {r['ops']} | "
                f"{r['arena_planned']:,} / {r['arena_lower_bound']:,} | {r['program_bytes']:,} | {r['board']} ")
        if r["status"] == "ok":
            exact = "bit-exact" if r["bit_exact"] else f"**{r['mismatched_values']} values differ**"
            lines.append(f"{head}| {r['instructions_median']:,} | {bench_zoo._kib(r['flash_total'])} "
                         f"| {bench_zoo._kib(r['ram_total'])} | {exact} |")
        else:
            status = "not run (--no-boards)" if r["status"] == "compiled" else r["status"]
            lines.append(f"{head}| {status} | | | |")
    lines += ["", "Ops left on reference kernels (with the compiler's reason) or on float32 kernels, and with "
              "--profile the instructions (QEMU) of one inference they take on the board (`mcuflow bench`'s "
              "per-op profile; share of the profile's total):", "",
              "| model | target | ops | instructions on reference kernels |", "|---|---|---|---|"]
    lines += [f"| {r['model']} | {r['target']} | {_reference_cell(r)} | {_profile_cell(r)} |"
              for r in rows if "tier" in r]
    missing = {op["kernel"] for r in rows if "tier" in r for op in r["reference"]
               if op["reason"].startswith("reference: no ")}
    if missing:
        lines += ["", "What stands in the way of tier kernels for the ops above that have none "
                  "(\"reference: no <tier> kernel for this op yet\"):", ""]
        lines += [f"* `{k}`: {MISSING_TIER_KERNELS.get(k, 'not analysed')}" for k in sorted(missing)]
    return "\n".join(lines) + "\n"


def run(args) -> int:
    names = args.models or list(SPECS)
    unknown = [n for n in names if n not in SPECS]
    if unknown:
        print(f"bench/models: unknown model(s) {', '.join(unknown)}; known: {', '.join(SPECS)}", file=sys.stderr)
        return 1
    json_path = Path(args.json)
    kept = json.loads(json_path.read_text())["rows"] if json_path.is_file() else []
    for r in kept:
        r["measured_by"] = tuple(r["measured_by"])
    started = time.monotonic()
    run_header = bench_zoo.provenance([], "bench/models/run.py", args, 0)
    measured_by = (run_header["command"], run_header["commit"], run_header["uncommitted_changes"])
    measured = []
    for name in names:
        for target in args.targets:
            bench_zoo.log(f"[{time.monotonic() - started:6.0f} s] {name} for {target}")
            row = {**measure(name, target, not args.no_boards, args), "measured_by": measured_by}
            bench_zoo.log(f"         {row['status']}" + (f", {row['instructions_median']:,} instructions"
                                                         if row["status"] == "ok" else ""))
            measured.append(row)
            fresh = {(r["model"], r["target"]) for r in measured}
            rows = [r for r in kept if (r["model"], r["target"]) not in fresh] + measured
            order = {n: i for i, n in enumerate(SPECS)}
            rows.sort(key=lambda r: (order.get(r["model"], len(order)), list(BOARDS).index(r["target"])))
            header = bench_zoo.provenance(measured, "bench/models/run.py", args, time.monotonic() - started)
            table = markdown(rows, header)
            write_file(json_path, json.dumps({"header": header, "rows": rows}, indent=1) + "\n")
            write_file(args.markdown, table)
    print(table)
    return 0 if all(r["status"] in ("compiled", "ok") or r["status"].startswith("does not fit")
                    for r in measured) and all(r.get("bit_exact", True) for r in measured) else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", help="default: " + " ".join(SPECS))
    parser.add_argument("--targets", nargs="+", default=list(BOARDS), choices=list(BOARDS))
    parser.add_argument("--no-boards", action="store_true", help="compile and inspect only")
    parser.add_argument("--profile", action="store_true",
                        help="also profile the board run per op where ops stay on reference kernels")
    parser.add_argument("--samples", type=int, default=2, help="evaluation inputs per board (default 2)")
    parser.add_argument("--calibration-samples", type=int, default=32, help="int8 calibration inputs (default 32)")
    parser.add_argument("--seed", type=int, default=0, help="weights and data seed (default 0)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per QEMU run (default 900)")
    parser.add_argument("--json", default=str(HERE / "results.json"), help="default: bench/models/results.json")
    parser.add_argument("--markdown", default=str(HERE / "results.md"), help="default: bench/models/results.md")
    args = parser.parse_args(argv)
    if args.samples < 1 or args.calibration_samples < 1:
        parser.error("--samples and --calibration-samples must be at least 1")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
