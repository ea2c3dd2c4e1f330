"""Whole models and single ops through the full pipeline on the host runtime:
torch.export → C++ compiler → .mfp → C++ host runtime, compared with PyTorch eager."""

import json

import numpy as np
import pytest
import torch

import mcuflow
from models import SINGLE_OP_CASES, make_model
from plan_check import check_plan

WHOLE_MODELS = ["small_cnn", "ds_cnn", "resnet"]
CALIBRATION_SAMPLES = 64
HELD_OUT_SAMPLES = 200


def export(model):
    return torch.export.export(model, model.example_input(seed=0))


def inputs(model, seed, batch):
    return [x.numpy() for x in model.example_input(seed=seed, batch=batch)]


def eager(model, xs):
    """PyTorch eager, one sample at a time like the program (some models hard-code batch 1)."""
    with torch.no_grad():
        outs = [model(*[torch.from_numpy(x[b:b + 1]) for x in xs]) for b in range(len(xs[0]))]
    return torch.cat(outs).numpy()


def calibration(model):
    return [tuple(t) for t in zip(*[torch.from_numpy(x).split(1) for x in inputs(model, 1, CALIBRATION_SAMPLES)])]


@pytest.fixture(scope="module", params=WHOLE_MODELS)
def whole(request):
    model = make_model(request.param)
    ep = export(model)
    return request.param, model, ep


def assert_plan_has_no_overlap(program):
    """Independent check of the memory plan: tensors live at the same op never share bytes (but
    for in-place ops), and the lower bound is the brute-force one (plan_check.py)."""
    check_plan(program)


def test_float_program_matches_eager(whole):
    name, model, ep = whole
    program = mcuflow.compile(ep, target="cortex-m4", precision="fp32")
    xs = inputs(model, 2, 16)
    err = np.abs(program.run(xs)[0] - eager(model, xs)).max()
    assert err <= 1e-4, f"{name}: eager vs float program max abs error {err}"
    assert_plan_has_no_overlap(program)


def test_int8_program_agrees_with_float(whole):
    name, model, ep = whole
    program = mcuflow.compile(ep, target="cortex-m55", calibration=calibration(model))
    xs = inputs(model, 3, HELD_OUT_SAMPLES)
    ref = eager(model, xs)
    out = program.run(xs)[0]
    agreement = float((out.argmax(-1) == ref.argmax(-1)).mean())
    print(f"{name}: int8 host vs float top-1 agreement {agreement:.3f} on {HELD_OUT_SAMPLES} held-out inputs, "
          f"max abs error {np.abs(out - ref).max():.4f}")
    assert agreement >= (0.95 if name == "small_cnn" else 0.85)
    assert_plan_has_no_overlap(program)


def test_program_round_trips_through_a_file(tmp_path):
    model = make_model("small_cnn")
    program = mcuflow.compile(export(model), calibration=calibration(model))
    path = tmp_path / "m.mfp"
    program.save(path)
    loaded = mcuflow.Program.load(path)
    xs = inputs(model, 4, 3)
    np.testing.assert_array_equal(loaded.run(xs)[0], program.run(xs)[0])
    assert "conv_s8" in loaded.summary()


def test_device_image_is_the_program_without_its_metadata():
    """Firmware stores the device image: it loads and runs like the program, carries no metadata,
    is smaller by exactly the metadata section, and its checksum still guards it."""
    model = make_model("small_cnn")
    program = mcuflow.compile(export(model), calibration=calibration(model))
    image = program.device_image
    stripped = mcuflow.Program(image)
    assert stripped.metadata == {} and program.metadata
    assert len(program.data) - len(image) >= len(json.dumps(program.metadata, separators=(",", ":")))
    xs = inputs(model, 5, 4)
    np.testing.assert_array_equal(stripped.run(xs)[0], program.run(xs)[0])
    flipped = bytearray(image)
    flipped[-1] ^= 1
    with pytest.raises(mcuflow.InputError, match="checksum"):
        mcuflow.Program(bytes(flipped))
    with pytest.raises(ValueError, match="checksum"):  # stripping never blesses corrupted bytes
        mcuflow._core.strip_metadata(bytes(flipped))


def test_int8_io_keeps_inputs_and_outputs_int8():
    model = make_model("small_cnn")
    program = mcuflow.compile(export(model), calibration=calibration(model), io="int8")
    spec_in, spec_out = program.inputs[0], program.outputs[0]
    assert spec_in["dtype"] == np.int8 and spec_out["dtype"] == np.int8
    float_io = mcuflow.compile(export(model), calibration=calibration(model))
    x = inputs(model, 5, 1)[0]
    q = np.clip(np.round(x / spec_in["scale"]) + spec_in["zero_point"], -128, 127).astype(np.int8)
    out = program.run([q])[0].astype(np.float32)
    dequantized = (out - spec_out["zero_point"]) * spec_out["scale"]
    np.testing.assert_allclose(dequantized, float_io.run([x])[0], atol=1e-6)


# --- single ops ----------------------------------------------------------------------------

UNSUPPORTED_HERE = {"add_alpha"}  # rejected with a clear error (tested below)
OP_CASES = [c for c in SINGLE_OP_CASES if c not in UNSUPPORTED_HERE]


@pytest.mark.parametrize("case", OP_CASES)
def test_single_op_float_matches_eager(case):
    model = make_model(case)
    program = mcuflow.compile(export(model), target="cortex-m0", precision="fp32")
    xs = inputs(model, 7, 4)
    ref = eager(model, xs)
    np.testing.assert_allclose(program.run(xs)[0], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", OP_CASES)
def test_single_op_int8_close_to_float(case):
    model = make_model(case)
    # minmax: the bound below counts steps of ranges that saturate nothing
    program = mcuflow.compile(export(model), target="cortex-m0", calibration=calibration(model), observer="minmax")
    xs = inputs(model, 8, 4)
    ref = eager(model, xs)
    out = program.run(xs)[0]
    d = program.describe()
    out_step = d["tensors"][d["ops"][-1]["inputs"][0]]["scale"]
    # Kernels are exact to one step (kernel tests); input and weight rounding add error that
    # grows with the reduction size, bounded here by 5% of the output range.
    tolerance = 3 * out_step + 0.05 * float(ref.max() - ref.min())
    assert np.abs(out - ref).max() <= tolerance, case


@pytest.mark.parametrize("case, reason", [("add_alpha", "alpha")])
def test_unsupported_arguments_are_clear_errors(case, reason):
    model = make_model(case)
    with pytest.raises(mcuflow.UnsupportedModelError, match=rf"^{case.split('_')[0]} at .*models.py:\d+.*{reason}"):
        mcuflow.compile(export(model), calibration=calibration(model))


def test_scalar_tables_beyond_one_dimension_limit_still_load():
    """A scalar-tier prepared table larger than the format's 65,536 elements per dimension is
    stored in two dimensions, so the program verifies and runs (it used to fail: bad_tensor)."""
    torch.manual_seed(0)
    model = torch.nn.Linear(1024, 160).eval()
    x = torch.randn(1, 1024)
    program = mcuflow.compile(torch.export.export(model, (x,)), target="cortex-m0",
                              calibration=[(torch.randn(1, 1024),) for _ in range(8)])
    fc = [op for op in program.metadata["ops"] if op["kind"] == "linear"]
    assert [op["kernel"] for op in fc] == ["fc_s8_scalar"]
    tables = [t["dims"] for t in program._host.tensors if t["dtype"] == "int32" and len(t["dims"]) == 2]
    assert any(d[0] * d[1] > 65536 for d in tables), tables
    out, reference = program.run(x.numpy())[0].ravel(), model(x).detach().numpy().ravel()
    assert np.corrcoef(out, reference)[0, 1] > 0.99  # int8 through 1024-deep sums: close, not equal
