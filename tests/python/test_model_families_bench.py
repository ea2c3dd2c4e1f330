"""bench/models/: two of its family definitions compile for the scalar, DSP and MVE tiers and name
their kernels as the model-family benchmark reports them (bench/models/run.py's kernel_report):
MobileNetV3-Small 0.5 at 96×96 runs every op on MVE kernels on cortex-m55 (the family benchmark's target), and
EfficientNet-B0 0.35 (SiLU, sigmoid-gated squeeze-and-excite, 5×5 depthwise) leaves no op on a
reference kernel on cortex-m4 or cortex-m55 without the tier kernel's refusal; ShuffleNetV2's data
movement (cat slices, channel splits and shuffles) runs on tier kernels."""

import sys
from pathlib import Path

import pytest

import mcuflow
from mcuflow import zoo
from mcuflow.firmware_sources import kernel_tier

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "models"))
from architectures import SPECS  # noqa: E402
from run import MISSING_TIER_KERNELS, kernel_report  # noqa: E402

CALIBRATION_SAMPLES = 4


@pytest.fixture(scope="module")
def programs():
    """(model, target) -> int8 program with int8 I/O (no input quantization or output dequantization ops)."""
    compiled = {}
    for name in ("mobilenet_v3_s05", "efficientnet_b0"):
        model = zoo.get(SPECS[name])
        ep, calibration = model.export(), model.calibration(CALIBRATION_SAMPLES)
        for target in ("cortex-m0", "cortex-m4", "cortex-m55"):
            compiled[name, target] = mcuflow.compile(ep, target=target, calibration=calibration, io="int8")
    return compiled


def test_mobilenet_v3_small_runs_every_op_on_mve_kernels(programs):
    report = kernel_report(programs["mobilenet_v3_s05", "cortex-m55"])
    assert report["tier_ops"] == report["ops"] and not report["reference"] and not report["float"]
    assert {kernel_tier(k) for k in report["kernels"]} == {"mve"}
    assert {"lut_s8_mve", "mul_s8_mve", "dwconv_s8_mve", "conv_s8_1x1_mve"} <= set(report["kernels"])


@pytest.mark.parametrize("name", ["mobilenet_v3_s05", "efficientnet_b0"])
@pytest.mark.parametrize("target, tier", [("cortex-m0", "scalar"), ("cortex-m4", "dsp"), ("cortex-m55", "mve")])
def test_family_ops_on_reference_kernels_carry_the_tier_kernels_refusal(programs, name, target, tier):
    program = programs[name, target]
    report = kernel_report(program)
    assert program.metadata["tier"] == tier and not report["float"]
    assert report["tier_ops"] + len(report["reference"]) == report["ops"]
    # "reference fallback: <why>" is a tier kernel's refusal; "reference: no <tier> kernel" would be a gap.
    for op in report["reference"]:
        assert op["reason"].startswith("reference fallback: needs "), op
    assert all(op["kernel"] != "dwconv_s8" for op in report["reference"])  # every tier has a depthwise of any window
    if tier != "scalar":
        assert {op["kind"] for op in report["reference"]} <= {"conv2d"}


def test_shufflenet_data_movement_runs_on_tier_kernels():
    """ShuffleNetV2's cat slices, channel splits and channel shuffles (one permute each, fuse_permutes)
    run on DSP and MVE kernels; with float32 I/O on the FPU-less scalar tier the input's quantization is
    the one op left on its reference, and the benchmark says what stands in the way (results.md)."""
    model = zoo.get(SPECS["shufflenet_v2_05"])
    ep, calibration = model.export(), model.calibration(CALIBRATION_SAMPLES)
    for target, tier in (("cortex-m4", "dsp"), ("cortex-m55", "mve")):
        report = kernel_report(mcuflow.compile(ep, target=target, calibration=calibration, io="int8"))
        assert not report["reference"] and not report["float"], (target, report["reference"])
        assert {f"{k}_{tier}" for k in ("concat_slice_s8", "strided_copy_b8", "permute_b8")} <= set(report["kernels"])
    report = kernel_report(mcuflow.compile(ep, target="cortex-m0", calibration=calibration))
    missing = {op["kernel"] for op in report["reference"] if op["reason"] == "reference: no scalar kernel for this op yet"}
    assert missing == {"quantize_f32_s8"} and missing <= set(MISSING_TIER_KERNELS)
