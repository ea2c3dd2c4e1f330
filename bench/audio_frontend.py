"""The log-mel front end alone (mcuflow.audio.LogMel) on emulated boards: instructions (QEMU) per
frame and error against the numpy reference, int8 and fp32.

    .venv/bin/python bench/audio_frontend.py [--frames 10] [--clips 3] [--boards qemu-m4,qemu-m55]
        [--json out.json]

LogMel with its defaults (16 kHz, n_fft = window 512, hop 160, 40 HTK mels, log(mel + 1e-6), no
normalization) over clips of --frames frames (512 + 160 (frames - 1) samples) of coloured noise
(mcuflow.audio.coloured_noise), float32 samples in and features out. int8: calibrated on 16 other
clips with 99th-percentile ranges (minmax ranges spend the power's 8 bits on rare peaks).
Printed per board and precision: the instructions (QEMU) of one Session::run (the firmware
harness's counter) divided by the frames, median over the clips; the mean and max |board -
reference| in nats over every feature of the clips; whether every clip's output is bit-identical
to the host runtime's.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import torch

import mcuflow
from mcuflow import device
from mcuflow.audio import LogMel, coloured_noise, log_mel_reference
from mcuflow.bench import summarize
from mcuflow.boards import get_board
from mcuflow.outputs import write_file

CALIBRATION_CLIPS = 16


def clips(seed: int, n: int, samples: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [coloured_noise(rng, samples) for _ in range(n)]


def compile_front_end(model: LogMel, samples: int, precision: str, core: str):
    ep = torch.export.export(model, (torch.from_numpy(clips(99, 1, samples)[0])[None],))
    if precision == "fp32":
        return mcuflow.compile(ep, target=core, precision="fp32")
    calibration = [(torch.from_numpy(x)[None],) for x in clips(7, CALIBRATION_CLIPS, samples)]
    return mcuflow.compile(ep, target=core, calibration=calibration, observer="percentile", percentile=99.0)


def bench(board: str, precision: str, frames: int, n_clips: int) -> dict:
    model = LogMel().eval()
    samples = model.win_length + model.hop_length * (frames - 1)
    program = compile_front_end(model, samples, precision, get_board(board).core)
    xs = clips(3, n_clips, samples)
    outputs, counts = device.run_elf_on_inputs(device.cached_build(program, board), program,
                                               [[x[None]] for x in xs], board, timeout=1200)
    on_board = [o[0][0] for o in outputs]
    bit_exact = all(b.tobytes() == program.run([x[None]])[0][0].tobytes() for b, x in zip(on_board, xs))
    errors = np.concatenate([np.abs(b - log_mel_reference(x)).ravel() for b, x in zip(on_board, xs)])
    per_frame = summarize([c / frames for c in counts])["median"]
    return {"board": board, "precision": precision, "frames": frames, "samples": samples,
            "instructions_per_frame": round(per_frame), "instructions": counts,
            "error_mean_nats": float(errors.mean()), "error_max_nats": float(errors.max()),
            "bit_exact_with_host": bit_exact, "kernels": program.kernels}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--clips", type=int, default=3)
    ap.add_argument("--boards", default="qemu-m4,qemu-m55")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.frames < 1 or args.clips < 1:
        ap.error("--frames and --clips must be at least 1")
    rows = []
    for board in args.boards.split(","):
        for precision in ("int8", "fp32"):
            print(f"{board} {precision}: compiling, building and running", file=sys.stderr, flush=True)
            rows.append(bench(board, precision, args.frames, args.clips))
    print(f"LogMel defaults, {args.frames} frames x {args.clips} clips of coloured noise\n")
    print("| board | precision | instructions (QEMU) per frame | error vs numpy, nats: mean / max | host == board |")
    print("|---|---|---:|---|---|")
    for r in rows:
        print(f"| {r['board']} | {r['precision']} | {r['instructions_per_frame']:,} | "
              f"{r['error_mean_nats']:.3g} / {r['error_max_nats']:.3g} | {'yes' if r['bit_exact_with_host'] else 'NO'} |")
    if args.json:
        write_file(args.json, json.dumps({"rows": rows}, indent=1))
    return 0 if all(r["bit_exact_with_host"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
