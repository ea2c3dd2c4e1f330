"""Comparisons, where / masked_fill and integer ids feeding an embedding, against PyTorch.

* fp32 programs: masks equal eager's, values within 1e-6.
* int8 programs with int8 I/O get random int8 inputs: a comparison equals the comparison of the
  dequantized inputs exactly (ties included, also between inputs of different scales), a where
  is within one step of the dequantized value it picks, quantized to the output.
* A keyword-id model (Embedding + mean + Linear) with int64 ids: fp32 equals eager, int8 stays
  close; an id outside the table is error 21 (index_out_of_range), a float array for the ids one
  line.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

import mcuflow
from mcuflow.errors import InputError, McuflowError

TARGET = "reference"


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def randn(shape, seed, scale=1.0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


def export(model, shapes):
    return torch.export.export(model.eval(), tuple(randn(s, i) for i, s in enumerate(shapes)))


def calibration(shapes, n=16):
    return [tuple(randn(s, 100 + k * 10 + i, 2.0) for i, s in enumerate(shapes)) for k in range(n)]


def dequantize(q, spec):
    return (q.astype(np.float64) - spec["zero_point"]) * np.float64(spec["scale"])


def quantize(x, spec):
    return np.clip(np.sign(x) * np.floor(np.abs(x) / np.float64(spec["scale"]) + 0.5) + spec["zero_point"], -128, 127)


COMPARISONS = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}

# (shape of a, shape of b): same shape, per-channel and per-row broadcasts, scalar-like, both sides
BROADCASTS = [((1, 3, 4, 5), (1, 3, 4, 5)), ((1, 3, 4, 5), (1, 3, 1, 1)), ((1, 3, 4, 5), (1, 1, 4, 1)),
              ((4, 5), (5,)), ((1, 4, 5), (1, 1, 1)), ((2, 1, 5), (1, 3, 1)), ((6,), (1, 6))]


def int8_inputs(program, seed, low=-128, high=128):
    rng = np.random.default_rng(seed)
    return [rng.integers(low, high, size=spec["shape"]).astype(np.int8) for spec in program.inputs]


@pytest.mark.parametrize("kind", sorted(COMPARISONS))
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_comparison_fp32_equals_eager_and_int8_compares_the_real_values(kind, shapes):
    op = COMPARISONS[kind]
    model = Fn(lambda a, b: op(a, b))
    ep = export(model, shapes)
    xs = [randn(s, 7 + i).round(decimals=1) for i, s in enumerate(shapes)]  # ties
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    got = fp32.run([x.numpy() for x in xs])[0]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, op(*xs).float().numpy())
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes), io="int8")
    qs = int8_inputs(program, 11)
    want = op(*[torch.from_numpy(dequantize(q, spec)) for q, spec in zip(qs, program.inputs)]).numpy()
    np.testing.assert_array_equal(program.run(qs)[0], want.astype(np.int8))


@pytest.mark.parametrize("kind", sorted(COMPARISONS))
def test_int8_comparison_ties_between_different_scales(kind):
    """y's calibration range is twice x's, so its scale is exactly twice x's: x == 2 y steps tie."""
    op = COMPARISONS[kind]
    ep = export(Fn(lambda x, y: op(x, y)), [(64,), (64,)])
    samples = [(torch.linspace(-2.55, 2.55, 64), torch.linspace(-5.1, 5.1, 64))]
    program = mcuflow.compile(ep, target=TARGET, calibration=samples, io="int8")
    sx, sy = program.inputs[0]["scale"], program.inputs[1]["scale"]
    assert np.float32(sy) == np.float32(2 * sx) and program.inputs[0]["zero_point"] == program.inputs[1]["zero_point"]
    zp = program.inputs[0]["zero_point"]
    qy = np.random.default_rng(3).integers(-40, 40, size=64)  # y's steps from its zero point
    qx = np.clip(2 * qy + zp + np.random.default_rng(4).integers(-1, 2, size=64), -128, 127)
    qs = [qx.astype(np.int8), (qy + zp).clip(-128, 127).astype(np.int8)]
    real = [torch.from_numpy(dequantize(q, spec)) for q, spec in zip(qs, program.inputs)]
    want = op(*real).numpy()
    assert (real[0] == real[1]).sum() > 10
    np.testing.assert_array_equal(program.run(qs)[0], want.astype(np.int8))


@pytest.mark.parametrize("kind", sorted(COMPARISONS))
@pytest.mark.parametrize("value", [0.0, 0.37, -1.25])
def test_comparison_with_a_scalar(kind, value):
    op = COMPARISONS[kind]
    shape = (1, 3, 4, 5)
    ep = export(Fn(lambda x: op(x, value)), [shape])
    x = randn(shape, 5)
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    np.testing.assert_array_equal(fp32.run([x.numpy()])[0], op(x, value).float().numpy())
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration([shape]), io="int8")
    (q,) = int8_inputs(program, 2)
    want = op(torch.from_numpy(dequantize(q, program.inputs[0])), value).numpy()
    np.testing.assert_array_equal(program.run([q])[0], want.astype(np.int8))


WHERES = {
    "where_tensors": (lambda x, y: torch.where(x > y, x, y), [(1, 3, 4, 5), (1, 3, 4, 5)]),
    "where_broadcast": (lambda x, y: torch.where(x > 0, x, y), [(2, 4, 5), (1, 5)]),
    "where_scalar_other": (lambda x: torch.where(x > 0.25, x, 0.0), [(1, 3, 4, 5)]),
    "where_scalar_self": (lambda x: torch.where(x <= -0.5, 1.5, x), [(4, 6)]),
    "masked_fill": (lambda x, y: x.masked_fill(x < y, -1.5), [(3, 5), (3, 1)]),
    "masked_fill_not": (lambda x: x.masked_fill(~(x > 0), 0.5), [(1, 8)]),
    "logical_not": (lambda x: torch.where(torch.logical_not(x >= 0.1), x * 2.0, x), [(1, 2, 3, 4)]),
    "where_of_views": (lambda x: torch.where((x > 0).reshape(4, 5), x.reshape(4, 5), -x.reshape(4, 5)), [(1, 4, 5)]),
}


def check_fp32_equals_eager_and_int8_within_one_step(fn, shapes, seed):
    """fp32 within 1e-6 of eager; int8 (int8 I/O, random inputs) within one output step of the
    model run on the dequantized inputs, a mask output equal to it."""
    model = Fn(fn)
    ep = export(model, shapes)
    xs = [randn(s, seed + i) for i, s in enumerate(shapes)]
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    np.testing.assert_allclose(fp32.run([x.numpy() for x in xs])[0], model(*xs).float().numpy(), rtol=1e-6, atol=1e-6)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes), io="int8")
    assert not program.fallbacks()
    qs = int8_inputs(program, seed)
    real = model(*[torch.from_numpy(dequantize(q, spec)) for q, spec in zip(qs, program.inputs)]).double().numpy()
    got = program.run(qs)[0].astype(np.float64)
    if (program.outputs[0]["scale"], program.outputs[0]["zero_point"]) == (1.0, 0):  # a mask
        np.testing.assert_array_equal(got, real)
    else:
        assert np.abs(got - quantize(real, program.outputs[0])).max() <= 1


@pytest.mark.parametrize("case", sorted(WHERES))
def test_where_fp32_equals_eager_and_int8_within_one_step(case):
    check_fp32_equals_eager_and_int8_within_one_step(*WHERES[case], seed=30)


def test_constant_mask_masked_fill_like_a_causal_attention_mask():
    class Causal(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("keep", torch.tril(torch.ones(5, 5)).bool())

        def forward(self, x):
            return torch.softmax(x.masked_fill(~self.keep, -30.0), dim=-1)

    model = Causal().eval()
    ep = export(model, [(1, 5, 5)])
    x = randn((1, 5, 5), 4)
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    np.testing.assert_allclose(fp32.run([x.numpy()])[0], model(x).numpy(), rtol=1e-6, atol=1e-6)
    int8 = mcuflow.compile(ep, target=TARGET, calibration=calibration([(1, 5, 5)]))
    assert not int8.fallbacks()
    got = int8.run([x.numpy()])[0]
    assert np.all(got[np.broadcast_to(~model.keep.numpy(), got.shape)] == 0)  # the masked scores
    assert np.abs(got - model(x).numpy()).max() <= 0.05  # of the output range, 1


def test_mask_output_is_float_zeros_and_ones():
    ep = export(Fn(lambda x, y: x >= y), [(2, 3), (2, 3)])
    xs = [randn((2, 3), 1), randn((2, 3), 2)]
    for program in (mcuflow.compile(ep, target=TARGET, precision="fp32"),
                    mcuflow.compile(ep, target=TARGET, calibration=calibration([(2, 3), (2, 3)]))):
        got = program.run([x.numpy() for x in xs])[0]
        assert got.dtype == np.float32 and set(np.unique(got)) <= {0.0, 1.0}


# --------------------------------------------------------------------------------------------
# a comparison with a constant tensor compares with its real values


class WithConstant(nn.Module):
    def __init__(self, op, values, constant_first=False):
        super().__init__()
        self.op, self.constant_first = op, constant_first
        self.register_buffer("c", torch.tensor(values, dtype=torch.float32))

    def forward(self, x):
        return self.op(self.c, x) if self.constant_first else self.op(x, self.c)


# x's calibrated range is [-2, 2]: values between x's steps, on them (0.5 is 0.5 / (4 / 255)
# steps from 0: not on the grid; 0.0 is), beyond either end of the range on one side
CONSTANTS = {"inside": [-1.37, -0.5, -0.013, 0.0, 0.007, 0.49, 1.21, 1.99]
                       + np.random.default_rng(0).uniform(-2, 2, 56).round(4).tolist(),
             "beyond_high": [0.3, 2.5, 100.0, -1.0, 0.0, 1e30, 0.03, -0.031],
             "beyond_low": [-0.3, -2.5, -100.0, 1.0, 0.0, -1e30, 0.03, -0.031]}


def every_code_per_column(columns):
    """(256, columns) int8 inputs: every int8 code against every constant element."""
    return np.repeat(np.arange(-128, 128, dtype=np.int8)[:, None], columns, axis=1)


@pytest.mark.parametrize("kind", sorted(COMPARISONS))
@pytest.mark.parametrize("constants", sorted(CONSTANTS))
@pytest.mark.parametrize("constant_first", [False, True])
def test_int8_comparison_with_a_constant_tensor_compares_its_real_values(kind, constants, constant_first):
    op = COMPARISONS[kind]
    model = WithConstant(op, CONSTANTS[constants], constant_first)
    n = len(CONSTANTS[constants])
    ep = export(model, [(256, n)])
    program = mcuflow.compile(ep, target=TARGET, calibration=[(torch.linspace(-2, 2, 256 * n).reshape(256, n),)],
                              io="int8")
    q = every_code_per_column(n)
    real = torch.from_numpy(dequantize(q, program.inputs[0]))
    c = model.c.double()
    want = (op(c, real) if constant_first else op(real, c)).numpy().astype(np.int8)
    np.testing.assert_array_equal(program.run([q])[0], want)
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    x = randn((256, n), 3)
    np.testing.assert_array_equal(fp32.run([x.numpy()])[0], model(x).float().numpy())


def test_int8_comparison_with_constants_on_both_sides_of_the_range_is_refused():
    ep = export(WithConstant(torch.gt, [-100.0, 0.5, 100.0]), [(4, 3)])
    with pytest.raises(mcuflow.UnsupportedModelError,
                       match=r"^gt at .*test_ops_masks.py:\d+: .*its constant tensor holds values on both sides of "
                             r"the int8 range \[-?[0-9.]+, [0-9.]+\] of the tensor it is compared with"):
        mcuflow.compile(ep, target=TARGET, calibration=[(torch.linspace(-2, 2, 12).reshape(4, 3),)])


def test_mask_compared_with_a_constant_bool_tensor():
    class MaskEqualsConstant(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("expected", torch.tensor([True, False, True, True, False, False]))

        def forward(self, x):
            return (x > 0) == self.expected

    model = MaskEqualsConstant().eval()
    ep = export(model, [(4, 6)])
    x = randn((4, 6), 8)
    for program in (mcuflow.compile(ep, target=TARGET, precision="fp32"),
                    mcuflow.compile(ep, target=TARGET, calibration=calibration([(4, 6)]))):
        np.testing.assert_array_equal(program.run([x.numpy()])[0], model(x).float().numpy())


# --------------------------------------------------------------------------------------------
# masks as numbers (mask.float(), a mask in arithmetic) and where / cat between masks

AS_NUMBERS = {
    "float_times_x": (lambda x: (x > 0).float() * x + 1.0, [(4, 8)]),
    "to_dtype_plus_x": (lambda x: (x > 0.3).to(torch.float32) + x, [(4, 8)]),
    "mean_of_mask": (lambda x: (x > 0).float().mean(dim=1), [(4, 8)]),
    "x_times_bool_mask": (lambda x, y: x * (x > y), [(1, 3, 4, 5), (1, 3, 4, 5)]),
    "relu_of_float_mask": (lambda x: torch.relu((x < 0).float()) - 0.5 * x, [(2, 6)]),
    "mask_and_real_in_one_cat": (lambda x: torch.cat([(x > 0).float(), x], dim=1), [(3, 4)]),
    "mask_compared_with_real": (lambda x, y: (x > 0).float() > y, [(2, 5), (2, 5)]),
}


@pytest.mark.parametrize("case", sorted(AS_NUMBERS))
def test_mask_read_as_a_number_fp32_equals_eager_and_int8_within_one_step(case):
    check_fp32_equals_eager_and_int8_within_one_step(*AS_NUMBERS[case], seed=40)


def test_mask_as_number_holds_0_and_1_whatever_calibration_saw():
    """x > 2.5 is rarely true in calibration, and a 99th-percentile observer would clip such a
    range to [0, 0]: the mask's numbers get the fixed [0, 1] spec instead (0 and 1 exact)."""
    ep = export(Fn(lambda x: (x > 2.5).float() * 3.0 + x), [(1, 64)])
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration([(1, 64)]), observer="percentile",
                              percentile=99.0)
    numbers = [t for t in program.describe()["tensors"] if t["name"].endswith(".number")]
    assert len(numbers) == 1
    scale, zero_point = numbers[0]["scale"], numbers[0]["zero_point"]
    assert np.float32(scale) == np.float32(1.0 / 255.0) and zero_point == -128  # 0 -> -128, 1 -> 127


MASK_PICKS = {
    "where_of_two_masks": (lambda x, y: torch.where(x > 0, x > y, x < -y), [(2, 3, 5), (2, 3, 5)]),
    "where_mask_or_false": (lambda x: torch.where(x > 0, x > 0.5, False), [(4, 6)]),
    "where_broadcast_masks": (lambda x, y: torch.where(x > 0, y > 0, x < -0.5), [(3, 5), (1, 5)]),
    "where_of_masks_picks_values": (lambda x: torch.where(torch.where(x > 0, x > 1, x < -1), x, -x), [(4, 6)]),
    "cat_of_masks": (lambda x, y: torch.cat([x > 0, y < 0], dim=1), [(3, 4), (3, 2)]),
    "cat_of_masks_as_number": (lambda x, y: torch.cat([x > 0, y < 0], dim=1).float().sum(dim=1), [(3, 4), (3, 2)]),
}


@pytest.mark.parametrize("case", sorted(MASK_PICKS))
def test_where_and_cat_between_masks(case):
    fn, shapes = MASK_PICKS[case]
    model = Fn(fn)
    ep = export(model, shapes)
    xs = [randn(s, 50 + i) for i, s in enumerate(shapes)]
    want = model(*xs).float().numpy()
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    np.testing.assert_allclose(fp32.run([x.numpy() for x in xs])[0], want, rtol=1e-6, atol=1e-6)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration(shapes))
    assert not program.fallbacks()
    got = program.run([x.numpy() for x in xs])[0]
    if want.dtype == np.float32 and case in ("where_of_masks_picks_values", "cat_of_masks_as_number"):
        assert np.abs(got - want).max() <= 0.05 * max(1.0, float(np.ptp(want))), case
    else:
        np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------------------------
# integer ids: a keyword-id model


class KeywordModel(nn.Module):
    def __init__(self, vocabulary=50, dim=16, classes=4):
        super().__init__()
        torch.manual_seed(5)
        self.embed = nn.Embedding(vocabulary, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, ids):
        return self.fc(self.embed(ids).mean(dim=1))


def ids(seed, n=1, length=8, vocabulary=50):
    return torch.randint(0, vocabulary, (n, length), generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def keyword():
    model = KeywordModel().eval()
    ep = torch.export.export(model, (ids(0),))
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    int8 = mcuflow.compile(ep, target=TARGET, calibration=[(ids(10 + k),) for k in range(16)])
    return model, fp32, int8


def test_keyword_ids_fp32_equals_eager_and_int8_stays_close(keyword):
    model, fp32, int8 = keyword
    assert fp32.inputs[0]["dtype"] == np.int32 and int8.inputs[0]["dtype"] == np.int32
    x = ids(99, n=6)
    with torch.no_grad():
        ref = model(x).numpy()
    np.testing.assert_allclose(fp32.run([x.numpy()])[0], ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(fp32.run([x.numpy().astype(np.int32)])[0], fp32.run([x.numpy()])[0])
    assert "gather_rows" in int8.kernels and not int8.fallbacks()
    err = np.abs(int8.run([x.numpy()])[0] - ref).max()
    assert err <= 0.05 * float(ref.max() - ref.min()), err


@pytest.mark.parametrize("bad", [-1, 50, 2**31 - 1])
def test_id_outside_the_table_is_index_out_of_range(keyword, bad):
    _, fp32, int8 = keyword
    x = ids(1).numpy()
    x[0, 3] = bad
    for program in (fp32, int8):
        with pytest.raises(McuflowError, match="an id of sample 0 lies outside its embedding table"):
            program.run([x])


def test_float_array_for_ids_is_one_line(keyword):
    _, fp32, _ = keyword
    with pytest.raises(InputError, match="input 0 has dtype float32; the program expects int32"):
        fp32.run([np.zeros((1, 8), np.float32)])


def test_float_calibration_for_ids_is_one_line():
    ep = torch.export.export(KeywordModel().eval(), (ids(0),))
    with pytest.raises(McuflowError, match="this input takes integer ids"):
        mcuflow.compile(ep, target=TARGET, calibration=[(torch.zeros(1, 8),)])
