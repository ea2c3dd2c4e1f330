"""Seed corpus for the libFuzzer target (tests/fuzz/fuzz_program.cpp): device images of small
models covering every tier (cortex-m0 scalar, cortex-m4 DSP, cortex-m55 MVE), int8 and fp32.

    .venv/bin/python tests/fuzz/make_corpus.py DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import mcuflow

TARGETS = ("cortex-m0", "cortex-m4", "cortex-m55")


class ConvNet(torch.nn.Module):
    """Conv, depthwise conv, add, ReLU, max and average pool, linear, softmax."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(2, 8, 3, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = torch.nn.Conv2d(8, 8, 1)
        self.fc = torch.nn.Linear(8 * 2 * 2, 4)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = F.max_pool2d(x + F.relu(self.pw(self.dw(x))), 2)
        x = F.avg_pool2d(x, 2)
        return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.a, self.b = torch.nn.Linear(12, 16), torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.b(torch.sigmoid(self.a(x)) * x.mean(dim=1, keepdim=True))


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    written = 0
    for model, shape in ((ConvNet(), (1, 2, 8, 8)), (Mlp(), (1, 12))):
        samples = [(torch.from_numpy(rng.standard_normal(shape, dtype=np.float32)),) for _ in range(8)]
        ep = torch.export.export(model.eval(), samples[0])
        for target in TARGETS:
            for precision in ("int8", "fp32"):
                program = mcuflow.compile(ep, target=target, precision=precision,
                                          calibration=samples if precision == "int8" else None)
                name = f"{type(model).__name__.lower()}_{target}_{precision}.mfp"
                (out / name).write_bytes(program.device_image)
                written += 1
    print(f"{written} programs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
