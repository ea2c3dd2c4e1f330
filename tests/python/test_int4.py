"""Packed int4 weights (weights="int4", W4A8) through the compiler, on the host.

* Packing: the program's weight bytes are the per-channel int4 codes of the float weights, two a
  byte, the first in the low nibble, for odd counts too; the record says int4.
* Per op (conv, 1x1 conv, depthwise, linear): on its int4-weight kernel, within a few dB of the
  int8 program's SNR against float, and well above noise.
* Program size: the FC autoencoder's constants shrink (its weights halve).
* A weighted op without an int4-weight kernel keeps int8 weights, and the summary and inspect say
  which and why; the verifier refuses a packed tensor whose record is one byte short.
* Bad options: one line each.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
import torch
import torch.nn as nn

import mcuflow
from mcuflow import cli, zoo
from mcuflow.api import Program
from mcuflow.errors import InputError
from program_bytes import constants_offset, with_crc
from test_int16 import IMAGE, snr_db
from test_int16 import compile_both as compile_int16_both
from test_int16 import test_bad_int16_options_are_one_line as bad_option_is_one_line
from test_ops import Fn, randn

TARGET = "reference"
TENSORS_OFFSET = 28     # Header.tensors_offset
TENSOR_RECORD = 52      # bytes of a TensorRecord
RECORD_BYTES_FIELD = 32  # TensorRecord.bytes


def compile_both(model, shapes):
    """(int8 program, int4-weight program, evaluation inputs, float outputs) of `model`."""
    return compile_int16_both(model, shapes, option=("weights", "int4"))


def int4_records(program: Program) -> list[tuple[int, dict]]:
    return [(i, t) for i, t in enumerate(program._host.tensors) if t["dtype"] == "int4"]


def unpacked(data: bytes, record: dict, count: int) -> np.ndarray:
    """The `count` int4 values of a packed constant: element i in the low nibble of byte i // 2
    when i is even, the high nibble when odd (docs/program_format.md)."""
    start = constants_offset(data) + record["offset"]
    raw = np.frombuffer(data[start:start + (count + 1) // 2], dtype=np.uint8)
    nibbles = np.stack([raw & 0xF, raw >> 4], axis=1).reshape(-1)[:count].astype(np.int8)
    return np.where(nibbles >= 8, nibbles - 16, nibbles).astype(np.int8)


def int4_codes(values: np.ndarray, scale: np.float32) -> np.ndarray:
    """float32 values / scale rounded half away from zero, clamped to [-7, 7]."""
    quotient = (values / scale).astype(np.float32)
    return np.clip(np.sign(quotient) * np.floor(np.abs(quotient) + 0.5), -7, 7).astype(np.int8)


def least_squares_scale(values: np.ndarray) -> np.float32:
    """The scale the compiler gives a channel's int4 weights: of m * k / 700 for k = 50 ... 100
    (m the largest magnitude), the first with the least squared error."""
    m = np.float64(np.abs(values).max())
    best, best_error = None, np.inf
    for k in range(50, 101):
        scale = np.float32(m * k / 700.0)
        error = np.sum((values.astype(np.float64) - int4_codes(values, scale).astype(np.float64) * np.float64(scale)) ** 2)
        if error < best_error:
            best, best_error = scale, error
    return best


@pytest.mark.parametrize("in_features, out_features", [(7, 3), (16, 5), (1, 1), (9, 9)])
def test_packed_weights_round_trip_per_channel_codes(in_features, out_features):
    # Odd products (21, 1, 81) leave the last byte's high nibble 0 and start rows at high nibbles.
    torch.manual_seed(in_features * 10 + out_features)
    layer = nn.Linear(in_features, out_features)
    ep = torch.export.export(layer.eval(), (torch.zeros(1, in_features),))
    cal = [(torch.randn(1, in_features),) for _ in range(4)]
    program = mcuflow.compile(ep, TARGET, cal, weights="int4")
    assert "fc_s8_w4" in program.kernels
    [(_, record)] = int4_records(program)
    count = in_features * out_features
    assert record["dims"] == [out_features, in_features]
    assert record["bytes"] == (count + 1) // 2
    w = layer.weight.detach().numpy().astype(np.float32)
    codes = np.stack([int4_codes(row, least_squares_scale(row)) for row in w])
    data = program.data
    np.testing.assert_array_equal(unpacked(data, record, count).reshape(out_features, in_features), codes)
    if count % 2:
        start = constants_offset(data) + record["offset"]
        assert data[start + count // 2] >> 4 == 0


# name: (model, input shapes, its int4-weight kernel, SNR (dB) at least, and at most this far below int8)
CASES = {
    "conv": (Fn(lambda m, x: m.layers[0](x), nn.Conv2d(8, 12, 3, padding=1)), [IMAGE], "conv_s8_w4", 12.0, 14.0),
    "conv_1x1": (Fn(lambda m, x: m.layers[0](x), nn.Conv2d(8, 12, 1)), [IMAGE], "conv_s8_w4", 12.0, 14.0),
    "grouped": (Fn(lambda m, x: m.layers[0](x), nn.Conv2d(8, 12, 3, padding=1, groups=2)), [IMAGE], "conv_s8_w4",
                12.0, 14.0),
    "depthwise": (Fn(lambda m, x: m.layers[0](x), nn.Conv2d(8, 8, 3, padding=1, groups=8)), [IMAGE], "dwconv_s8_w4",
                  12.0, 14.0),
    "linear": (Fn(lambda m, x: m.layers[0](x), nn.Linear(20, 10)), [(1, 5, 20)], "fc_s8_w4", 12.0, 14.0),
}


@pytest.mark.parametrize("name", CASES)
def test_int4_op_runs_its_kernel_near_int8(name):
    model, shapes, kernel, floor, below = CASES[name]
    p8, p4, inputs, ref = compile_both(model, shapes)
    assert kernel in p4.kernels, p4.kernels
    assert not any(k in p4.kernels for k in ("conv_s8", "dwconv_s8", "fc_s8")), p4.kernels
    assert all(op["weights"] == "int4" for op in p4.describe()["ops"] if "weights" in op)
    snr8, snr4 = snr_db(p8.run(inputs)[0], ref), snr_db(p4.run(inputs)[0], ref)
    # int4 has 1/18 of int8's steps: about 25 dB less weight SNR, much of it averaged out by the sums.
    assert snr4 > floor and snr4 > snr8 - below and snr4 < snr8, (snr8, snr4)


def constant_bytes(program: Program) -> int:
    return program.describe()["constant_bytes"]


def test_fc_autoencoder_constants_shrink():
    model = zoo.get("fc_autoencoder")
    ep = model.export()
    cal = model.calibration(8)
    p8, p4 = (mcuflow.compile(ep, TARGET, cal, weights=w) for w in ("int8", "int4"))
    weights8 = sum(t["bytes"] for t in p8._host.tensors if t["storage"] == "constant" and t["dtype"] == "int8")
    weights4 = sum(t["bytes"] for _, t in int4_records(p4))
    assert len(int4_records(p4)) == 10 and 0.5 <= weights4 / weights8 < 0.501, (weights4, weights8)
    # Per-channel int4 weights add a multiplier and shift per output (8 bytes each) to the int8
    # program's one per layer: 132,096 weight bytes + 20,064 of biases and tables.
    assert constant_bytes(p4) < 0.57 * constant_bytes(p8), (constant_bytes(p4), constant_bytes(p8))
    assert len(p4.device_image) < 0.58 * len(p8.device_image)


def test_op_without_an_int4_kernel_keeps_int8_weights_and_says_why(tmp_path, capsys):
    model = Fn(lambda m, x: m.layers[1](m.layers[0](x)), nn.ConvTranspose2d(8, 6, 2, stride=2), nn.Conv2d(6, 4, 3))
    _, p4, inputs, ref = compile_both(model, [IMAGE])
    ops = {op["kind"]: op for op in p4.describe()["ops"] if "weights" in op}
    assert ops["conv_transpose2d"]["weights"] == "int8: no int4-weight kernel for conv_transpose2d"
    assert ops["conv2d"]["weights"] == "int4" and ops["conv2d"]["kernel"] == "conv_s8_w4"
    summary = p4.summary()
    assert "int4 weights: 1 op(s); int8 weights kept: 1" in summary
    assert "no int4-weight kernel for conv_transpose2d" in summary
    path = tmp_path / "m.mfp"
    p4.save(str(path))
    assert cli.main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "weights: int8: no int4-weight kernel for conv_transpose2d" in out and "weights: int4" in out
    assert snr_db(p4.run(inputs)[0], ref) > 10


def test_verifier_refuses_a_truncated_packed_tensor():
    _, p4, _, _ = compile_both(CASES["linear"][0], CASES["linear"][1])
    [(index, record)] = int4_records(p4)
    assert record["bytes"] == 100
    data = bytearray(p4.data)
    at = struct.unpack_from("<I", data, TENSORS_OFFSET)[0] + TENSOR_RECORD * index + RECORD_BYTES_FIELD
    for wrong in (99, 200, 101):  # one byte short, a byte per element, one byte long
        struct.pack_into("<I", data, at, wrong)
        with pytest.raises(InputError, match=f"tensor {index}"):
            Program(with_crc(data))


@pytest.mark.parametrize("options, message", [
    (dict(weights="int3"), "unknown weights 'int3' (int8, int4 or mixed)"),
    (dict(weights="int4", precision="int16"), "weights 'int4' apply to int8 programs (W4A8); precision 'int16' "
                                              "needs weights 'int8'"),
    (dict(weights="int4", precision="fp32"), "precision 'fp32' needs weights 'int8'"),
])
def test_bad_weights_options_are_one_line(options, message):
    bad_option_is_one_line(options, message)


def test_cli_bad_weights_is_one_line(tmp_path, capsys):
    ep = torch.export.export(nn.Linear(4, 2).eval(), (torch.zeros(1, 4),))
    model = tmp_path / "m.pt2"
    torch.export.save(ep, str(model))
    np.savez(tmp_path / "c.npz", np.zeros((2, 1, 4), np.float32))
    code = cli.main(["compile", str(model), "--calibration", str(tmp_path / "c.npz"), "--weights", "int2",
                     "-o", str(tmp_path / "x.mfp")])
    err = capsys.readouterr().err.strip()
    assert code == 1 and err.count("\n") == 0 and "unknown weights 'int2' (int8, int4 or mixed)" in err, err
    assert cli.main(["compile", str(model), "--calibration", str(tmp_path / "c.npz"), "--weights", "int4",
                     "--target", "reference", "-o", str(tmp_path / "x.mfp")]) == 0
    assert "fc_s8_w4" in Program.load(str(tmp_path / "x.mfp")).kernels
