"""int16 activations (A16W8, precision="int16") through the compiler, on the host.

* Per op: the int16 program's output is closer to the float model than the int8 program's
  (higher SNR), and it runs on the op's int16 kernel.
* A graph mixing ops with int16 kernels and ops without: requantizations where the widths meet,
  an output near float.
* DS-CNN from the zoo: every weighted op on an int16 kernel, SNR above int8's.
* Bad options: one line each.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import mcuflow
from mcuflow import cli, zoo
from mcuflow.errors import InputError
from mcuflow.options import CompileOptions
from test_ops import Fn, randn

TARGET = "reference"


def snr_db(y, ref):
    return 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / np.sum((y.astype(np.float64) - ref) ** 2))


def compile_both(model, shapes, n_cal=16, n_eval=8, target=TARGET, option=("precision", "int16")):
    """(int8 program, the program with `option` (name, value), evaluation inputs, float outputs) of `model`."""
    torch.manual_seed(0)
    model = model.eval()
    ep = torch.export.export(model, tuple(randn(s, i) for i, s in enumerate(shapes)))
    # Calibration covers the evaluation inputs' range (wider values): no output error from clipping.
    cal = [tuple(randn(s, 100 + 10 * k + i, 2.0) for i, s in enumerate(shapes)) for k in range(n_cal)]
    inputs = [np.stack([randn(s[1:], 1000 + 10 * k + i).numpy() for k in range(n_eval)]) for i, s in enumerate(shapes)]
    with torch.no_grad():
        ref = np.concatenate([model(*(torch.from_numpy(a[k:k + 1]) for a in inputs)).numpy() for k in range(n_eval)])
    programs = [mcuflow.compile(ep, target, cal, **options) for options in ({}, dict([option]))]
    return programs[0], programs[1], inputs, ref


def conv_bn_relu(cin, cout, k, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2, groups=groups), nn.BatchNorm2d(cout), nn.ReLU())


IMAGE = (1, 8, 9, 7)
# name: (model, input shapes, the int16 kernel it must run on, SNR gain over int8 at least (dB))
CASES = {
    "conv": (Fn(lambda m, x: m.layers[0](x), nn.Conv2d(8, 12, 3, padding=1)), [IMAGE], "conv_s16", 1.0),
    "conv_1x1": (Fn(lambda m, x: m.layers[0](x), nn.Conv2d(8, 12, 1)), [IMAGE], "conv_s16", 1.0),
    "depthwise": (Fn(lambda m, x: m.layers[0](x), nn.Conv2d(8, 8, 3, padding=1, groups=8)), [IMAGE], "dwconv_s16",
                  1.0),
    "linear": (Fn(lambda m, x: m.layers[0](x), nn.Linear(20, 10)), [(1, 5, 20)], "fc_s16", 1.0),
    "add": (Fn(lambda m, x, y: x + y), [IMAGE, IMAGE], "add_s16", 20.0),
    "add_constant": (Fn(lambda m, x: x + torch.linspace(-1, 2, 7)), [IMAGE], "add_s16", 20.0),
    "mul": (Fn(lambda m, x, y: x * y), [IMAGE, IMAGE], "mul_s16", 20.0),
    "max_pool": (Fn(lambda m, x: F.max_pool2d(x * 1.5, 2)), [IMAGE], "maxpool_s16", 20.0),
    "avg_pool": (Fn(lambda m, x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)), [IMAGE], "avgpool_s16", 20.0),
    # The table activations (lut_s16: 513 entries, interpolated) and softmax (softmax_s16).
    "sigmoid": (Fn(lambda m, x: torch.sigmoid(x)), [IMAGE], "lut_s16", 20.0),
    "tanh": (Fn(lambda m, x: torch.tanh(x)), [IMAGE], "lut_s16", 20.0),
    "hardswish": (Fn(lambda m, x: F.hardswish(x)), [IMAGE], "lut_s16", 20.0),
    "hardsigmoid": (Fn(lambda m, x: F.hardsigmoid(x)), [IMAGE], "lut_s16", 20.0),
    "silu": (Fn(lambda m, x: F.silu(x)), [IMAGE], "lut_s16", 20.0),
    "gelu": (Fn(lambda m, x: F.gelu(x)), [IMAGE], "lut_s16", 20.0),
    "gelu_tanh": (Fn(lambda m, x: F.gelu(x, approximate="tanh")), [IMAGE], "lut_s16", 20.0),
    "softmax": (Fn(lambda m, x: torch.softmax(x * 2, dim=-1)), [IMAGE], "softmax_s16", 20.0),
    "softmax_channels": (Fn(lambda m, x: torch.softmax(x, dim=1)), [IMAGE], "softmax_s16", 20.0),
}


@pytest.mark.parametrize("name", CASES)
def test_int16_op_is_closer_to_float_than_int8(name):
    model, shapes, kernel, gain = CASES[name]
    p8, p16, inputs, ref = compile_both(model, shapes)
    assert p16.precision == "int16"
    assert kernel in p16.kernels and not any(k.endswith("_s8") for k in p16.kernels), p16.kernels
    snr8, snr16 = snr_db(p8.run(inputs)[0], ref), snr_db(p16.run(inputs)[0], ref)
    assert snr16 > snr8 + gain, (snr8, snr16)


def test_byte_copies_move_int16_values_exactly():
    # permute, slice and a zero pad copy int16 elements as byte pairs: after a max pool (which
    # keeps its input's values), the output is the input's values at int16 precision.
    def fn(m, x):
        y = F.max_pool2d(x, 2)
        return F.pad(y, (1, 0)).permute(0, 1, 3, 2)[:, 1:, :, :3]

    _, p16, inputs, ref = compile_both(Fn(fn), [IMAGE])
    kernels = p16.kernels
    assert "maxpool_s16" in kernels and "permute_b8" in kernels and "strided_copy_b8" in kernels, kernels
    assert not any(k.endswith("_s8") for k in kernels), kernels
    # Max pooling only picks values: the int16 output is the input quantized to int16 (its error
    # is at most half a step of a scale near max|x| / 32767), then copied.
    assert np.max(np.abs(p16.run(inputs)[0] - ref)) < 1e-3 * np.max(np.abs(ref))


def test_mixed_graph_requantizes_where_int8_and_int16_meet():
    # elu and mish have no int16 kernels: their inputs are requantized to int8, and the
    # convolution and the mul after them read int16 copies of their int8 outputs.
    def fn(m, x):
        a = m.layers[0](x)
        b = m.layers[1](F.elu(a))
        return m.layers[2](b + a) * F.mish(a)

    model = Fn(fn, nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1), nn.Conv2d(8, 8, 1))
    p8, p16, inputs, ref = compile_both(model, [IMAGE])
    kernels = p16.kernels
    for k in ("requantize_s16_s8", "requantize_s8_s16", "conv_s16", "add_s16", "mul_s16", "lut_s8"):
        assert k in kernels, (k, kernels)
    assert not p16.fallbacks()
    snr8, snr16 = snr_db(p8.run(inputs)[0], ref), snr_db(p16.run(inputs)[0], ref)
    assert snr16 > 20 and snr16 > snr8 - 1, (snr8, snr16)


def test_ds_cnn_compiles_to_int16_kernels_and_beats_int8():
    model = zoo.get("ds_cnn")
    ep = model.export()
    cal, ev = model.calibration(16), model.evaluation(8)
    with torch.no_grad():
        ref = model.module(torch.from_numpy(ev)).numpy()
    p8 = mcuflow.compile(ep, "cortex-m55", cal)
    p16 = mcuflow.compile(ep, "cortex-m55", cal, precision="int16")
    kernels = p16.kernels
    # cortex-m55: the MVE int16 kernels (kernels/mve/*_s16_mve.cpp)
    assert kernels.count("conv_s16_mve") == 1 and kernels.count("conv_s16_1x1_mve") == 4, kernels
    assert kernels.count("dwconv_s16_mve") == 4, kernels
    assert {"quantize_f32_s16", "avgpool_s16_mve", "fc_s16_mve", "dequantize_s16_f32"} <= set(kernels)
    assert snr_db(p16.run(ev)[0], ref) > snr_db(p8.run(ev)[0], ref)


@pytest.mark.parametrize("options, message", [
    (dict(precision="int15"), "unknown precision 'int15' (int8, int16, fp32 or mixed)"),
    (dict(precision="int16", io="int8"), "precision 'int16' needs io 'float32'"),
    (dict(precision="int16", patches=2), "precision 'int16' needs patches 1"),
    (dict(precision="int16", observer="mse"), "observer 'mse' applies to int8 compilation only"),
])
def test_bad_int16_options_are_one_line(options, message):
    with pytest.raises(InputError) as e:
        CompileOptions(**options)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_int16_without_calibration_is_one_line(tmp_path, capsys):
    ep = torch.export.export(nn.Linear(4, 2).eval(), (torch.zeros(1, 4),))
    with pytest.raises(InputError, match="^int16 compilation needs calibration data"):
        mcuflow.compile(ep, TARGET, precision="int16")
    model = tmp_path / "m.pt2"
    torch.export.save(ep, model)
    assert cli.main(["compile", str(model), "--precision", "int16", "-o", str(tmp_path / "m.mcuf")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--calibration CALIB.npz is required for int16" in err


def test_softmax_s16_exp_table_that_could_zero_a_row_sum_is_refused_at_load():
    # softmax_s16 divides by each row's sum of exp entries: its check takes only an exp table of
    # entries in [0, 32767] whose entry for a difference of 0 is 32767 (the sum is then >= 32767).
    from program_bytes import constants_offset, with_crc

    _, p16, inputs, _ = compile_both(Fn(lambda m, x: torch.softmax(x, dim=-1)), [IMAGE])
    desc = p16.describe()
    (op,) = [op for op in desc["ops"] if op["kernel"] == "softmax_s16"]
    table = desc["tensors"][op["inputs"][1]]
    at = constants_offset(bytearray(p16.data)) + table["offset"]
    assert np.frombuffer(p16.data[at:at + 4], "<i2").tolist()[0] == 32767
    for entry, value in ((0, 0), (0, 32766), (300, -1)):
        data = bytearray(p16.data)
        data[at + 2 * entry:at + 2 * entry + 2] = np.int16(value).tobytes()
        with pytest.raises(mcuflow.InputError, match="bad_params"):
            mcuflow.Program(bytes(with_crc(data)))
    assert mcuflow.Program(p16.data).run([inputs[0][:1]])[0].shape == (1, 8, 9, 7)


def test_softmax_of_inputs_too_wide_for_the_int16_exp_table_input_is_one_line():
    # A scale above 3 (inputs beyond +-98,000) would need a shift below 1 to map differences to
    # the exp table's 16-bit input: one compile error naming the op and the scale.
    from mcuflow.errors import UnsupportedModelError

    with pytest.raises(UnsupportedModelError, match=r"^softmax at .*: the int16 softmax takes input scales from 1.4e-9 to 3 "):
        compile_both(Fn(lambda m, x: torch.softmax(x * 1e5, dim=-1)), [IMAGE])
