"""Differential test of views and data movement over ranks 1-6: random chains of
reshape/permute/transpose/slice/select/unbind/split/cat with element-wise ops that mix
positions (tests/python/random_chains.py), compiled in fp32 and int8 and compared with PyTorch
eager: shapes exactly PyTorch's, fp32 within 1e-5 of each output's range, int8 within the
suite's int8 bound (3 output steps + 5% of the output range, as tests/python/test_models.py).
Nothing may compile and return a wrong result.

MODULES x CHAINS graphs per precision run by default (>= 1000); MCUFLOW_LARGE_SWEEP=1 runs ten
times as many. A failure names the seed and chain: `Chains(seed, CHAINS, input_shape_for(seed))
.describe(i)` prints it."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcuflow  # noqa: E402
from random_chains import Chains, apply, input_shape_for  # noqa: E402

CHAINS = 20
MODULES = 50 * (10 if os.environ.get("MCUFLOW_LARGE_SWEEP") == "1" else 1)
TARGET = "cortex-m55"


def export(seed):
    model = Chains(seed, CHAINS, input_shape_for(seed)).eval()
    example = torch.randn(model.input_shape, generator=torch.Generator().manual_seed(seed))
    return model, torch.export.export(model, (example,))


def eager(model, x):
    with torch.no_grad():
        return [y.numpy() for y in model(torch.from_numpy(x))]


def sample(shape, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).numpy()


def output_steps(program):
    """The int8 step of each model output: the scale of what its dequantize op reads (those ops'
    float outputs are the program's last tensors, in output order)."""
    d = program.describe()
    ops = sorted((op for op in d["ops"] if op["kind"] == "dequantize_output"), key=lambda op: op["outputs"][0])
    return [d["tensors"][op["inputs"][0]]["scale"] for op in ops]


def check(model, seed, outs, refs, tolerance):
    assert len(outs) == len(refs)
    for i, (out, ref) in enumerate(zip(outs, refs)):
        where = f"seed {seed} chain {i}: {model.describe(i)}"
        assert out.shape == ref.shape, f"{where}: shape {out.shape}, PyTorch {ref.shape}"
        err = float(np.abs(out - ref).max())
        assert err <= tolerance(i, ref), f"{where}: max error {err:.3g}, range {float(np.ptp(ref)):.3g}"


@pytest.mark.parametrize("seed", range(MODULES))
def test_random_chains_match_eager_fp32_and_int8(seed):
    model, ep = export(seed)
    x = sample(model.input_shape, 10_000 + seed)
    refs = eager(model, x)

    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    check(model, seed, fp32.run(x), refs, lambda i, ref: 1e-5 * max(float(np.ptp(ref)), 1.0))

    # x is one of the calibration samples: every value lies inside the calibrated ranges, so
    # the bound measures rounding, not clipping.
    calibration = [(torch.from_numpy(sample(model.input_shape, s)),) for s in range(7)] + [(torch.from_numpy(x),)]
    int8 = mcuflow.compile(ep, target=TARGET, calibration=calibration)
    steps = output_steps(int8)
    assert len(steps) == CHAINS
    check(model, seed, int8.run(x), refs, lambda i, ref: 3 * steps[i] + 0.05 * float(np.ptp(ref)))


def test_chains_cover_every_rank_and_op():
    """The sample exercises what it claims: every rank 1-6 as a chain input or output of some op,
    and every op kind."""
    ranks, kinds = set(), set()
    for seed in range(MODULES):
        model = Chains(seed, CHAINS, input_shape_for(seed))
        t0 = torch.zeros(model.input_shape)
        consts = model.consts()
        for specs in model.chains:
            t = t0
            for spec in specs:
                t = apply(spec, t, consts)
                ranks.add(t.dim())
                kinds.add(spec[0])
    assert ranks == set(range(1, 7))
    assert kinds >= {"reshape", "permute", "transpose", "slice", "select", "unbind", "split", "squeeze", "unsqueeze",
                     "cat_roll", "cat_pieces", "cat_scaled", "mul_const", "add_halves", "unbind_mix"}


# --------------------------------------------------------------------------------------------
# Graphs that once returned a wrong result or an internal error, by name.


class QkvMix(torch.nn.Module):
    """The packed q/k/v of ViT attention, unbound along the leading dim of a rank-5 permute."""

    def forward(self, x):
        B, N, C = x.shape
        H = 2
        q, k, v = x.reshape(B, N, 3, H, C // (3 * H)).permute(2, 0, 3, 1, 4).unbind(0)
        return q + 2 * k + 3 * v


class QkvAttention(torch.nn.Module):
    """timm-style attention: packed q/k/v, q @ k^T, softmax, @ v, heads merged back."""

    def __init__(self, heads, project):
        super().__init__()
        self.heads = heads
        torch.manual_seed(3)
        self.qkv = torch.nn.Linear(48, 3 * 48) if project else None

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x) if self.qkv is not None else x
        D = qkv.shape[-1] // (3 * self.heads)
        q, k, v = qkv.reshape(B, N, 3, self.heads, D).permute(2, 0, 3, 1, 4).unbind(0)
        attn = ((q @ k.transpose(-2, -1)) * D ** -0.5).softmax(dim=-1)
        return (attn @ v).transpose(1, 2).reshape(B, N, -1)


class CatOfSliceOfTransposed(torch.nn.Module):
    def forward(self, x):
        t = x.transpose(1, 2)
        return torch.cat([t[:, 2:4], t], dim=1)


class CatReadOnlyThroughSlices(torch.nn.Module):
    """A cat along dim 0 read only through slices along dim 0: the planner drops every copy into
    and out of it, so no op touches the cat's own tensor (it was left unplaced)."""

    def forward(self, x):
        t = x.permute(0, 2, 1)
        t = torch.cat([t[..., 1:2], t[..., 0:1]], dim=2)
        a, b = t.unbind(2)
        c = torch.cat([b, a], dim=0)
        return c[:24] + c[24:] * 0.5


class ConstantFirst(torch.nn.Module):
    """constant(1, 1, C) op activation(1, C): the constant has the output's shape."""

    def __init__(self, op):
        super().__init__()
        self.op = op
        self.c = torch.nn.Parameter(torch.randn(1, 1, 8, generator=torch.Generator().manual_seed(5)))

    def forward(self, x):
        if self.op == "add":
            return self.c + x
        if self.op == "sub":
            return self.c - x
        return self.c * x


class FullSizeConstant(torch.nn.Module):
    """A 90,000-element constant operand: more elements than the format allows in one dim."""

    def __init__(self):
        super().__init__()
        self.c = torch.nn.Parameter(torch.randn(1, 300, 300, generator=torch.Generator().manual_seed(6)))

    def forward(self, x):
        return x * 0.5 + self.c


NAMED = {
    "qkv_mix_n4_c12": (QkvMix(), (1, 4, 12)),
    "qkv_mix_n8_c48": (QkvMix(), (1, 8, 48)),
    "qkv_attention_n8_c48_h4": (QkvAttention(4, project=False), (1, 8, 48)),
    "qkv_attention_projected_h4": (QkvAttention(4, project=True), (1, 8, 48)),
    "cat_of_slice_of_transposed": (CatOfSliceOfTransposed(), (1, 6, 5)),
    "cat_read_only_through_slices": (CatReadOnlyThroughSlices(), (24, 3, 10)),
    "constant_first_add": (ConstantFirst("add"), (1, 8)),
    "constant_first_sub": (ConstantFirst("sub"), (1, 8)),
    "constant_first_mul": (ConstantFirst("mul"), (1, 8)),
    "full_size_constant": (FullSizeConstant(), (1, 300, 300)),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_once_failing_graphs_compile_and_match_eager(name):
    model, shape = NAMED[name]
    model.eval()
    xs = [sample(shape, 20 + s) for s in range(8)]
    ep = torch.export.export(model, (torch.from_numpy(xs[0]),))
    with torch.no_grad():
        ref = model(torch.from_numpy(xs[0])).numpy()

    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    out = fp32.run(xs[0])[0]
    assert out.shape == ref.shape
    assert float(np.abs(out - ref).max()) <= 1e-5 * max(float(np.ptp(ref)), 1.0)

    int8 = mcuflow.compile(ep, target=TARGET, calibration=[(torch.from_numpy(x),) for x in xs])
    out = int8.run(xs[0])[0]
    assert out.shape == ref.shape
    assert float(np.abs(out - ref).max()) <= 3 * output_steps(int8)[0] + 0.05 * float(np.ptp(ref))


# --------------------------------------------------------------------------------------------
# What a program cannot hold is refused with the op and the model source line.


class Rank7(torch.nn.Module):
    def forward(self, x):
        return x.reshape(1, 2, 2, 2, 2, 3, 5) * 2.0


class WideDim(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x.reshape(1, 70000))


@pytest.mark.parametrize("model, shape, message", [
    (Rank7(), (1, 240), r"^reshape at .*test_rank_differential.py:\d+: .*return x.reshape\(1, 2, 2, 2, 2, 3, 5\).*"
                        r"output \[1, 2, 2, 2, 2, 3, 5\] has 7 dims; at most 6 are supported"),
    (WideDim(), (1, 700, 100), r"^reshape at .*test_rank_differential.py:\d+: .*output \[1, 70000\] has a dim "
                               r"larger than 65536"),
])
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_unrepresentable_shapes_are_refused_with_op_and_line(model, shape, message, precision):
    x = torch.from_numpy(sample(shape, 1))
    ep = torch.export.export(model.eval(), (x,))
    with pytest.raises(mcuflow.UnsupportedModelError, match=message):
        mcuflow.compile(ep, target=TARGET, precision=precision, calibration=[(x,)] if precision == "int8" else None)
