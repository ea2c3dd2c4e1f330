"""Calibration range observers on trained models: held-out accuracy and top-1 agreement with the
float model of each int8 program, per observer (docs/quantization.md, "The observers").

    .venv/bin/python bench/observers_trained.py [--seeds 0 1 2] [--calibration 200]

Two trained classifiers, trained here deterministically on one thread (seconds to a minute each):
- digits: the digits demo's CNN (examples/digits/train.py) on scikit-learn's 8x8 digits, its
  fixed 450-image held-out split;
- keywords: the zoo's DS-CNN (MLPerf Tiny KWS) trained on synthetic keyword clips: the zoo's
  MFCC-like background (mcuflow.zoo.mlperf.mfcc_frames) plus one of 12 class "words" (three
  segments of spectral shape in sequence, at a random time, width and gain); 6,000 training
  clips, 2,000 held out.
Each model is compiled for cortex-m55 with float32 I/O on `--calibration` training inputs with each
observer (and with bias correction, and with int4 weights without and with it: CONFIGS), run on the host runtime (the device's integers) over the held-out inputs, and compared
with the labels and with the float model's top-1. The Markdown table goes to stdout with the
command and commit; progress to stderr.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

import mcuflow
from mcuflow.zoo.mlperf import DSCNN, mfcc_frames

ROOT = Path(__file__).resolve().parent.parent
OBSERVERS = ("minmax", "percentile", "mse", "entropy")
# Each observer with mcuflow's default bias correction (int4 layers only: none here), then the default
# observer with bias correction on every layer, and int4 weights (W4A8) without and with it.
CONFIGS = [(o, dict(observer=o)) for o in OBSERVERS] + [
    ("mse, bias correction", dict(observer="mse", bias_correction=True)),
    ("mse, W4A8, no bias correction", dict(observer="mse", weights="int4", bias_correction=False)),
    ("mse, W4A8 (bias correction)", dict(observer="mse", weights="int4")),
]
KEYWORDS, KEYWORD_TRAIN, KEYWORD_HELD_OUT, KEYWORD_EPOCHS = 12, 6000, 2000, 8


def digits(seed: int):
    """(model, training inputs, held-out inputs, held-out labels) of the digits demo's CNN."""
    sys.path.insert(0, str(ROOT / "examples" / "digits"))
    import train  # examples/digits/train.py
    model, splits = train.train(seed=seed)
    return model, splits.train.images, splits.held_out.images, splits.held_out.labels


def keyword_clips(rng: np.random.Generator, n: int, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`n` synthetic keyword clips (n, 1, 49, 10) and their labels: the zoo's MFCC-like background
    plus the label's word, three segments of spectral shape across the word's envelope."""
    spread = np.array([8.0, 4.0, 3.0, 2.0, 1.5, 1.2, 1.0, 0.8, 0.7, 0.6], dtype=np.float32)
    labels = rng.integers(0, len(words), n)
    frames = np.arange(49)
    centre, width = rng.uniform(14, 34, (n, 1)), rng.uniform(5, 10, (n, 1))
    envelope = np.exp(-0.5 * ((frames - centre) / width) ** 2)
    segment = np.clip(((frames - centre) / width + 1.5).astype(int), 0, 2)  # (n, 49): 0, 1, 2
    word = np.take_along_axis(words[labels], segment[..., None].repeat(10, 2), 1)  # (n, 49, 10)
    gain = rng.uniform(0.5, 1.5, (n, 1, 1))
    x = mfcc_frames(rng, n)[:, 0] + 0.9 * gain * spread * word * envelope[..., None]
    return x[:, None].astype(np.float32), labels


def keywords(seed: int):
    """(model, training inputs, held-out inputs, held-out labels) of a DS-CNN trained on keyword_clips."""
    words = np.random.default_rng(1000 + seed).standard_normal((KEYWORDS, 3, 10))
    x_train, y_train = keyword_clips(np.random.default_rng(2000 + seed), KEYWORD_TRAIN, words)
    x_held, y_held = keyword_clips(np.random.default_rng(3000 + seed), KEYWORD_HELD_OUT, words)
    torch.manual_seed(seed)
    model = DSCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    inputs, labels = torch.from_numpy(x_train), torch.from_numpy(y_train)
    shuffle = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(KEYWORD_EPOCHS):
        for batch in torch.randperm(len(labels), generator=shuffle).split(64):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs[batch]), labels[batch]).backward()
            optimizer.step()
    return model.eval(), x_train, x_held, y_held


MODELS = {"digits": digits, "keywords": keywords}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="training seeds per model")
    parser.add_argument("--calibration", type=int, default=200, help="training inputs calibrating each program")
    args = parser.parse_args()
    torch.set_num_threads(1)  # deterministic training, whatever the core count

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    print(f"`{shlex.join(['bench/observers_trained.py'] + sys.argv[1:])}` at commit {commit}; int8 programs "
          f"(cortex-m55, float32 I/O) on the host runtime over the held-out inputs, calibrated on "
          f"{args.calibration} training inputs\n")
    print("| model | seed | held out | float accuracy | calibration | program accuracy | top-1 = float | output SNR dB | compile s |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    totals = {label: [0, 0] for label, _ in CONFIGS}
    for name in args.models:
        for seed in args.seeds:
            print(f"training {name} seed {seed}", file=sys.stderr, flush=True)
            model, train_inputs, held_out, labels = MODELS[name](seed)
            with torch.no_grad():
                float_out = model(torch.from_numpy(held_out)).numpy()
            float_top1 = float_out.argmax(1)
            ep = torch.export.export(model, (torch.from_numpy(held_out[:1]),))
            for label, options in CONFIGS:
                start = time.perf_counter()
                program = mcuflow.compile(ep, "cortex-m55", train_inputs[:args.calibration], **options)
                seconds = time.perf_counter() - start
                out = program.run([held_out])[0].reshape(float_out.shape)
                top1 = out.argmax(1)
                snr = 10 * np.log10(np.sum(float_out ** 2) / np.sum((out - float_out) ** 2))
                agree = int((top1 == float_top1).sum())
                totals[label][0] += agree
                totals[label][1] += len(labels)
                print(f"| {name} | {seed} | {len(labels)} | {np.mean(float_top1 == labels):.2%} | {label} | "
                      f"{np.mean(top1 == labels):.2%} | {agree / len(labels):.2%} | {snr:.1f} | {seconds:.1f} |",
                      flush=True)
    print("\nAll held-out inputs together, top-1 agreement with float: " +
          ", ".join(f"{o} {a / n:.3%} ({n - a} differ)" for o, (a, n) in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
