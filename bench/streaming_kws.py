"""Streaming keyword spotting on emulated boards: the zoo's ds_tcn_stream fed a long stream of
log-mel frames, one frame per invocation, on one session per board.

    .venv/bin/python bench/streaming_kws.py [--frames 200] [--boards qemu-m0,qemu-m4,qemu-m55]
        [--io int8|float32] [--json out.json]

For each board the model is compiled to int8 for the board's core (calibration: 300 frames of a
separate stream), built into the firmware harness (firmware/harness/main.cpp: one Session::bind,
then Session::run per frame, the states carried from frame to frame) and run over --frames
consecutive evaluation frames. The host runtime runs the same frames from the initial state.
Printed, per board: instructions (QEMU) per frame (the harness's counter around Session::run:
median, nearest-rank p90 and p99, min and max over the frames, every frame's count in the JSON), the planned arena (states included) next to the liveness
lower bound with the states counted, the state bytes (rings and heads), flash (text + data of the
firmware, as mcuflow size counts it, and the program's share), and the frames whose detection
(argmax of the 12 scores) or whose raw output bytes differ between host and board.

--io int8 (the default) gives the program int8 frames (quantized on the host with the program's
input scale) and returns the raw int8 scores; --io float32 adds the quantization of the frame
and the dequantization of the scores to every run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

import mcuflow
from mcuflow import device, zoo
from mcuflow.bench import summarize
from mcuflow.boards import get_board
from mcuflow.outputs import write_file

ROOT = Path(__file__).resolve().parent
MODEL = "ds_tcn_stream"
CALIBRATION_FRAMES = 300


def _zoo_bench():
    """bench/zoo/run.py, for its input quantization and firmware footprint (one definition of each)."""
    spec = importlib.util.spec_from_file_location("zoo_bench", ROOT / "zoo" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_board(model, board: str, frames: np.ndarray, io: str, zoo_bench) -> dict:
    core = get_board(board).core
    program = mcuflow.compile(model.export(), target=core, calibration=model.calibration(CALIBRATION_FRAMES), io=io)
    inputs = zoo_bench.program_inputs(program, frames)
    fw = device.cached_build(program, board)
    outputs, counts = device.run_elf_on_inputs(fw, program, [[x[None]] for x in inputs], board, timeout=1200)
    on_board = np.concatenate([o[0] for o in outputs])
    program.reset_state()
    on_host = program.run(inputs)[0]
    raw_differs = [i for i in range(len(inputs)) if on_board[i].tobytes() != on_host[i].tobytes()]
    detection_differs = [i for i in range(len(inputs)) if on_board[i].argmax() != on_host[i].argmax()]
    states = [t for t in program.describe()["tensors"] if t["storage"] == "state"]
    footprint = zoo_bench.firmware_footprint(fw.elf)
    return {"board": board, "target": core, "io": io, "frames": len(inputs),
            "instructions_per_frame": summarize(counts), "instructions": counts,
            "arena": program.arena_bytes, "arena_lower_bound": program.arena_lower_bound,
            "state_bytes": sum(t["bytes"] for t in states), "states": {t["name"]: t["bytes"] for t in states},
            "flash_total": footprint["flash_total"], "flash_program": footprint["flash_program"],
            "detections": int(len(np.unique(on_host.argmax(1)))),
            "frames_detection_differs": detection_differs, "frames_raw_output_differs": raw_differs}


def markdown(rows: list[dict]) -> str:
    lines = ["| board | instructions (QEMU) per frame: median / p90 / p99 / min / max | arena (states included) / bound "
             "| ratio "
             "| states | flash (program) | frames differing: detection / raw output |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        per_frame = " / ".join(f"{r['instructions_per_frame'][k]:,}" for k in ("median", "p90", "p99", "min", "max"))
        lines.append(f"| {r['board']} | {per_frame} | {r['arena']:,} / {r['arena_lower_bound']:,} B | "
                     f"{r['arena'] / r['arena_lower_bound']:.3f} | {r['state_bytes']:,} B | "
                     f"{r['flash_total']:,} B ({r['flash_program']:,} B) | "
                     f"{len(r['frames_detection_differs'])} / {len(r['frames_raw_output_differs'])} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--boards", default="qemu-m0,qemu-m4,qemu-m55")
    ap.add_argument("--io", default="int8", choices=["int8", "float32"])
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.frames < 1:
        ap.error("--frames must be at least 1")
    model = zoo.get(MODEL)
    frames = model.evaluation(args.frames)
    zoo_bench = _zoo_bench()
    rows = []
    for board in args.boards.split(","):
        print(f"{board}: compiling, building and running {args.frames} frames", file=sys.stderr, flush=True)
        rows.append(bench_board(model, board, frames, args.io, zoo_bench))
    print(f"{MODEL}, io {args.io}, {args.frames} frames, int8, calibration {CALIBRATION_FRAMES} frames of "
          f"another stream; {rows[0]['detections']} classes detected over the stream on the host\n")
    print(markdown(rows))
    if args.json:
        write_file(args.json, json.dumps({"model": MODEL, "rows": rows}, indent=1))
    differs = any(r["frames_detection_differs"] or r["frames_raw_output_differs"] for r in rows)
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
