"""int8 recurrent layers streamed one step per invocation against PyTorch float.

Each nn.GRU / nn.LSTM / nn.RNN (8 features in, 16 hidden, one and two layers) is wrapped in
mcuflow.streaming.StreamingRNN and compiled to int8 (hidden and cell state int8, LUT gates) for
cortex-m55. A sensor-like sequence (sines of random phase plus noise) is fed one step per call;
the table gives the error of the program's outputs against eager PyTorch over --steps steps,
with the calibration a separate 300-step sequence of the same kind, and with the test sequence
itself added to it (no value outside the calibrated ranges: what is left is resolution).

    .venv/bin/python bench/recurrent.py [--steps 50]
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
import torch

import mcuflow
from mcuflow.streaming import StreamingRNN

FEATURES, HIDDEN = 8, 16


def sequence(seed: int, steps: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(steps, dtype=torch.float32)[:, None]
    phase = 6.28 * torch.rand(1, FEATURES, generator=g)
    return torch.sin(0.3 * t + phase) + 0.3 * torch.randn(steps, FEATURES, generator=g)


def one_step_inputs(xs: torch.Tensor) -> list[torch.Tensor]:
    return [x.reshape(1, 1, FEATURES) for x in xs]


def errors(model, test: list[torch.Tensor], calibration: list[torch.Tensor]) -> tuple[float, float, float]:
    """(max |y|, mean and max absolute error) of the int8 program over the test steps."""
    ep = torch.export.export(copy.deepcopy(model), (test[0],))
    program = mcuflow.compile(ep, target="cortex-m55", precision="int8", calibration=[(x,) for x in calibration])
    eager = copy.deepcopy(model)
    with torch.no_grad():
        expected = np.concatenate([eager(x).numpy() for x in test])
    got = np.concatenate([program.run(x.numpy())[0] for x in test])
    error = np.abs(got - expected)
    return float(np.abs(expected).max()), float(error.mean()), float(error.max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    test = one_step_inputs(sequence(1, args.steps))
    calibration = one_step_inputs(sequence(2, 300))
    print("| layer | layers | max abs y | mean error | max error | mean / max error, test steps calibrated too |")
    print("|---|---|---|---|---|---|")
    for layer in (torch.nn.GRU, torch.nn.LSTM, torch.nn.RNN):
        for layers in (1, 2):
            torch.manual_seed(0)
            model = StreamingRNN(layer(FEATURES, HIDDEN, num_layers=layers, batch_first=True)).eval()
            spread, mean, worst = errors(model, test, calibration)
            _, mean_covered, worst_covered = errors(model, test, calibration + test)
            print(f"| {layer.__name__} | {layers} | {spread:.3f} | {mean:.4f} ({100 * mean / spread:.1f}%) | "
                  f"{worst:.4f} ({100 * worst / spread:.1f}%) | {mean_covered:.4f} / {worst_covered:.4f} "
                  f"({100 * worst_covered / spread:.1f}%) |")


if __name__ == "__main__":
    main()
