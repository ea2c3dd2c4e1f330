"""A quantization the front end gives (GraphBuilder.set_quantization, docs/frontend_contract.md) is
kept bit-for-bit in the compiled program: no calibration overrides it, and the weights are the
integers of the given scales."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from mcuflow import _core
from mcuflow.api import Program
from mcuflow.options import CompileOptions

W_SCALES = [0.011, 0.007, 0.013, 0.009]


def linear_model(rng: np.random.Generator):
    b = _core.GraphBuilder()
    x = b.add_input("x", [1, 16])
    w = rng.uniform(-1.0, 1.0, (4, 16)).astype(np.float32)
    wid = b.add_constant("w", w)
    bid = b.add_constant("b", rng.uniform(-0.2, 0.2, 4).astype(np.float32))
    (y,) = b.add_op("linear", [x, wid, bid], {}, "model.py:1: linear", [[1, 4]])
    b.set_outputs([y])
    return b, x, wid, y, w


def compiled(builder, samples) -> bytes:
    o = CompileOptions(target="cortex-m55")
    return bytes(_core.compile(builder, o.target, samples, o.precision, o.io, {}, o.fallback, o.schedule, o.in_place,
                               o.regions, o.copy_weights, o.patches, o.stream_input, observer=o.observer,
                               percentile=o.percentile))


def calibration(rng):
    return [[rng.uniform(-2.0, 2.0, 16).astype(np.float32).tolist()] for _ in range(8)]


def test_given_quantization_is_kept_bit_for_bit():
    rng = np.random.default_rng(7)
    builder, x, wid, y, w = linear_model(rng)
    builder.set_quantization(x, [0.0123], [7])
    builder.set_quantization(y, [0.0456], [-3])
    builder.set_quantization(wid, W_SCALES, [0, 0, 0, 0], dtype="int8", axis=0, symmetric=True)
    data = compiled(builder, calibration(rng))
    program = Program(data)
    assert program.inputs[0]["dtype"] == np.float32  # quantized inside, with the given parameters
    tensors = program._host.tensors
    by_name = {t["name"]: t for t in tensors} if "name" in tensors[0] else None
    quantized = [t for t in tensors if t["dtype"] == "int8" and t["storage"] == "arena"]
    assert {(np.float32(t["scale"]), t["zero_point"]) for t in quantized} == {
        (np.float32(0.0123), 7), (np.float32(0.0456), -3)}, by_name
    # The weights: the given scales' integers (half away from zero), laid out [4][16].
    constants_offset = struct.unpack_from("<I", data, 48)[0]
    weights = [t for t in tensors if t["storage"] == "constant" and t["dims"] == [4, 16]]
    assert len(weights) == 1
    start = constants_offset + weights[0]["offset"]
    stored = np.frombuffer(data[start:start + 64], dtype=np.int8).reshape(4, 16)
    scales = np.array(W_SCALES, dtype=np.float32)[:, None]
    quotient = (w / scales).astype(np.float32)
    expected = np.clip(np.sign(quotient) * np.floor(np.abs(quotient) + 0.5), -127, 127).astype(np.int8)
    np.testing.assert_array_equal(stored, expected)


def test_without_a_given_quantization_calibration_decides():
    rng = np.random.default_rng(7)
    builder, *_ = linear_model(rng)
    tensors = Program(compiled(builder, calibration(rng)))._host.tensors
    scales = {np.float32(t["scale"]) for t in tensors if t["dtype"] == "int8" and t["storage"] == "arena"}
    assert np.float32(0.0123) not in scales and np.float32(0.0456) not in scales


@pytest.mark.parametrize("args, message", [
    (dict(scales=[0.1], zero_points=[128]), "zero point 128 outside int8"),
    (dict(scales=[0.0], zero_points=[0]), "is not a positive float32"),
    (dict(scales=[0.1, 0.2], zero_points=[0, 0]), "2 scales and 2 zero points; expected 1"),
    (dict(scales=[0.1], zero_points=[0], dtype="uint8"), "dtype 'uint8'"),
    (dict(scales=[0.1], zero_points=[0], axis=2), "axis 2 outside its 2 dims"),
])
def test_bad_given_quantization_is_one_clear_error(args, message):
    builder, x, *_ = linear_model(np.random.default_rng(1))
    with pytest.raises(_core.CompileError, match=message):
        builder.set_quantization(x, **args)


def test_a_quantization_the_kernels_cannot_take_is_refused_naming_the_tensor():
    rng = np.random.default_rng(2)
    builder, x, *_ = linear_model(rng)
    builder.set_quantization(x, [0.001], [0], dtype="int16", symmetric=True)
    with pytest.raises(_core.CompileError, match="tensor x has a given 16-bit quantization; the kernels take 8-bit"):
        compiled(builder, calibration(rng))
