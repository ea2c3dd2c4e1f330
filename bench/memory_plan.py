"""Memory plans of the test models (tests/python/models.py) and the zoo (mcuflow.zoo): the
planned arena next to the liveness lower bound, in the exported op order without in-place
execution, with scheduling, and with scheduling and in-place execution.

    .venv/bin/python bench/memory_plan.py [--target cortex-m0] [--io float32|int8]
        [--models small_cnn,ds_cnn,...] [--patches 4,6 [--board qemu-m55]] [--json out.json]

Prints a Markdown table (and writes JSON with --json). Every figure is read from the compiled
programs' headers and plan reports; "bound" is the header's liveness lower bound for that plan,
"all in place" the bound with every in-place op the kernels allow. The target decides the
kernels, and with them which ops may run in place (docs/memory_planning.md).

--patches N,M adds a table of patch-based execution (compile(..., patches=N)), each band count
with the whole input in the arena and with the input streamed (stream_input=True: each band
fetches its input rows): the unpatched plan and bound next to each patched plan, the MACs the
bands recompute (halo rows) and, with --board, the instructions (QEMU) of one inference with
and without bands on that board (outputs checked equal to the host's).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from mcuflow.outputs import write_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

VARIANTS = {  # name: compile options
    "exported": dict(schedule=False, in_place=False),
    "scheduled": dict(in_place=False),
    "in_place": dict(),
}


def models(names):
    import torch
    from mcuflow import zoo
    from models import make_model

    for name in names:
        if name.startswith("zoo."):
            m = zoo.get(name[4:])
            yield name, m.export(), list(m.calibration(16))
        else:
            m = make_model(name)
            yield name, torch.export.export(m, m.example_input(seed=0)), [m.example_input(seed=s) for s in range(1, 17)]


def measure(name, ep, calibration, target, io):
    import mcuflow

    row = {"model": name}
    for variant, options in VARIANTS.items():
        start = time.perf_counter()
        p = mcuflow.compile(ep, target=target, calibration=calibration, io=io, **options)
        plan = p.describe()["plan"]
        row[variant] = {"arena": plan["arena"], "bound": p.arena_lower_bound,
                        "compile_s": round(time.perf_counter() - start, 2)}
        if variant == "in_place":
            row[variant].update(all_in_place=plan["lower_bound_all_in_place"], in_place_ops=len(plan["in_place"]),
                                method=plan["method"], optimal=plan["optimal"], excess=plan["excess"][:1])
    return row


def measure_patches(name, ep, calibration, target, io, patches, board):
    import mcuflow

    def macs(p):
        return sum(op["macs"] for op in p.describe()["ops"])

    def instructions(p, x):
        from mcuflow import device

        fw = device.cached_build(p, board)
        outputs, counts = device.run_elf_on_inputs(fw, p, [[x]], board, timeout=600)
        assert np.array_equal(outputs[0][0], p.run([x])[0]), f"{name}: {board} differs from the host"
        return counts[0]

    plain = mcuflow.compile(ep, target=target, calibration=calibration, io=io)
    x = sample_input(plain)
    row = {"model": name, "arena": plain.arena_bytes, "bound": plain.arena_lower_bound, "macs": macs(plain),
           "instructions": instructions(plain, x) if board else None, "patched": []}
    for n in patches:
        for stream_input in (False, True):
            p = mcuflow.compile(ep, target=target, calibration=calibration, io=io, patches=n,
                                stream_input=stream_input)
            # Band outputs inside the stage output leave no cat op (their copies are dropped): the plan lists them.
            banded = bool(p.describe()["plan"]["embedded"]) or any(op["kernel"].startswith("concat_slice")
                                                                   for op in p.describe()["ops"])
            assert np.array_equal(p.run([x])[0], plain.run([x])[0]), f"{name}: {n} bands change the output"
            row["patched"].append({"patches": n, "input": "streamed" if p.inputs[0].get("streamed") else "whole",
                                   "kept": banded, "arena": p.arena_bytes, "bound": p.arena_lower_bound,
                                   "macs": macs(p), "instructions": instructions(p, x) if board and banded else None})
    return row


def sample_input(program):
    """One deterministic input in the program's dtype (int8: uniform over the whole range)."""
    spec = program.inputs[0]
    rng = np.random.default_rng(0)
    if spec["dtype"] == np.int8:
        return rng.integers(-128, 128, size=spec["shape"]).astype(np.int8)
    return rng.standard_normal(spec["shape"]).astype(np.float32)


def patches_markdown(rows, board):
    lines = ["| model | unpatched: arena / bound | bands | input | patched: arena / bound | arena / unpatched bound "
             "| MACs recomputed" + (f" | instructions (QEMU, {board}): unpatched → patched" if board else "") + " |",
             "|---|---|---|---|---|---|---" + ("|---" if board else "") + "|"]
    for r in rows:
        for q in r["patched"]:
            if not q["kept"]:
                lines.append(f"| {r['model']} | {r['arena']} / {r['bound']} | {q['patches']} | {q['input']} | "
                             "not kept (no smaller plan) | | |" + (" |" if board else ""))
                continue
            line = (f"| {r['model']} | {r['arena']} / {r['bound']} | {q['patches']} | {q['input']} | "
                    f"{q['arena']} / {q['bound']} | "
                    f"{q['arena'] / r['bound']:.2f} | +{(q['macs'] - r['macs']) / r['macs']:.1%} |")
            if board:
                line += (f" {r['instructions']:,} → {q['instructions']:,} "
                         f"(+{(q['instructions'] - r['instructions']) / r['instructions']:.1%}) |")
            lines.append(line)
    return "\n".join(lines)


def markdown(rows):
    lines = ["| model | exported order: arena / bound | scheduled: arena / bound | + in place: arena / bound "
             "(ratio) | all in place: bound | in-place ops |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        e, s, i = r["exported"], r["scheduled"], r["in_place"]
        lines.append(f"| {r['model']} | {e['arena']} / {e['bound']} | {s['arena']} / {s['bound']} | "
                     f"{i['arena']} / {i['bound']} ({i['arena'] / i['bound']:.3f}) | {i['all_in_place']} | "
                     f"{i['in_place_ops']} |")
    return "\n".join(lines)


def main(argv=None):
    from mcuflow import zoo

    default = ["small_cnn", "ds_cnn", "resnet"] + [f"zoo.{n}" for n in zoo.names()]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="cortex-m0")
    ap.add_argument("--io", default="float32", choices=["float32", "int8"])
    ap.add_argument("--models", default=",".join(default))
    ap.add_argument("--patches", help="comma-separated band counts: only the patch-based execution table")
    ap.add_argument("--board", help="with --patches: count instructions (QEMU) on this board, e.g. qemu-m55")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.patches:
        patches = [int(n) for n in args.patches.split(",")]
        rows = [measure_patches(n, ep, c, args.target, args.io, patches, args.board)
                for n, ep, c in models(args.models.split(","))]
        print(f"target {args.target}, io {args.io}; bytes\n\n" + patches_markdown(rows, args.board))
        if args.json:
            write_file(args.json, json.dumps({"target": args.target, "io": args.io, "rows": rows}, indent=1))
        return
    rows = [measure(n, ep, c, args.target, args.io) for n, ep, c in models(args.models.split(","))]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"target {args.target}, io {args.io}, commit {commit}; bytes\n")
    print(markdown(rows))
    for r in rows:
        for line in r["in_place"]["excess"]:
            print(f"\n{r['model']}: {line}")
    if args.json:
        write_file(args.json, json.dumps({"target": args.target, "io": args.io, "commit": commit, "rows": rows},
                                         indent=1))


if __name__ == "__main__":
    main()
