"""An ideal fake-quant simulation of an exported model: every float32 result of the graph is
rounded onto an asymmetric int8 grid of its calibration range (min/max, as mcuflow's default
observer chooses it), in float arithmetic, with float weights. Its error against the float
model is the error int8 activations alone cause; a compiled int8 program should stay close to
it. Independent of mcuflow: it runs the exported graph's nodes with torch."""

from __future__ import annotations

import numpy as np
import torch
import torch.fx


def _int8_grid(lo: float, hi: float) -> tuple[float, float]:
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi - lo >= 1e-6 else 1.0 / 255.0
    return scale, float(np.clip(np.round(-128.0 - lo / scale), -128, 127))


def fake_quant_model(exported_program, calibration):
    """A function of a batch of inputs computing the exported model with int8 activations;
    ``calibration``: an array of samples along dim 0 (each run as a batch of one)."""
    module = exported_program.module()
    ranges: dict[str, tuple[float, float]] = {}

    class Observe(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            if n.op in ("call_function", "placeholder") and isinstance(r, torch.Tensor) and r.dtype == torch.float32:
                lo, hi = ranges.get(n.name, (0.0, 0.0))
                ranges[n.name] = (min(lo, float(r.min())), max(hi, float(r.max())))
            return r

    class FakeQuant(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            if n.name in ranges and isinstance(r, torch.Tensor) and r.dtype == torch.float32:
                scale, zp = _int8_grid(*ranges[n.name])
                r = (torch.clamp(torch.round(r / scale) + zp, -128, 127) - zp) * scale
            return r

    with torch.no_grad():
        for i in range(len(calibration)):
            Observe(module).run(torch.from_numpy(np.asarray(calibration[i:i + 1])))

    def run(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return np.concatenate([FakeQuant(module).run(torch.from_numpy(x[i:i + 1])).numpy() for i in range(len(x))])

    return run
