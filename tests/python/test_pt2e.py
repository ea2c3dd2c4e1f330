"""PyTorch's own quantization flow into mcuflow: prepare_pt2e with mcuflow's quantizer ->
calibrate -> convert_pt2e -> export -> mcuflow.compile without calibration data. The int8 program
computes what the converted model computes in PyTorch: every output element within one step of
the output's quantization, the same top-1. Schemes the kernels cannot take are refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

pytest.importorskip("torchao.quantization.pt2e")

import mcuflow  # noqa: E402
from mcuflow import zoo  # noqa: E402
from mcuflow.errors import UnsupportedModelError  # noqa: E402
from mcuflow.quantizer import MCUFlowQuantizer  # noqa: E402
from torchao.quantization.pt2e import observer as observers  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torchao.quantization.pt2e.quantizer import QuantizationSpec  # noqa: E402


class SmallCNN(nn.Module):
    """conv+bn+relu, depthwise + residual add, max pool, a constant operand, cat, slice,
    flatten, linear, softmax."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.offset = nn.Parameter(torch.randn(1, 8, 1, 1) * 0.1)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        y = nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        z = nn.functional.relu6(self.depthwise(y) + y) + self.offset
        z = torch.cat([z, y], 1)[:, 4:12]
        return torch.softmax(self.fc(z.flatten(1)), -1)


def small_cnn():
    torch.manual_seed(0)
    model = SmallCNN().eval()
    with torch.no_grad():  # BatchNorm statistics that are not the identity
        model.bn.running_mean.uniform_(-0.2, 0.2)
        model.bn.running_var.uniform_(0.5, 2.0)
    rng = np.random.default_rng(0)
    data = rng.normal(0.0, 1.0, (40, 3, 8, 8)).astype(np.float32)
    return model, data[:20], data[20:]


def converted(module, calibration: np.ndarray, quantizer=None):
    """The PT2E-quantized model (calibrated on ``calibration``) and its export."""
    example = (torch.from_numpy(calibration[:1]),)
    graph = torch.export.export(module, example).module()
    prepared = prepare_pt2e(graph, quantizer or MCUFlowQuantizer())
    with torch.no_grad():
        for x in calibration:
            prepared(torch.from_numpy(x[None]))
    model = convert_pt2e(prepared)
    return model, torch.export.export(model, example)


def output_scale(ep) -> float:
    """The scale of the graph output's dequantize node."""
    output = next(n for n in ep.graph.nodes if n.op == "output").args[0][0]
    assert "dequantize_per_tensor" in str(output.target), output.target
    return float(output.args[1])


def output_steps(program: mcuflow.Program, model, ep, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(|program - converted model| in output quantization steps, program outputs, model outputs)."""
    with torch.no_grad():
        expected = np.concatenate([model(torch.from_numpy(x[None])).numpy() for x in inputs])
    got = program.run(inputs)[0]
    return np.abs(got - expected) / output_scale(ep), got, expected


def check_matches_pytorch(program, model, ep, inputs, classes: bool):
    steps, got, expected = output_steps(program, model, ep, inputs)
    assert steps.max() <= 1.0 + 1e-3, f"{steps.max():.3f} steps apart ({(steps > 1.001).sum()} elements)"
    if classes:
        flat = lambda a: a.reshape(a.shape[0], -1)  # noqa: E731
        np.testing.assert_array_equal(flat(got).argmax(1), flat(expected).argmax(1))


def test_small_cnn_matches_the_converted_model_without_calibration():
    module, calibration, evaluation = small_cnn()
    model, ep = converted(module, calibration)
    program = mcuflow.compile(ep, "cortex-m55")  # no calibration: the graph's own scales
    assert program.metadata["quantization"] == {"observer": "given"}
    assert not program.fallbacks()
    check_matches_pytorch(program, model, ep, evaluation, classes=True)
    # The scales are the graph's: an int8-io program's input has the input quantize node's.
    int8_io = mcuflow.compile(ep, "cortex-m55", io="int8")
    quantize = next(n for n in ep.graph.nodes if str(n.target) == "quantized_decomposed.quantize_per_tensor.default")
    assert (np.float32(int8_io.inputs[0]["scale"]), int8_io.inputs[0]["zero_point"]) == \
        (np.float32(quantize.args[1]), quantize.args[2])


def test_the_softmax_output_is_fixed_and_pools_share_their_input():
    module, calibration, _ = small_cnn()
    _, ep = converted(module, calibration)
    quantized = {}
    for n in ep.graph.nodes:
        if str(n.target) == "quantized_decomposed.quantize_per_tensor.default":
            quantized[n.args[0].target] = (n.args[1], n.args[2])
    assert quantized[torch.ops.aten.softmax.int] == (1 / 256, -128)
    assert quantized[torch.ops.aten.max_pool2d.default] == quantized[torch.ops.aten.relu.default]
    assert quantized[torch.ops.aten.cat.default] == quantized[torch.ops.aten.add.Tensor]


def graph_scale(ep, which: str) -> tuple[np.float32, int]:
    """(scale, zero point) of the graph input's quantize node or the graph output's dequantize node."""
    if which == "output":
        node = next(n for n in ep.graph.nodes if n.op == "output").args[0][0]
    else:
        node = next(n for n in ep.graph.nodes if str(n.target) == "quantized_decomposed.quantize_per_tensor.default")
    return np.float32(node.args[1]), int(node.args[2])


# Models shallow enough that the kernels' rounding (TFLite's fixed-point requantization, ties away
# from zero) and PyTorch's float arithmetic never part by more than one step at the output.
WITHIN_ONE_STEP = {"tcn"}
# Two minutes each on a shared 2-core machine; mobilenet_v1_025 stands for them (same ops).
LARGEST = {"mobilenet_v2_035", "mobilenet_v3_s"}


@pytest.mark.parametrize("name", [n for n in zoo.names() if n not in LARGEST])
def test_zoo_model_keeps_the_graph_quantization(name):
    m = zoo.get(name, seed=0)
    model, ep = converted(m.module, m.calibration(8))
    program = mcuflow.compile(ep, "cortex-m55", io="int8")
    assert not program.fallbacks()
    assert (np.float32(program.inputs[0]["scale"]), program.inputs[0]["zero_point"]) == graph_scale(ep, "input")
    assert (np.float32(program.outputs[0]["scale"]), program.outputs[0]["zero_point"]) == graph_scale(ep, "output")
    float_io = mcuflow.compile(ep, "cortex-m55")
    steps, got, expected = output_steps(float_io, model, ep, m.evaluation(8))
    if name in WITHIN_ONE_STEP:
        check_matches_pytorch(float_io, model, ep, m.evaluation(8), classes=m.spec.output == "classes")
    else:  # one-step differences inside the model compound with depth (docs/quantization.md)
        assert steps.mean() < 0.05 * 255, f"mean {steps.mean():.2f} steps apart"


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)  # the same weights whatever ran before in this worker
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)


def linear_data():
    return np.random.default_rng(1).normal(0, 1, (8, 16)).astype(np.float32)


class SchemeQuantizer(MCUFlowQuantizer):
    """mcuflow's annotations with one spec replaced: what another backend's quantizer might choose."""

    def __init__(self, activation=None, weight=None):
        super().__init__()
        self.replacement_activation, self.replacement_weight = activation, weight
        if activation is not None:
            self.activation = activation

    def weight_spec(self, axis):
        return self.replacement_weight or super().weight_spec(axis)


ASYMMETRIC_WEIGHTS = QuantizationSpec(torch.int8, observers.MinMaxObserver, -128, 127, torch.per_tensor_affine)
UINT8 = QuantizationSpec(torch.uint8, observers.MinMaxObserver, 0, 255, torch.per_tensor_affine)
NARROW = QuantizationSpec(torch.int8, observers.MinMaxObserver, -127, 127, torch.per_tensor_symmetric)
PER_CHANNEL_ACTIVATIONS = QuantizationSpec(torch.int8, observers.PerChannelMinMaxObserver, -128, 127,
                                           torch.per_channel_affine, 1)


class Tanh(nn.Module):
    def forward(self, x):
        return torch.tanh(x)


@pytest.mark.parametrize("module, quantizer, message", [
    (Linear, SchemeQuantizer(weight=ASYMMETRIC_WEIGHTS),
     r"^linear at .*: weight .* has a given asymmetric quantization; the kernels take symmetric int8 weights"),
    (Linear, SchemeQuantizer(activation=UINT8),
     r"^quantize_per_tensor.default at .*: tensor x is quantized to torch.uint8; mcuflow's kernels take int8"),
    (Linear, SchemeQuantizer(activation=NARROW),
     r"^quantize_per_tensor.default at .*: tensor x is quantized to \[-127, 127\]; activations take the whole "
     r"int8 range"),
    (Tanh, SchemeQuantizer(activation=PER_CHANNEL_ACTIVATIONS),
     r"^quantize_per_channel.default at .*: tensor x is quantized per channel \(dim 1\)"),
])
def test_an_incompatible_scheme_is_refused_in_one_line(module, quantizer, message):
    _, ep = converted(module().eval(), linear_data(), quantizer)
    with pytest.raises(UnsupportedModelError, match=message) as e:
        mcuflow.compile(ep, "cortex-m55")
    assert "\n" not in str(e.value)


def test_a_pool_output_given_another_scale_is_refused():
    class Pool(nn.Module):
        def forward(self, x):
            return nn.functional.max_pool2d(x, 2)

    class OwnOutputScale(MCUFlowQuantizer):
        def annotate(self, model):
            from torchao.quantization.pt2e.quantizer import QuantizationAnnotation
            for node in model.graph.nodes:
                if node.target == torch.ops.aten.max_pool2d.default:
                    node.meta["quantization_annotation"] = QuantizationAnnotation(
                        {node.args[0]: self.activation}, self.activation, _annotated=True)
            return model

    data = np.random.default_rng(2).normal(0, 1, (8, 1, 4, 4)).astype(np.float32)
    # A pool's output observed on its own has a narrower range than its input's.
    _, ep = converted(Pool().eval(), data, OwnOutputScale())
    with pytest.raises(UnsupportedModelError, match=r"max_pool2d at .*: output .* is given scale .*; the kernel's "
                                                    r"output has scale .* \(its input's\)"):
        mcuflow.compile(ep, "cortex-m55")


def test_a_float_graph_still_needs_calibration():
    ep = torch.export.export(Linear().eval(), (torch.zeros(1, 16),))
    with pytest.raises(mcuflow.errors.InputError, match="needs calibration data"):
        mcuflow.compile(ep, "cortex-m55")


def test_qat_fine_tune_then_compile_matches_the_converted_model():
    from torchao.quantization.pt2e import move_exported_model_to_eval
    from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

    module, calibration, evaluation = small_cnn()
    example = (torch.from_numpy(calibration[:1]),)
    prepared = prepare_qat_pt2e(torch.export.export(module.train(), example).module(), MCUFlowQuantizer(is_qat=True))
    optimizer = torch.optim.SGD(prepared.parameters(), lr=0.01)
    target = torch.from_numpy(np.arange(len(calibration)) % 10)
    for x, y in zip(calibration[:6], target):  # a few steps of training with fake quantization (batch 1, as exported)
        optimizer.zero_grad()
        loss = nn.functional.nll_loss(torch.log(prepared(torch.from_numpy(x[None])) + 1e-6), y[None])
        loss.backward()
        optimizer.step()
    move_exported_model_to_eval(prepared)
    model = convert_pt2e(prepared)
    ep = torch.export.export(model, example)
    program = mcuflow.compile(ep, "cortex-m55")
    check_matches_pytorch(program, model, ep, evaluation, classes=True)
