"""1-D layers (Conv1d and its pools) through the whole pipeline: run as the 2-D ops of one row
(N, C, L) -> (N, C, 1, L), with the ops between them kept on the row view (lift_rows), so they
get the 2-D kernels of every tier and the pad / batch-norm folding of 2-D convolutions.

float32 against PyTorch eager; int8 within the bounds test_ops.py uses (one step for ops that
keep their input's quantization, 5 % of the output range for layers with weights)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import mcuflow
from test_ops import Fn, calibration, dequantize, export, fp32_matches_eager_and_int8_stays_close, quantize, randn

TARGET = "reference"
L3 = (1, 4, 17)


def kernels(program):
    return [op["kernel"] for op in program.describe()["ops"]]


def reset(module, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        for m in module.modules():
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()
            if isinstance(m, nn.BatchNorm1d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return module


# name -> (forward, input shapes, layers)
LAYERS = {
    "conv": (lambda m, x: m.layers[0](x), [L3], [nn.Conv1d(4, 6, 3)]),
    "conv_padded": (lambda m, x: m.layers[0](x), [L3], [nn.Conv1d(4, 6, 5, padding=2, bias=False)]),
    "conv_same_even": (lambda m, x: m.layers[0](x), [L3], [nn.Conv1d(4, 3, 4, padding="same")]),
    "conv_strided": (lambda m, x: m.layers[0](x), [L3], [nn.Conv1d(4, 5, 3, stride=2, padding=1)]),
    "conv_dilated": (lambda m, x: m.layers[0](x), [L3], [nn.Conv1d(4, 4, 3, dilation=3)]),
    "conv_unbatched": (lambda m, x: m.layers[0](x), [(4, 17)], [nn.Conv1d(4, 6, 3)]),
    "depthwise": (lambda m, x: m.layers[0](x), [L3], [nn.Conv1d(4, 4, 5, groups=4, padding=2)]),
    "depthwise_mult2": (lambda m, x: m.layers[0](x), [L3], [nn.Conv1d(4, 8, 3, groups=4)]),
    "causal_dilated": (lambda m, x: m.layers[0](F.pad(x, (4, 0))), [L3], [nn.Conv1d(4, 4, 3, dilation=2)]),
    "conv_bn_relu": (lambda m, x: F.relu(m.layers[1](m.layers[0](x))), [L3],
                     [nn.Conv1d(4, 6, 3, padding=1), nn.BatchNorm1d(6)]),
    "chomp_residual": (lambda m, x: F.relu(m.layers[0](x)[:, :, :-2] + x), [L3], [nn.Conv1d(4, 4, 3, padding=2)]),
    "conv_flatten_linear": (lambda m, x: m.layers[1](m.layers[0](x).flatten(1)), [L3],
                            [nn.Conv1d(4, 3, 3, stride=2), nn.Linear(24, 5)]),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_conv1d_fp32_matches_eager_and_int8_stays_close(name):
    fn, shapes, layers = LAYERS[name]
    fp32_matches_eager_and_int8_stays_close(reset(Fn(fn, *layers)).eval(), shapes)


def test_batch_norm_and_causal_pad_fold_and_no_copy_runs_between_layers():
    """Conv1d+BN+ReLU, a causal pad, a residual add, a pool: only the 2-D kernels, the BN and pad
    folded into the convolutions, and no copy at the boundary either: the (N, C, L) input and
    output are stored channels last, (N, L, C), as the row views' NHWC bytes."""
    model = reset(Fn(lambda m, x: F.max_pool1d(F.relu(m.layers[2](F.pad(
        F.relu(m.layers[1](m.layers[0](x))), (2, 0))) + x), 2),
        nn.Conv1d(4, 4, 3, padding=1), nn.BatchNorm1d(4), nn.Conv1d(4, 4, 3))).eval()
    ep = export(model, [L3])
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration([L3]))
    assert kernels(program) == ["quantize_f32_s8", "conv_s8", "conv_s8", "add_s8", "maxpool_s8",
                                "dequantize_s8_f32"], kernels(program)
    assert [(io["shape"], io["layout"]) for io in program.inputs + program.outputs] == [
        ([1, 4, 17], "nhwc"), ([1, 4, 8], "nhwc")]
    x = randn(L3, 3)
    with torch.no_grad():
        ref = model(x).numpy()
    assert np.abs(program.run([x.numpy()])[0] - ref).max() <= 0.05 * float(ref.max() - ref.min())
    # The core-ATen graph (convolution, unsqueeze + max_pool2d_with_indices + squeeze) compiles
    # to the same program.
    decomposed = mcuflow.compile(ep.run_decompositions(), target=TARGET, calibration=calibration([L3]))
    assert kernels(decomposed) == kernels(program)
    np.testing.assert_array_equal(decomposed.run([x.numpy()])[0], program.run([x.numpy()])[0])


CHANNELS_LAST_IO = {
    # name -> (forward, layers, (input layout, first output's layout))
    "conv1d_out_3d": (lambda m, x: m.layers[0](x), [nn.Conv1d(4, 6, 3, padding=1)], ("nhwc", "nhwc")),
    "conv1d_to_logits": (lambda m, x: m.layers[1](m.layers[0](x).mean(-1)), [nn.Conv1d(4, 6, 3), nn.Linear(6, 3)],
                         ("nhwc", "plain")),
    "input_also_transposed": (lambda m, x: m.layers[0](x).mean(-1) + x.transpose(1, 2)[:, 0, :1],
                              [nn.Conv1d(4, 6, 3)], ("plain", "plain")),
    # a slice of a 1-D layer's output stays on the row view: the output is still only its reshape
    "conv1d_output_also_sliced": (lambda m, x: (m.layers[0](x), m.layers[0](x)[..., 2:5].transpose(1, 2)),
                                  [nn.Conv1d(4, 6, 3)], ("nhwc", "nhwc")),
}


@pytest.mark.parametrize("name", sorted(CHANNELS_LAST_IO))
@pytest.mark.parametrize("io", ["float32", "int8"])
def test_1d_inputs_and_outputs_are_channels_last_where_only_1d_layers_touch_them(name, io):
    """An (N, C, L) model input or output read or written only by 1-D layers is stored (N, L, C)
    (layout "nhwc", like an image's NHWC), so no transposing copy runs; Program.run takes and
    returns PyTorch's (N, C, L) either way, fp32 equal to eager, int8 within 5 % of the range."""
    fn, layers, (in_layout, out_layout) = CHANNELS_LAST_IO[name]
    model = reset(Fn(fn, *layers)).eval()
    ep = export(model, [L3])
    x = randn(L3, 6)
    with torch.no_grad():
        out = model(x)
    refs = [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    int8 = mcuflow.compile(ep, target=TARGET, calibration=calibration([L3]), io=io)
    for program in (fp32, int8):
        assert program.inputs[0]["layout"] == in_layout and program.outputs[0]["layout"] == out_layout
        assert program.inputs[0]["shape"] == list(L3)
    if name == "conv1d_out_3d":  # nothing but the convolution (and the float I/O's quantization)
        assert [k for k in kernels(int8) if "quantize" not in k] == ["conv_s8"]
    for got, ref in zip(fp32.run([x.numpy()]), refs):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    xs = [x.numpy()] if io == "float32" else [quantize(x.numpy(), int8.inputs[0]).astype(np.int8)]
    for got, ref, spec in zip(int8.run(xs), refs, int8.outputs):
        real = got if io == "float32" else dequantize(got, spec)
        assert real.shape == ref.shape
        assert np.abs(real - ref).max() <= 0.05 * float(np.ptp(ref)), name


@pytest.mark.parametrize("target, conv, depthwise", [("cortex-m0", "conv_s8_scalar", "dwconv_s8_scalar"),
                                                     ("cortex-m4", "conv_s8_dsp", "dwconv_s8_dsp"),
                                                     ("cortex-m55", "conv_s8_mve", "dwconv_s8_mve")])
def test_conv1d_gets_the_tier_kernels_of_the_2d_convolution(target, conv, depthwise):
    model = reset(Fn(lambda m, x: m.layers[1](m.layers[0](x)), nn.Conv1d(4, 8, 3, padding=1),
                     nn.Conv1d(8, 8, 5, groups=8, padding=2))).eval()
    program = mcuflow.compile(export(model, [L3]), target=target, calibration=calibration([L3]))
    assert [conv, depthwise] == [k for k in kernels(program) if "conv" in k]


POOLS = {
    "max_pool": lambda m, x: F.max_pool1d(x, 3, stride=2, padding=1),
    "max_pool_ceil": lambda m, x: F.max_pool1d(x, 2, ceil_mode=True),
    "avg_pool": lambda m, x: F.avg_pool1d(x, 2),
    "avg_pool_exclude_pad": lambda m, x: F.avg_pool1d(x, 3, stride=2, padding=1, count_include_pad=False),
    "avg_pool_include_pad": lambda m, x: F.avg_pool1d(x, 4, stride=3, padding=2),
    "adaptive_avg_pool_1": lambda m, x: F.adaptive_avg_pool1d(x, 1),
    "adaptive_avg_pool_3_of_slice": lambda m, x: F.adaptive_avg_pool1d(x[:, :, 1:16], 3),
    "mean_last": lambda m, x: F.relu(x).mean(-1),
    "relu_sum_keepdim": lambda m, x: F.relu(F.max_pool1d(x, 2)).sum(dim=(1, 2), keepdim=True),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool1d_int8_within_one_step_and_fp32_matches_eager(name):
    model = Fn(POOLS[name])
    ep = export(model, [L3])
    x = randn(L3, 7)
    fp32 = mcuflow.compile(ep, target=TARGET, precision="fp32")
    with torch.no_grad():
        np.testing.assert_allclose(fp32.run([x.numpy()])[0], model(x).numpy(), rtol=1e-5, atol=1e-6)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration([L3]), io="int8")
    q = np.random.default_rng(11).integers(-128, 128, size=L3).astype(np.int8)
    with torch.no_grad():
        real = model(torch.from_numpy(dequantize(q, program.inputs[0]))).numpy()
    steps = np.abs(program.run([q])[0].astype(np.float64) - quantize(real, program.outputs[0]))
    assert steps.max() <= 1, f"{name}: {int(steps.max())} steps"
