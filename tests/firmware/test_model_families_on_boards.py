"""The model families of the zoo (python/mcuflow/zoo/families.py: a Conv1d HAR
classifier, a TCN with PReLU, a U-Net with bilinear upsampling and Mish) compiled for the cores
of qemu-m0, qemu-m4 and qemu-m55, the timm-style ViT and the GroupNorm CNN: int8 on the board bit-identical to the host runtime, with
Conv1d on the tier's convolution kernels; float32 programs (the new float kernels) within float
rounding of the host (the device's libm may round tanh/exp differently in the last bit)."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device, zoo  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from fwutil import on_tier, requires_cross  # noqa: E402

pytestmark = requires_cross

SAMPLES, CALIBRATION_SAMPLES = 2, 32
TIER_CONV = {"qemu-m0": "conv_s8_scalar", "qemu-m4": "conv_s8_dsp", "qemu-m55": "conv_s8_mve"}
NEW_KERNELS = {"har_cnn1d": set(), "tcn": {"prelu_s8"}, "unet_bilinear": {"resize_bilinear_s8", "lut_s8"}}

_models = {}


def model(name):
    if name not in _models:
        m = zoo.get(name)
        _models[name] = (m, m.export())
    return _models[name]


@pytest.mark.parametrize("board", sorted(TIER_CONV))
@pytest.mark.parametrize("name", sorted(NEW_KERNELS))
def test_int8_model_family_bit_exact_on_board(name, board):
    m, ep = model(name)
    program = mcuflow.compile(ep, target=get_board(board).core, calibration=m.calibration(CALIBRATION_SAMPLES))
    used = {op["kernel"] for op in program.describe()["ops"]}
    assert on_tier(NEW_KERNELS[name], board) | {TIER_CONV[board]} <= used, used
    x = m.evaluation(SAMPLES)
    np.testing.assert_array_equal(device.run_on_board(program, x, board, timeout=300)[0], program.run(x)[0])


NEW_FLOAT_KERNELS = {"tcn": {"prelu_f32"}, "unet_bilinear": {"resize_bilinear_f32", "activation_f32"}}


@pytest.mark.parametrize("name", sorted(NEW_FLOAT_KERNELS))
def test_fp32_model_family_on_board(name):
    m, ep = model(name)
    program = mcuflow.compile(ep, target="cortex-m4", precision="fp32")
    assert NEW_FLOAT_KERNELS[name] <= {op["kernel"] for op in program.describe()["ops"]}
    x = m.evaluation(SAMPLES)
    on_host = program.run(x)[0]
    np.testing.assert_allclose(device.run_on_board(program, x, "qemu-m4", timeout=300)[0], on_host,
                               rtol=1e-5, atol=1e-5 * float(np.abs(on_host).max()))


@pytest.mark.parametrize("board", sorted(TIER_CONV))
def test_vit_tiny_bit_exact_on_board(board):
    m, ep = model("vit_tiny")
    program = mcuflow.compile(ep, target=get_board(board).core, calibration=m.calibration(CALIBRATION_SAMPLES))
    assert not program.fallbacks()
    x = m.evaluation(1)
    np.testing.assert_array_equal(device.run_on_board(program, x, board, timeout=600)[0], program.run(x)[0])


@pytest.mark.parametrize("board", sorted(TIER_CONV))
def test_group_norm_cnn_bit_exact_on_board(board):
    """Its GroupNorms run in place (aliasing::kExactlyInPlace): that is what fits qemu-m0's 16 KiB."""
    m, ep = model("group_norm_cnn")
    program = mcuflow.compile(ep, target=get_board(board).core, calibration=m.calibration(CALIBRATION_SAMPLES))
    assert {"group_norm_s8", TIER_CONV[board]} <= set(program.kernels) and not program.fallbacks()
    d = program.describe()
    norms = {d["tensors"][op["outputs"][0]]["name"] for op in d["ops"] if op["kernel"] == "group_norm_s8"}
    assert norms & {pair["output"] for pair in d["plan"]["in_place"]}
    x = m.evaluation(SAMPLES)
    np.testing.assert_array_equal(device.run_on_board(program, x, board, timeout=300)[0], program.run(x)[0])
