"""Cold start: initialization of the four MLPerf Tiny zoo models by phase, next to one
inference, from `mcuflow bench` (bench harness: the exact init; init_phases harness: the same
load + bind with a mark at every phase), at both verification levels: a first boot
(Verify::kFull) and a later wake (Verify::kStructure).

    .venv/bin/python bench/init_phases.py [--boards qemu-m55 qemu-m4] [--models ds_cnn ...] [--json out.json]

Each model compiles int8 with int8 I/O for the board's core, as bench/zoo/run.py does. Prints a
Markdown table; instructions (QEMU) from -icount, not cycles.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mcuflow
from mcuflow import zoo
from mcuflow.bench import INIT_PHASES, run_bench
from mcuflow.boards import get_board

MLPERF_TINY = ("ds_cnn", "mobilenet_v1_025", "resnet8", "fc_autoencoder")
# The cold-start targets: TFLite Micro's init figures on qemu-m55.
TARGETS = {"ds_cnn": 290_000, "mobilenet_v1_025": 1_150_000, "resnet8": 240_000, "fc_autoencoder": 200_000}


LEVELS = (("init", "first boot, Verify::kFull"), ("wake_init", "later wakes, Verify::kStructure"))


def measure(name: str, boards: list[str]) -> list[dict]:
    model = zoo.get(name)
    ep, calibration = model.export(), model.calibration(8)
    rows, programs = [], {}
    for board in boards:
        core = get_board(board).core
        if core not in programs:
            programs[core] = mcuflow.compile(ep, target=core, calibration=calibration, io="int8")
        r = run_bench(programs[core], board, warmup=0, runs=1)
        row = {"model": name, "board": board, "program_bytes": len(programs[core].data),
               "inference": r["regions"]["inference"]["median"], "target": TARGETS.get(name)}
        for level, _ in LEVELS:
            region = r["regions"][level]
            row[level] = {"init": region["observations"][0], "phases": region["phases"]["phases"],
                          "marks": region["phases"]["marks"], "mark_cost": region["phases"]["mark_cost"]}
        rows.append(row)
        print(f"{name} on {board}: init {row['init']['init']:,}, on a later wake {row['wake_init']['init']:,}",
              file=sys.stderr, flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    names = [p for p, _ in INIT_PHASES]
    lines = []
    for level, title in LEVELS:
        lines += [f"### {title}", "",
                  "| model | board | program B | init | target | init / inference | one inference | "
                  + " | ".join(names) + " |",
                  "|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(names)]
        for r in rows:
            init = r[level]
            lines.append(f"| {r['model']} | {r['board']} | {r['program_bytes']:,} | {init['init']:,} | "
                         f"{r['target']:,} | {init['init'] / r['inference']:.2f} | {r['inference']:,} | "
                         + " | ".join(f"{init['phases'][p]:,}" for p in names) + " |")
        lines.append("")
    lines.append("Phases from the init_phases firmware (one mark per phase, about "
                 f"{rows[0]['init']['mark_cost']} instructions each, counted in the phase before it); init and "
                 "inference from the bench firmware, exact. Reproduce: `.venv/bin/python bench/init_phases.py`.")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", nargs="+", default=["qemu-m55", "qemu-m4"])
    ap.add_argument("--models", nargs="+", default=list(MLPERF_TINY), choices=MLPERF_TINY)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    try:
        rows = [row for name in args.models for row in measure(name, args.boards)]
    except mcuflow.McuflowError as e:
        print(f"init_phases: error: {e}", file=sys.stderr)
        return 1
    table = markdown(rows)
    print(table)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "markdown": table}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
