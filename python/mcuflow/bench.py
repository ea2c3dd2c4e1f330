"""`mcuflow bench`: latency of a program on an emulated board, the way the measurement worksheet
asks — initialization and the cold first inference separately, declared warm-up, a fixed number
of measured runs (median, p90, p99, min, max and every raw observation), a per-op profile, and
the full application path next to inference alone.

The firmware is firmware/harness/bench.cpp around the program (device.cached_build). Under QEMU
with -icount the board counter counts guest instructions exactly (firmware/README.md), so the
unit is "instructions (QEMU)": deterministic, never cycles or milliseconds. A real board's
harness would read the DWT cycle counter; the JSON's "unit" says which one a record holds.
"""

from __future__ import annotations

import math
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from .api import Program
from .boards import board_named
from .device import cached_build, check_board, run_harness, write_input_files
from .firmware_sources import kernel_tier
from .errors import InputError
from .measure import analyze, measurement_record, parse_stack, sample_inputs

MAX_RUNS = 100_000
_LINE = re.compile(r"^mcuflow-bench: (\w+)((?: \d+)+)$")
_INIT_LINE = re.compile(r"^mcuflow-(init|wake): (\w+)((?: \d+)+)$")  # Verify::kFull, Verify::kStructure
# runtime/include/mcuflow/runtime/load_profile.h's Phase, in order: what each phase checks.
INIT_PHASES = (
    ("header", "magic, version, header fields and sections"),
    ("checksum", "the CRC-32s: the structure's, and at Verify::kFull the data's (weights, tables, metadata)"),
    ("tensors", "every tensor record"),
    ("io", "the input and output table"),
    ("op_checks", "each op's record and its kernel adapter's check (prepared tables apart)"),
    ("prepared_tables", "prepared tables compared with their recomputation, inside the adapters' checks"),
    ("overlaps", "each op's slots that share bytes, against its kernel's aliasing contract"),
    ("dataflow", "def before use of every byte each op and the program outputs read"),
    ("copies", "copied constants and states: no other write or copy shares their bytes"),
    ("bind_checks", "Session::bind: the memory regions given"),
    ("bind_copies", "Session::bind: constants copied into RAM, the states' initial values"),
)
_OP_PHASES = ("op_checks", "prepared_tables", "overlaps", "dataflow")  # per op, load_profile.h's order


def inference_ops(program: Program) -> tuple[int, int]:
    """[first, end): the ops between the input quantization and the output dequantization that
    a float-I/O program adds around the int8 inference (all ops for other programs)."""
    kinds = [op["kind"] for op in program.metadata.get("ops", [])]
    first, end = 0, len(kinds)
    while first < end and kinds[first] == "quantize_input":
        first += 1
    while end > first and kinds[end - 1] == "dequantize_output":
        end -= 1
    return first, end


def summarize(values: list[int]) -> dict:
    """Median (an integer unless two middle values differ by an odd count), nearest-rank p90/p99,
    min, max."""
    s = sorted(values)
    median = statistics.median(s)

    def rank(q: float) -> int:
        return s[max(0, math.ceil(q * len(s)) - 1)]

    return {"median": int(median) if median == int(median) else median, "p90": rank(0.90), "p99": rank(0.99),
            "min": s[0], "max": s[-1], "runs": len(s)}


def parse_output(stdout: str) -> dict[str, list[list[int]]]:
    """'mcuflow-bench: <region> <numbers...>' lines, grouped by region."""
    lines: dict[str, list[list[int]]] = {}
    for line in stdout.splitlines():
        m = _LINE.match(line.strip())
        if m:
            lines.setdefault(m.group(1), []).append([int(v) for v in m.group(2).split()])
    return lines


def parse_init_phases(stdout: str, overhead: int, level: str = "init") -> dict:
    """The init_phases harness's lines of one verification level ("init": Verify::kFull, "wake":
    Verify::kStructure) as instructions per phase (and per op), each net of the counter overhead
    once per mark that closed it (the marks' cost is shown, not hidden)."""
    lines: dict[str, list[list[int]]] = {}
    for line in stdout.splitlines():
        m = _INIT_LINE.match(line.strip())
        if m and m.group(1) == level:
            lines.setdefault(m.group(2), []).append([int(v) for v in m.group(3).split()])
    marks, mark_cost = lines["marks"][0]
    phases = {INIT_PHASES[p][0]: n for p, n in lines["phase"]}
    ops: dict[int, dict[str, int]] = {}
    for i, p, n in lines.get("op", []):
        ops.setdefault(i, {})[INIT_PHASES[p][0]] = n
    return {
        "contains": ("one Program::load + Session::bind in a firmware built with MCUFLOW_LOAD_PROFILE: each phase "
                     "counts the instructions from its mark to the next (runtime/include/mcuflow/runtime/"
                     "load_profile.h); a mark adds about mark_cost to the phase before it (and its own instructions "
                     "between its two counter reads to none, but to total): the phases sum to about the exact "
                     "init plus marks x mark_cost"),
        "total": lines["total"][0][0] - overhead, "marks": marks, "mark_cost": mark_cost,
        "phases": phases, "phase_descriptions": dict(INIT_PHASES),
        "ops": [{"index": i, **{k: v.get(k, 0) for k in _OP_PHASES}} for i, v in sorted(ops.items())],
    }


def _ops(first: int, end: int) -> str:
    return "no ops" if end <= first else f"op {first}" if end == first + 1 else f"ops {first}..{end - 1}"


def _region_text(program: Program, first: int, end: int) -> dict[str, str]:
    n = len(program.metadata.get("ops", []))
    inference = f"{_ops(first, end)} via Session::run_op: inference alone"
    if first > 0:
        inference += f"; the input quantization ({_ops(0, first)}) runs untimed before it"
    if end < n:
        inference += f"; the output dequantization ({_ops(end, n)}) is not run"
    conversion = " (input quantization, inference, output dequantization)" if first > 0 or end < n else ""
    states = [t for t in program._host.tensors if t["storage"] == "state"]
    if states:
        inference += "; the states carry from run to run (each run continues the stream of the runs before)"
        reset = (f"Session::reset_state after the measured runs: the program's {len(states)} states "
                 f"({sum(t['bytes'] for t in states)} bytes) back to their initial values")
    else:
        reset = "Session::reset_state of a program without states (nothing to copy)"
    return {
        "init": ("Program::load at Verify::kFull (header, both CRC-32s: the whole program, every tensor and op "
                 "verified, prepared tables recomputed) + Session::bind: a first boot"),
        "wake_init": ("Program::load at Verify::kStructure (the structure's CRC-32 and every memory-safety check; "
                      "weights and prepared values unchecked) + Session::bind: a later wake"),
        "cold_inference": f"the first execution of {_ops(first, end)} after bind, timed as inference is",
        "warmup": f"further executions of {_ops(first, end)}, not counted in the statistics",
        "inference": inference,
        "application": f"Session::run over all {n} ops{conversion} + argmax over output 0: the full application path",
        "reset_state": reset,
    }


def progress_line(text: str) -> None:
    """One line on stderr saying which long step starts (stdout keeps only the report)."""
    print(f"mcuflow bench: {text}", file=sys.stderr, flush=True)


def run_bench(program: Program, board: str, *, warmup: int = 2, runs: int = 20, inputs=None,
              timeout: float = 300.0, progress: Callable[[str], None] | None = None) -> dict:
    """Builds (or reuses) the bench firmware, runs it once under QEMU and returns the record.
    ``progress`` is called with a line before each firmware build and board run (`mcuflow bench`
    passes progress_line)."""
    if not 0 <= warmup <= MAX_RUNS or not 1 <= runs <= MAX_RUNS:
        raise InputError(f"--warmup must be 0..{MAX_RUNS} and --runs 1..{MAX_RUNS} (got {warmup}, {runs})")
    note = progress or (lambda text: None)
    b = board_named(board)
    check_board(program, b)
    sample = sample_inputs(program) if inputs is None else _first_sample(program, inputs)
    note(f"building the bench firmware for {b.name} (reused when cached)")
    fw = cached_build(program, b.name, harness="bench")
    first, end = inference_ops(program)
    with tempfile.TemporaryDirectory(prefix="mcuflow-bench-") as work:
        w = Path(work)
        (w / "bench.bin").write_bytes(np.array([warmup, runs, first, end], dtype="<u4").tobytes())
        write_input_files(w, program, [sample])
        note(f"running {warmup} warm-up and {runs} measured inferences on {b.name}")
        stdout = run_harness(fw.elf, b.name, w, timeout)
        note(f"building and running the init-phase firmware on {b.name}")
        phases_fw = cached_build(program, b.name, harness="init_phases")
        phases_stdout = run_harness(phases_fw.elf, b.name, w, timeout)
    lines = parse_output(stdout)
    overhead = lines["overhead"][0][0]

    def net(values):
        return [v - overhead for v in values]

    ops_meta = program.metadata.get("ops", [])
    op_counts = net([v for _, v in lines.get("op", [])])
    profile_total = sum(op_counts)
    profile = [{"index": i, "kind": op["kind"], "kernel": op["kernel"], "tier": kernel_tier(op["kernel"]),
                "macs": op["macs"], "instructions": n,
                "share": n / profile_total if profile_total else 0.0,
                "region": "inference" if first <= i < end else "io_conversion"}
               for i, (op, n) in enumerate(zip(ops_meta, op_counts))]
    text = _region_text(program, first, end)
    regions = {
        "init": {"contains": text["init"], "observations": net([lines["init"][0][0]]),
                 "phases": parse_init_phases(phases_stdout, overhead)},
        "wake_init": {"contains": text["wake_init"], "observations": net([lines["wake"][0][0]]),
                      "phases": parse_init_phases(phases_stdout, overhead, "wake")},
        "cold_inference": {"contains": text["cold_inference"], "observations": net([lines["cold"][0][0]])},
        "warmup": {"contains": text["warmup"], "observations": net([v for _, v in lines.get("warmup", [])])},
        "reset_state": {"contains": text["reset_state"], "observations": net([lines["reset"][0][0]])},
    }
    for name in ("inference", "application"):
        observations = net([v for _, v in lines[name]])
        regions[name] = {"contains": text[name], **summarize(observations), "observations": observations}
    regions["inference"]["ops"] = [first, end]
    stack = parse_stack(stdout)
    size, _ = analyze(fw.elf, fw.map, fw.info or None)
    return {
        "record": measurement_record(program=program, board=b.name, build_info=fw.info),
        "unit": "instructions",
        "unit_description": (f"instructions (QEMU): guest instructions counted with qemu-system-arm -icount "
                             f"shift={b.icount_shift} through the board timer, exact and deterministic; "
                             f"not cycles, not time. On a real board the harness reads the DWT cycle counter."),
        "counter": {"source": "qemu-icount", "board_timer": b.timer,
                    "overhead_subtracted": overhead,
                    "overhead_note": "two back-to-back counter reads; subtracted from every observation"},
        "settings": {"warmup": warmup, "runs": runs, "input": "given" if inputs is not None else "seeded random"},
        "regions": regions,
        "argmax": lines["argmax"][0][0],
        "profile": {"contains": "one run, each op timed alone with Session::run_op", "total": profile_total,
                    "inference_ops_total": sum(p["instructions"] for p in profile if p["region"] == "inference"),
                    "ops": profile},
        "memory": {"stack_high_water": stack[0] if stack else None, "stack_reserved": stack[1] if stack else None,
                   # the bench firmware's, as `mcuflow size` counts them
                   "flash_bytes": size["flash"]["total"], "static_ram_bytes": size["ram"]["static_total"],
                   "arena_bytes": program.arena_bytes,
                   # per region: the highest byte one run wrote (painted twice), and what the plan says
                   "arena_reached": [v for _, v in lines.get("arena", [])],
                   "arena_planned": planned_arena_tops(program)},
        "firmware": {"elf": str(fw.elf), "build_info": str(fw.build_info)},
    }


def planned_arena_tops(program: Program) -> list[int]:
    """Per memory region, the end of the highest tensor the plan places there (arena tensors, and
    weights copied and states placed there at bind): the bytes a run can touch (the region's size
    adds only alignment)."""
    tops = [0] * len(program.region_bytes)
    for t in program._host.tensors:
        if t["storage"] in ("arena", "copied", "state"):
            start = t["offset"] if t["storage"] == "arena" else t["copy_offset"]
            tops[t["region"]] = max(tops[t["region"]], start + t["bytes"])
    return tops


def _first_sample(program: Program, inputs: list[np.ndarray]) -> list[np.ndarray]:
    arrays, _, batched = program._batched_inputs(inputs)
    return [a[:1] if batched else a for a in arrays]


def format_report(r: dict, program_path: str) -> str:
    rec = r["record"]
    lines = [f"mcuflow bench: {program_path} on {rec['board']} ({rec['target']} program, {rec['precision']}), "
             f"warm-up {r['settings']['warmup']}, {r['settings']['runs']} measured runs",
             f"unit: instructions (QEMU), counter overhead of {r['counter']['overhead_subtracted']} subtracted; "
             "not cycles",
             "", f"{'region':<26} {'median':>12} {'p90':>12} {'p99':>12} {'min':>12} {'max':>12}"]
    for name, label in (("init", "init (load+verify+bind)"), ("wake_init", "init on a later wake"),
                        ("cold_inference", "cold first inference"), ("reset_state", "reset_state")):
        v = r["regions"][name]["observations"][0]
        lines.append(f"{label:<26} {v:>12}")
    for name in ("inference", "application"):
        s = r["regions"][name]
        lines.append(f"{name:<26} {s['median']:>12} {s['p90']:>12} {s['p99']:>12} {s['min']:>12} {s['max']:>12}")
    for name in ("inference", "application"):
        lines.append(f"  {name}: {r['regions'][name]['contains']}")
    for region, level in (("init", "Verify::kFull"), ("wake_init", "Verify::kStructure")):
        phases = r["regions"][region]["phases"]
        lines += ["", f"{region} by phase ({level}; one load + bind with {phases['marks']} phase marks of about "
                      f"{phases['mark_cost']} instructions each: {phases['total']} in all):"]
        for name, n in phases["phases"].items():
            lines.append(f"  {name:<16} {n:>12}  {phases['phase_descriptions'][name]}")
    lines += ["", "per-op profile (one run):",
              f"{'#':>3}  {'kind':<20} {'kernel':<22} {'tier':<9} {'MACs':>9} {'instructions':>13} {'share':>7}"]
    for p in r["profile"]["ops"]:
        lines.append(f"{p['index']:>3}  {p['kind']:<20} {p['kernel']:<22} {p['tier']:<9} {p['macs']:>9} "
                     f"{p['instructions']:>13} {p['share']:>7.1%}")
    lines.append(f"{'':>3}  {'total':<20} {'':<22} {'':<9} {'':>9} {r['profile']['total']:>13}")
    mem = r["memory"]
    reached = ", ".join(f"{r} of {p}" for r, p in zip(mem["arena_reached"], mem["arena_planned"]))
    lines.append(f"\nstack high water {mem['stack_high_water']} of {mem['stack_reserved']} bytes; "
                 f"arena {mem['arena_bytes']} bytes, reached by one run (painted): {reached} planned bytes per "
                 f"region; program sha256 {rec['program_sha256']}")
    return "\n".join(lines)
