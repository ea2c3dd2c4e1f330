"""Host runtime throughput: a zoo model's int8 program over many deterministic inputs.

    .venv/bin/python bench/host_throughput.py [--model ds_cnn] [--samples 10000] [--threads 1,2]
        [--repeat 3] [--target cortex-m55] [--json out.json]

Compiles the zoo model (seeded weights, 64 calibration inputs), draws --samples evaluation
inputs (mcuflow.zoo, seed 0) and times one ``Program.run`` over all of them for each thread
count: wall clock from the call to its return (input checks, the C++ batch, output arrays),
after one untimed warm-up batch. Each configuration runs --repeat times; the table gives the
median and the fastest run, and the process CPU time of the median run (all threads). The
outputs of every thread count are compared bit for bit. The machine (CPU model, cores, load
average before and after) and the build (commit, extension build type and flags) are printed
with the figures, because other processes on a shared machine slow the wall clock down.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import mcuflow
from mcuflow import zoo
from mcuflow.outputs import write_file

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION_SAMPLES = 64


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def git_state() -> str:
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "HEAD") or "?"
    return commit + (" + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def extension_build() -> str:
    """Build type and C++ flags of the Python extension (scikit-build-core's CMake cache)."""
    cache = ROOT / "build" / "python" / "CMakeCache.txt"
    try:
        entries = dict(line.split("=", 1) for line in cache.read_text().splitlines() if "=" in line and ":" in line)
    except OSError:
        return "unknown (no build/python/CMakeCache.txt)"
    build_type = entries.get("CMAKE_BUILD_TYPE:STRING", "")
    flags = entries.get(f"CMAKE_CXX_FLAGS_{build_type.upper()}:STRING", "") if build_type else ""
    return f"{build_type or 'no build type'} ({' '.join([entries.get('CMAKE_CXX_FLAGS:STRING', ''), flags]).strip()})"


def timed_run(program: mcuflow.Program, inputs: np.ndarray, threads: int) -> tuple[float, float, np.ndarray]:
    cpu, wall = time.process_time(), time.perf_counter()
    output = program.run([inputs], threads=threads)[0]
    return time.perf_counter() - wall, time.process_time() - cpu, output


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="ds_cnn", help="zoo model (default ds_cnn)")
    parser.add_argument("--samples", type=int, default=10000, help="inputs per timed run (default 10000)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per thread count (default 3)")
    parser.add_argument("--target", default="cortex-m55", help="compile target (default cortex-m55; the host runs "
                                                                 "the reference kernels for every target)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        parser.error(f"--threads takes whole numbers separated by commas, got {args.threads!r}")
    if args.samples < 1 or args.repeat < 1 or min(threads) < 1:
        parser.error("--samples, --repeat and every --threads value must be at least 1")
    try:
        zoo.spec(args.model)
    except mcuflow.errors.McuflowError as e:
        parser.error(str(e))

    model = zoo.get(args.model, seed=0)
    program = mcuflow.compile(model.export(), target=args.target, calibration=model.calibration(CALIBRATION_SAMPLES))
    inputs = model.evaluation(args.samples, seed=0)
    program.run([inputs[:min(args.samples, 200)]])  # warm-up: caches, page faults, thread start-up

    load_before = os.getloadavg()
    rows, reference = [], None
    for t in threads:
        runs = []
        for _ in range(args.repeat):
            wall, cpu, output = timed_run(program, inputs, t)
            if reference is None:
                reference = output
            elif not np.array_equal(output, reference):
                print(f"error: outputs with {t} threads differ from the first run", file=sys.stderr)
                return 1
            runs.append((wall, cpu))
        median_wall, median_cpu = sorted(runs)[len(runs) // 2]
        best_wall = min(w for w, _ in runs)
        rows.append({"threads": t, "wall_seconds": [w for w, _ in runs], "cpu_seconds": [c for _, c in runs],
                     "median_wall_seconds": median_wall, "best_wall_seconds": best_wall,
                     "median_run_cpu_seconds": median_cpu,
                     "inferences_per_second": args.samples / median_wall})
    load_after = os.getloadavg()

    macs = sum(op["macs"] for op in program.describe()["ops"])
    print(f"Command: `{' '.join([os.path.relpath(sys.executable), *sys.argv])}`  ")
    print(f"Machine: {cpu_model()}, {os.cpu_count()} cores (nproc), {platform.system()} {platform.machine()}; "
          f"load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after  ")
    print(f"mcuflow {mcuflow.__version__}, commit {git_state()}; extension {extension_build()}  ")
    print(f"Model: zoo {args.model} (seed 0), int8 for {args.target}, {macs:,} MACs per inference; "
          f"{args.samples:,} evaluation inputs, one Program.run per timed run, {args.repeat} runs per row; "
          f"outputs bit-identical across thread counts\n")
    print("| threads | median wall s | fastest wall s | inferences/s (median) | ms per inference | CPU s (median run) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['threads']} | {r['median_wall_seconds']:.2f} | {r['best_wall_seconds']:.2f} | "
              f"{r['inferences_per_second']:,.0f} | {1e3 * r['median_wall_seconds'] / args.samples:.3f} | "
              f"{r['median_run_cpu_seconds']:.2f} |")
    if args.json:
        write_file(args.json, json.dumps({
            "command": sys.argv, "cpu_model": cpu_model(), "cores": os.cpu_count(), "load_before": load_before,
            "load_after": load_after, "commit": git_state(), "extension_build": extension_build(),
            "model": args.model, "target": args.target, "macs": macs, "samples": args.samples, "rows": rows},
            indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
