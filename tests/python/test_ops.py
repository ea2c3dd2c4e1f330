"""Operator coverage through the whole pipeline, checked against independent math.

* int8 programs with int8 I/O get random int8 inputs; the reference applies the PyTorch op in
  float64 to the *dequantized* inputs and quantizes the result with the program's output
  quantization, so the only difference left is the kernel's own rounding: at most one step.
* float32 programs against PyTorch eager within 1e-5 relative.
* Lookup-table activations: all 256 int8 inputs, exactly the float function's rounding.
* A zero pad folded into the next conv / average pool computes bit for bit what the explicit
  pad op computes.
* Float fallback: visible in Program.fallbacks() / summary(), an error when refused.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import mcuflow
from mcuflow import cli

TARGET = "reference"  # reference kernels only: this file checks the ops, not the tiers


class Fn(nn.Module):
    """A model computing ``fn(self, *inputs)``; ``modules`` become its submodules."""

    def __init__(self, fn, *modules):
        super().__init__()
        self.fn = fn
        self.layers = nn.ModuleList(modules)

    def forward(self, *xs):
        return self.fn(self, *xs)


def randn(shape, seed, scale=1.0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


def export(model, shapes):
    torch.manual_seed(0)
    return torch.export.export(model.eval(), tuple(randn(s, i) for i, s in enumerate(shapes)))


def calibration(shapes, n=24):
    return [tuple(randn(s, 100 + k * 10 + i, 2.0) for i, s in enumerate(shapes)) for k in range(n)]


def round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def dequantize(q, spec):
    return (q.astype(np.float64) - spec["zero_point"]) * np.float64(spec["scale"])


def quantize(x, spec):
    return np.clip(round_half_away(x / np.float64(spec["scale"])) + spec["zero_point"], -128, 127)


# --------------------------------------------------------------------------------------------
# every op: int8 within one step of the float op on the dequantized inputs; float32 = eager

R4, R3 = (1, 3, 4, 5), (1, 4, 5)  # a rank-4 (NHWC on device) and a rank-3 (plain) input

CASES = {
    "pad_zero": (lambda m, x: F.pad(x, (1, 2, 0, 1)), [R4]),
    "pad_value_crop": (lambda m, x: F.pad(x, (2, -1, 1, 1), value=-0.75), [R3]),
    "pad_channels": (lambda m, x: F.pad(x, (0, 0, 0, 0, 1, 2)), [R4]),
    "upsample_x2": (lambda m, x: F.interpolate(x, scale_factor=2, mode="nearest"), [R4]),
    "upsample_2x3": (lambda m, x: F.interpolate(x, scale_factor=(2, 3), mode="nearest"), [R4]),
    "expand": (lambda m, x: x.expand(2, 3, 4, 5)[1:], [(1, 3, 1, 5)]),
    "select": (lambda m, x: x[:, :, 2], [R4]),
    "unbind_last": (lambda m, x: x.unbind(-1)[3], [R3]),
    "stack_middle": (lambda m, x, y: torch.stack([x, y, x], dim=2), [R3, R3]),
    "stack_last": (lambda m, x, y: torch.stack([y, x], dim=-1), [R4, R4]),
    "flip_one": (lambda m, x: x.flip(-1), [R3]),
    "flip_two": (lambda m, x: x.flip([1, 3]), [R4]),
    "sub": (lambda m, x, y: x - y, [R4, R4]),
    "sub_broadcast": (lambda m, x, y: x - y, [R3, (1, 1, 5)]),
    "sub_broadcast_first": (lambda m, x, y: x - y, [(1, 1, 5), R3]),
    "add_broadcast_both": (lambda m, x, y: x + y, [(1, 4, 1), (1, 1, 5)]),
    "mul_broadcast_rows": (lambda m, x, y: x * y, [R4, (1, 1, 4, 1)]),
    "maximum_broadcast_rank": (lambda m, x, y: torch.maximum(x, y), [(4, 5), R4]),
    "add_constant_rows": (lambda m, x: x + torch.arange(20.0).reshape(1, 1, 4, 5) / 10, [R4]),
    "minimum": (lambda m, x, y: torch.minimum(x, y), [R4, R4]),
    "maximum": (lambda m, x, y: torch.maximum(x, y), [R3, R3]),
    "matmul": (lambda m, x, y: torch.matmul(x, y), [(1, 2, 5, 7), (1, 2, 7, 3)]),
    "matmul_transposed": (lambda m, x, y: x @ y.transpose(-1, -2), [(1, 6, 7), (1, 5, 7)]),
    "mean_all": (lambda m, x: x.mean(dim=(0, 1, 2, 3), keepdim=True), [R4]),
    "sum_hw_keep": (lambda m, x: x.sum(dim=(2, 3), keepdim=True), [R4]),
    "sum_nc": (lambda m, x: x.sum(dim=(1, 3)), [R4]),
    # normalizations: group_norm_s8 / group_norm_f32 (weights and biases as lifted constants,
    # in the input's dtype: the int8 reference runs the model in float64)
    "layer_norm": (lambda m, x: F.layer_norm(x, (5,), torch.linspace(-1.5, 2.0, 5, dtype=x.dtype),
                                             torch.linspace(0.5, -1.0, 5, dtype=x.dtype)), [R3]),
    "layer_norm_plain": (lambda m, x: F.layer_norm(x, (5,), eps=1e-3), [R4]),
    "group_norm": (lambda m, x: F.group_norm(x, 3, torch.linspace(0.25, 2.0, 6, dtype=x.dtype),
                                             torch.linspace(-1.0, 1.0, 6, dtype=x.dtype)), [(1, 6, 4, 5)]),
    "group_norm_r3": (lambda m, x: F.group_norm(x, 2, eps=1e-2), [(1, 4, 7)]),
    "instance_norm": (lambda m, x: F.instance_norm(x), [R4]),
    "instance_norm_affine": (lambda m, x: F.instance_norm(x, weight=torch.tensor([0.5, -2.0, 1.0], dtype=x.dtype),
                                                          bias=torch.tensor([0.0, 0.25, -3.0], dtype=x.dtype)), [R4]),
}
for _d in range(4):
    CASES[f"sum_dim{_d}"] = (lambda m, x, d=_d: x.sum(dim=d), [R4])
    CASES[f"mean_dim{_d}"] = (lambda m, x, d=_d: x.mean(dim=d, keepdim=True), [R4])
    CASES[f"amax_dim{_d}"] = (lambda m, x, d=_d: x.amax(dim=d), [R4])
for _d in range(1, 4):
    CASES[f"slice_dim{_d}"] = (lambda m, x, d=_d: x[(slice(None),) * d + (slice(1, None, 2),)], [R4])
    CASES[f"chunk_dim{_d}"] = (lambda m, x, d=_d: torch.cat(x.chunk(2, dim=d)[::-1], dim=d), [R4])
for _d in range(3):
    CASES[f"mean_r3_dim{_d}"] = (lambda m, x, d=_d: x.mean(dim=d), [R3])
    CASES[f"amax_r3_dim{_d}"] = (lambda m, x, d=_d: x.max(dim=d).values, [R3])
    CASES[f"softmax_r3_dim{_d}"] = (lambda m, x, d=_d: F.softmax(x, dim=d), [R3])
for _d in range(1, 4):
    CASES[f"softmax_dim{_d}"] = (lambda m, x, d=_d: F.softmax(x, dim=d), [R4])

# Softmax is the TFLite int8 softmax (fixed-point exp): within 2 steps of exact.
STEPS = {name: 2 for name in CASES if name.startswith("softmax")}


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_int8_within_one_step_and_fp32_matches_eager(case):
    fn, shapes = CASES[case]
    model = Fn(fn)
    ep = export(model, shapes)
    # float32 vs eager
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    xs = [randn(s, 7 + i) for i, s in enumerate(shapes)]
    with torch.no_grad():
        ref = model(*xs).numpy()
    np.testing.assert_allclose(fp32.run([x.numpy() for x in xs])[0], ref, rtol=1e-5, atol=1e-6)
    # int8 vs the op applied to the dequantized int8 inputs
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes), io="int8")
    rng = np.random.default_rng(11)
    qs = [rng.integers(-128, 128, size=s).astype(np.int8) for s in shapes]
    with torch.no_grad():
        real = model(*[torch.from_numpy(dequantize(q, spec)) for q, spec in zip(qs, program.inputs)]).numpy()
    want = quantize(real, program.outputs[0])
    got = program.run(qs)[0].astype(np.float64)
    assert got.shape == want.shape
    steps = np.abs(got - want)
    assert steps.max() <= STEPS.get(case, 1), f"{case}: {int(steps.max())} steps at {np.argmax(steps)}"


@pytest.mark.parametrize("shape, dim", [(R4, 0), (R4, 1), (R4, 2), (R4, 3), (R3, 1), (R3, -1)])
def test_argmax_matches_on_the_dequantized_values(shape, dim):
    model = Fn(lambda m, x: x.argmax(dim=dim))
    program = mcuflow.compile(export(model, [shape]), target=TARGET, calibration=calibration([shape]), io="int8")
    q = np.random.default_rng(dim % 7).integers(-6, 6, size=shape).astype(np.int8)  # ties: first one wins
    got = program.run([q])[0]
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, torch.from_numpy(dequantize(q, program.inputs[0])).argmax(dim=dim).numpy())


def test_argmax_must_be_a_model_output():
    model = Fn(lambda m, x: x.argmax(dim=-1).float() + 1.0)
    with pytest.raises(mcuflow.UnsupportedModelError):
        mcuflow.compile(export(model, [R3]), target=TARGET, calibration=calibration([R3]))


# --------------------------------------------------------------------------------------------
# lookup-table activations: every int8 input, exactly


ACTIVATIONS = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "silu": F.silu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "elu": lambda x: F.elu(x, alpha=0.6),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.125),
    "neg": torch.neg,
    "abs": torch.abs,
    "mish": F.mish,
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_lut_activation_all_256_inputs_round_like_the_float_function(name):
    f = ACTIVATIONS[name]
    model = Fn(lambda m, x: f(x))
    shapes = [(1, 256)]
    program = mcuflow.compile(export(model, shapes), target=TARGET, calibration=calibration(shapes), io="int8")
    assert [op["kernel"] for op in program.describe()["ops"]] == ["lut_s8"]
    q = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    real = f(torch.from_numpy(dequantize(q, program.inputs[0]))).numpy()  # float64, PyTorch's definition
    np.testing.assert_array_equal(program.run([q])[0], quantize(real, program.outputs[0]))
    # float32 kernel: PyTorch eager within 1e-5 relative
    x = randn((1, 256), 3, 4.0)
    fp32 = mcuflow.compile(export(model, shapes), target=TARGET, precision="fp32")
    np.testing.assert_allclose(fp32.run([x.numpy()])[0], f(x).numpy(), rtol=1e-5, atol=1e-6)


def test_log_table_saturates_inputs_at_or_below_zero_to_the_lowest_output():
    model = Fn(lambda m, x: torch.log(x))
    shapes = [(1, 256)]
    positive = [(randn(shapes[0], 300 + k).abs() * 3.0 + 0.02,) for k in range(24)]
    program = mcuflow.compile(export(model, shapes), target=TARGET, calibration=positive, io="int8")
    assert [op["kernel"] for op in program.describe()["ops"]] == ["lut_s8"]
    q = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    real = dequantize(q, program.inputs[0])
    assert (real <= 0).any() and (real > 0).any()
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(real > 0, quantize(np.log(real), program.outputs[0]), -128)
    np.testing.assert_array_equal(program.run([q])[0], want)


def float_ulps(got, want):
    """|got - want| in units of the float32 spacing at ``want`` (float64)."""
    _, exponent = np.frexp(want)
    return np.abs(got.astype(np.float64) - want) / np.ldexp(1.0, exponent - 24)


def test_log_float_kernel_within_one_ulp_of_numpy_float64_over_every_exponent():
    rng = np.random.default_rng(5)
    bits = rng.integers(1, 0x7F800000, size=1 << 18, dtype=np.uint32)  # positive finite floats, denormals too
    x = bits.view(np.float32)
    specials = np.array([0.0, -0.0, -1.0, -1e-30, 1.0, 2.0, 0.5, 1e-45, 3.4e38],  # (inputs are finite)
                        dtype=np.float32)
    model = Fn(lambda m, v: torch.log(v))
    program = mcuflow.compile(export(model, [(64, x.size // 64)]), target=TARGET, precision="fp32")
    got = program.run([x.reshape(64, -1)])[0].ravel()
    ulps = float_ulps(got, np.log(x.astype(np.float64)))
    assert ulps.max() < 0.9, (ulps.max(), x[np.argmax(ulps)])  # 0.86 over all 2^31 - 2^23 - 1 floats
    edge = mcuflow.compile(export(model, [(1, specials.size)]), target=TARGET, precision="fp32")
    np.testing.assert_array_equal(edge.run([specials.reshape(1, -1)])[0].ravel(),
                                  torch.log(torch.from_numpy(specials)).numpy())


def test_in_place_log_is_the_log_op():
    model = Fn(lambda m, v: torch.log_(v * 2.0))
    program = mcuflow.compile(export(model, [R3]), target=TARGET, precision="fp32")
    assert [op["kernel"] for op in program.describe()["ops"]] == ["mul_f32", "activation_f32"]
    x = randn(R3, 8).abs() + 0.01
    np.testing.assert_allclose(program.run([x.numpy()])[0], torch.log(x * 2.0).numpy(), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# zero pads folded into convolution and average pooling


# name -> (F.pad's pad, the op reading the padded tensor, its layer)
FOLDS = {
    "conv_asymmetric": ((0, 1, 2, 0), lambda m, p: m.layers[0](p), nn.Conv2d(3, 4, 3, stride=2)),
    "conv_same_style": ((1, 2, 1, 2), lambda m, p: m.layers[0](p), nn.Conv2d(3, 5, 4, padding=1)),
    "depthwise_mult2": ((2, 0, 0, 1), lambda m, p: m.layers[0](p), nn.Conv2d(3, 6, 3, groups=3, dilation=2)),
    "avg_pool": ((0, 1, 1, 0), lambda m, p: F.avg_pool2d(p, 2), None),
    "avg_pool_include_pad": ((1, 0, 0, 1), lambda m, p: F.avg_pool2d(p, 3, 2, padding=1), None),
}


@pytest.mark.parametrize("name", sorted(FOLDS))
@pytest.mark.parametrize("precision", ["int8", "fp32"])
def test_folded_pad_equals_the_explicit_pad(name, precision):
    pad, op, layer = FOLDS[name]
    if layer is not None:  # weights drawn here, not at import: xdist workers import in different RNG states
        with torch.random.fork_rng():
            torch.manual_seed(0)
            layer.reset_parameters()
    shapes = [(1, 3, 9, 8)]
    folded = Fn(lambda m, x: op(m, F.pad(x, pad)), *([layer] if layer else []))
    # The same computation with the padded tensor returned as well: a pad with a second
    # reader stays an op of its own.
    explicit = Fn(lambda m, x: (lambda padded: (op(m, padded), padded))(F.pad(x, pad)), *folded.layers)
    kw = dict(target=TARGET, precision=precision)
    if precision == "int8":
        kw["calibration"] = calibration(shapes)
    p_folded = mcuflow.compile(export(folded, shapes), **kw)
    p_explicit = mcuflow.compile(export(explicit, shapes), **kw)
    kernels = lambda p: [op["kernel"] for op in p.describe()["ops"]]  # noqa: E731
    assert not any(k.startswith("strided_copy") for k in kernels(p_folded)), kernels(p_folded)
    assert any(k.startswith("strided_copy") for k in kernels(p_explicit)), kernels(p_explicit)
    x = randn(shapes[0], 5, 2.0).numpy()
    np.testing.assert_array_equal(p_folded.run([x])[0], p_explicit.run([x])[0])
    with torch.no_grad():
        ref = folded(torch.from_numpy(x)).numpy()
    tolerance = 1e-5 if precision == "fp32" else 0.05 * float(ref.max() - ref.min())
    assert np.abs(p_folded.run([x])[0] - ref).max() <= tolerance


def test_zero_pad_before_max_pool_stays_an_op():
    model = Fn(lambda m, x: F.max_pool2d(F.pad(x, (0, 1, 0, 1)), 2))
    shapes = [(1, 3, 7, 7)]
    program = mcuflow.compile(export(model, shapes), target=TARGET, precision="fp32")
    assert [op["kernel"] for op in program.describe()["ops"]] == ["strided_copy_b32", "maxpool_f32"]
    x = -torch.rand(1, 3, 7, 7) - 0.5  # all negative: padding with zeros differs from -inf here
    np.testing.assert_array_equal(program.run([x.numpy()])[0], model(x).numpy())


# --------------------------------------------------------------------------------------------
# layers


LAYERS = {
    "conv_transpose2d": (lambda m, x: m.layers[0](x), [(1, 3, 5, 4)],
                         nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)),
    "conv_transpose2d_dilated": (lambda m, x: m.layers[0](x), [(1, 2, 4, 3)],
                                 nn.ConvTranspose2d(2, 3, (2, 3), stride=(1, 2), dilation=2, bias=False)),
    "depthwise_mult3_dilated": (lambda m, x: m.layers[0](x), [(1, 2, 9, 7)],
                                nn.Conv2d(2, 6, 3, groups=2, dilation=(2, 1), padding=(2, 0))),
    "linear_3d": (lambda m, x: m.layers[0](x), [(1, 6, 8)], nn.Linear(8, 5)),
    "linear_4d_image": (lambda m, x: m.layers[0](x), [(1, 3, 4, 8)], nn.Linear(8, 5)),
    "batch_norm_alone": (lambda m, x: m.layers[0](x * 2.0), [(1, 4, 3, 5)], nn.BatchNorm2d(4)),
    "attention": (lambda m, q, k: F.scaled_dot_product_attention(q, k, k), [(1, 2, 6, 8), (1, 2, 5, 8)], None),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_fp32_match_eager_and_int8_stays_close(name):
    fn, shapes, layer = LAYERS[name]
    model = Fn(fn, *([layer] if layer else []))
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(0.5, 1.5)
                m.running_var.uniform_(0.5, 2.0)
    fp32_matches_eager_and_int8_stays_close(model, shapes)


def fp32_matches_eager_and_int8_stays_close(model, shapes):
    """A layer's float32 program equals eager; its int8 program (no fallback) stays within 5 %
    of the output range."""
    ep = export(model, shapes)
    xs = [randn(s, 20 + i) for i, s in enumerate(shapes)]
    with torch.no_grad():
        ref = model(*xs).numpy()
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    np.testing.assert_allclose(fp32.run([x.numpy() for x in xs])[0], ref, rtol=1e-5, atol=1e-5)
    int8 = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes))
    assert not int8.fallbacks()
    err = np.abs(int8.run([x.numpy() for x in xs])[0] - ref).max()
    assert err <= 0.05 * float(ref.max() - ref.min()), err


# --------------------------------------------------------------------------------------------
# float fallback


class GroupNormNet(nn.Module):
    """A group norm over more values than the int8 kernel's 65536 (kGroupNormMaxCount)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.norm = nn.GroupNorm(1, 4)

    def forward(self, x):
        return self.norm(self.conv(x))  # group norm: float fallback


def _marker_line(marker):
    with open(__file__) as f:
        return [i + 1 for i, line in enumerate(f) if line.rstrip().endswith(marker)][0]


def test_group_norm_runs_as_a_visible_float_fallback():
    shapes = [(1, 3, 150, 150)]
    model = GroupNormNet().eval()
    ep = export(model, shapes)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes))
    (fallback,) = program.fallbacks()
    assert fallback["kind"] == "group_norm" and fallback["kernel"] == "group_norm_f32"
    assert fallback["source"].startswith(f"{__file__.split('/')[-1]}:{_marker_line('# group norm: float fallback')}") or \
        f"test_ops.py:{_marker_line('# group norm: float fallback')}" in fallback["source"]
    assert "normalizes 90000 values together, more than the int8 kernel's 65536" in fallback["reason"]
    kernels = [op["kernel"] for op in program.describe()["ops"]]
    i = fallback["index"]
    assert kernels[i - 1:i + 2] == ["dequantize_s8_f32", "group_norm_f32", "quantize_f32_s8"]
    assert "float fallbacks: 1 model op(s)" in program.summary()
    x = randn(shapes[0], 9)
    with torch.no_grad():
        ref = model(x).numpy()
    assert np.abs(program.run([x.numpy()])[0] - ref).max() <= 0.05 * float(ref.max() - ref.min())
    with pytest.raises(mcuflow.UnsupportedModelError, match=r"^group_norm at .*test_ops.py:\d+.*no int8 kernel.*disabled"):
        mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes), fallback="error")


def test_matmul_too_deep_for_int32_falls_back_with_the_reason():
    shapes = [(1, 2, 40000), (1, 40000, 2)]
    model = Fn(lambda m, x, y: torch.matmul(x, y))
    program = mcuflow.compile(export(model, shapes), target=TARGET, calibration=calibration(shapes, n=4))
    (fallback,) = program.fallbacks()
    assert fallback["kernel"] == "batch_matmul_f32" and "depth 40000" in fallback["reason"]
    xs = [randn(s, 30 + i).numpy() for i, s in enumerate(shapes)]
    ref = xs[0] @ xs[1]
    assert np.abs(program.run(xs)[0] - ref).max() <= 0.05 * float(ref.max() - ref.min())


def _cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_cli_lists_fallbacks_and_refuses_them_with_no_fallback(tmp_path):
    shapes = [(1, 3, 150, 150)]
    torch.export.save(export(GroupNormNet(), shapes), tmp_path / "m.pt2")
    np.savez(tmp_path / "calib.npz", x=np.concatenate([c[0].numpy() for c in calibration(shapes)]))
    code, _, err = _cli("compile", tmp_path / "m.pt2", "--calibration", tmp_path / "calib.npz", "--target", TARGET,
                        "-o", tmp_path / "m.mfp")
    assert code == 0, err
    code, out, _ = _cli("inspect", tmp_path / "m.mfp")
    assert code == 0 and "float fallbacks: 1 model op(s)" in out and "group_norm_f32" in out
    code, _, err = _cli("compile", tmp_path / "m.pt2", "--calibration", tmp_path / "calib.npz", "--no-fallback",
                        "-o", tmp_path / "refused.mfp")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "float fallback is disabled" in err
    assert not (tmp_path / "refused.mfp").exists()


def test_int8_softmax_over_more_than_8191_values_runs_in_float_with_the_reason():
    """The int8 softmax sums its exps in 32 bits: past 8191 values the sum could wrap, so the
    compiler keeps such a softmax in float32 (a fallback naming the limit) and the verifier
    refuses an int8 one."""
    model = nn.Softmax(dim=-1).eval()
    xs = [torch.randn(1, 8192) for _ in range(3)]
    program = mcuflow.compile(torch.export.export(model, (xs[0],)), target="cortex-m55", calibration=xs[1:])
    fallbacks = program.fallbacks()
    assert [f["kind"] for f in fallbacks] == ["softmax"] and "exceeds 8191" in fallbacks[0]["reason"], fallbacks
    out = program.run(xs[0].numpy())[0]
    np.testing.assert_allclose(out, torch.softmax(xs[0], -1).numpy(), atol=1 / 256)  # one output step
