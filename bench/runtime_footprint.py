"""The runtime's own footprint on every board: a firmware around a one-op program (a Linear
layer, int8 in and out: one fc kernel), measured with `mcuflow size` (ELF sections + linker
map; totals reconcile with arm-none-eabi-size). Prints a Markdown table.

    .venv/bin/python bench/runtime_footprint.py [--boards qemu-m55 ...] [--json]

Runtime core = loader + verifier + executor (runtime/src: program.cpp, crc32.cpp, error.cpp),
built with -Os like every `mcuflow firmware`. Adapters are the per-op checks and calls
(runtime/src/ops) the one op needs; the kernel is built with -O3. RAM is the runtime's own
.data + .bss; the stack high-water mark is the whole firmware's (harness and semihosting
included), measured under QEMU.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import torch

import mcuflow
from mcuflow import boards, device, measure

KiB = 1024
CORE_BUDGET = 4 * KiB  # the budget of the runtime core on cortex-m55 at -Os


def one_op_program(core: str) -> mcuflow.Program:
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 8).eval()
    example = (torch.randn(1, 16),)
    return mcuflow.compile(torch.export.export(model, example), target=core, io="int8",
                           calibration=[torch.randn(8, 16).numpy()])


def footprint(board_name: str, work: Path) -> dict:
    board = boards.get_board(board_name)
    print(f"runtime_footprint: {board_name}", file=sys.stderr, flush=True)
    program = one_op_program(board.core)
    fw = device.build(program, board_name, work / board_name)
    report = measure.size_report(fw.elf)
    groups = {c["group"]: c for c in report["flash"]["components"]}
    runtime_groups = ("runtime_core", "kernel_adapters", "kernel_table", "kernels")
    ram_owned = sum(sum(report["ram"]["by_component"].get(g, {}).values()) for g in runtime_groups)
    flash = {g: groups[g]["bytes"] if g in groups else 0 for g in runtime_groups}
    return {
        "board": board_name, "core": board.core, "kernels": list(report["flash"]["kernels"]),
        "flash": flash, "runtime_total": sum(flash.values()), "runtime_ram": ram_owned,
        "stack_high_water": report["ram"]["stack_high_water"], "core_items": groups["runtime_core"]["items"],
        "firmware_total": report["flash"]["total"], "record": report["record"],
    }


def markdown(rows: list[dict]) -> str:
    lines = ["| board | core | runtime core (loader, verifier, executor) | adapters | kernel table | kernel | "
             "runtime + 1 kernel | runtime .data+.bss | stack high-water (whole firmware) |",
             "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        f = r["flash"]
        lines.append(f"| {r['board']} | {r['core']} | {f['runtime_core']} B | {f['kernel_adapters']} B | "
                     f"{f['kernel_table']} B | {', '.join(r['kernels'])}: {f['kernels']} B | {r['runtime_total']} B | "
                     f"{r['runtime_ram']} B | {r['stack_high_water']} B |")
    m55 = next((r for r in rows if r["core"] == "cortex-m55"), None)
    if m55:
        core = m55["flash"]["runtime_core"]
        items = ", ".join(f"{k} {v} B" for k, v in m55["core_items"].items())
        verdict = f"{CORE_BUDGET - core} B within" if core <= CORE_BUDGET else f"{core - CORE_BUDGET} B over"
        lines.append(f"\nRuntime core on cortex-m55 at -Os: {core} B ({items}), {verdict} the 4 KiB budget.")
    rec = rows[0]["record"]
    lines.append(f"Flash in bytes from `mcuflow size` (ELF sections + linker map); {rec['compiler']}; "
                 f"mcuflow {rec['mcuflow_version']} at {(rec['mcuflow_commit'] or '?')[:12]}. "
                 "Reproduce: `.venv/bin/python bench/runtime_footprint.py`.")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", nargs="+", default=boards.board_names())
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcuflow-footprint-") as work:
        try:
            rows = [footprint(b, Path(work)) for b in args.boards]
        except mcuflow.McuflowError as e:
            print(f"runtime_footprint: error: {e}", file=sys.stderr)
            return 1
    print(json.dumps(rows, indent=1) if args.json else markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
