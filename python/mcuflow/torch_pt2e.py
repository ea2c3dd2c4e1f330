"""The torch front end's quantize / dequantize nodes: a PT2E-quantized graph brings its own scales.

``convert_pt2e`` (torchao, with ``mcuflow.quantizer.MCUFlowQuantizer`` or any quantizer whose
choices the int8 kernels take) leaves a graph of float ops between ``quantize_per_tensor`` /
``dequantize_per_tensor`` pairs, with weights as int8 constants behind a ``dequantize``. The walker
(``torch_graph``) sends these nodes here before it folds constants, so no scale is lost:

- ``quantize(x)`` of an activation gives ``x`` the node's scale and zero point
  (``GraphBuilder.set_quantization``) and ``dequantize`` passes it on: the pair is the int8
  tensor itself.
- ``dequantize(int8 constant)`` is the constant's real values with the given scales: the compiler
  rounds them back to exactly the given integers. An int32 constant is a bias: the compiler
  derives its scale (input scale × weight scale), so the given one must be that.

What a kernel cannot take is refused in one line naming the node, the tensor and the constraint:
uint8 or other element types, activation ranges narrower than −128…127, per-channel activations,
a tensor quantized twice with different parameters, an int8 weight holding −128 with zero point
0, a bias at another scale. Whether a weight must be
symmetric and per channel is the compiler's rule, by the op that reads it.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from .errors import UnsupportedModelError
from .torch_graph import _Const, _Describer, _TensorId
from .torch_source import node_source

__all__ = ["HANDLERS", "is_quantized"]

_INT8_MIN, _INT8_MAX = -128, 127
_BIAS_RELATIVE_TOLERANCE = 1e-6  # a float32 product computed in another order

_QUANTIZE_PER_TENSOR = ("quantized_decomposed.quantize_per_tensor.default",
                        "quantized_decomposed.quantize_per_tensor.tensor")
_DEQUANTIZE_PER_TENSOR = ("quantized_decomposed.dequantize_per_tensor.default",
                          "quantized_decomposed.dequantize_per_tensor.tensor")
_QUANTIZE_PER_CHANNEL = ("quantized_decomposed.quantize_per_channel.default",)
_DEQUANTIZE_PER_CHANNEL = ("quantized_decomposed.dequantize_per_channel.default",)


def is_quantized(exported_program) -> bool:
    """Whether the graph carries quantize / dequantize nodes (its own scales)."""
    keys = set(_QUANTIZE_PER_TENSOR + _DEQUANTIZE_PER_TENSOR + _QUANTIZE_PER_CHANNEL + _DEQUANTIZE_PER_CHANNEL)
    return any(node.op == "call_function" and str(node.target) in keys for node in exported_program.graph.nodes)


def _refuse(node, what: str) -> UnsupportedModelError:
    op = str(node.target).removeprefix("quantized_decomposed.")
    return UnsupportedModelError(f"{op} at {node_source(node)}: {what}")


def _numbers(d: _Describer, arg) -> list:
    """A scale or zero point argument: a python number or a constant tensor, as a list."""
    v = d.value(arg) if isinstance(arg, torch.fx.Node) else arg
    if isinstance(v, _Const):
        return v.tensor.reshape(-1).tolist()
    if isinstance(v, (int, float)):
        return [v]
    raise UnsupportedModelError(f"internal: a quantization parameter of type {type(v).__name__}")


def _tensor_name(node) -> str:
    x = node.args[0]
    return x.name if isinstance(x, torch.fx.Node) else str(x)


def _spec(d: _Describer, node, per_channel: bool) -> dict:
    """The node's quantization as set_quantization's arguments, checked against what the kernels take."""
    if per_channel:
        _, scales, zero_points, axis, qmin, qmax, dtype = node.args[:7]
    else:
        _, scales, zero_points, qmin, qmax, dtype = node.args[:6]
        axis = -1
    name = _tensor_name(node)
    if dtype == torch.int32:
        return {"bias": True, "scales": [float(s) for s in _numbers(d, scales)]}
    if dtype != torch.int8:
        raise _refuse(node, f"tensor {name} is quantized to {dtype}; mcuflow's kernels take int8 "
                            f"(activations −128…127, weights −127…127)")
    scales = [float(s) for s in _numbers(d, scales)]
    zero_points = [int(z) for z in _numbers(d, zero_points)]
    return {"scales": scales, "zero_points": zero_points, "axis": int(axis), "range": (int(qmin), int(qmax))}


def _check_activation(node, spec: dict) -> None:
    name = _tensor_name(node)
    if spec.get("bias"):
        raise _refuse(node, f"tensor {name} is quantized to int32; mcuflow's kernels take int8 activations")
    if spec["axis"] >= 0:
        raise _refuse(node, f"tensor {name} is quantized per channel (dim {spec['axis']}); the kernels take one "
                            f"scale and zero point per activation")
    if spec["range"] != (_INT8_MIN, _INT8_MAX):
        lo, hi = spec["range"]
        raise _refuse(node, f"tensor {name} is quantized to [{lo}, {hi}]; activations take the whole int8 range "
                            f"[{_INT8_MIN}, {_INT8_MAX}]")


def _given(spec: dict, constant: bool) -> dict:
    """set_quantization's arguments; a constant with zero points 0 is symmetric (a weight)."""
    return {"scales": spec["scales"], "zero_points": spec["zero_points"], "dtype": "int8", "axis": spec["axis"],
            "symmetric": constant and all(z == 0 for z in spec["zero_points"])}


def _set_activation_quant(d: _Describer, node, x: _TensorId, spec: dict) -> _TensorId:
    """Gives activation ``x`` the spec (a dequantize repeats its quantize's)."""
    given = _given(spec, constant=False)
    previous = d.given_quantization.get(x.id)
    if previous is None:
        d.builder.set_quantization(x.id, **given)
        d.given_quantization[x.id] = given
        d.desc.quantized_tensors += 1
    elif previous != given:
        raise _refuse(node, f"tensor {_tensor_name(node)} is quantized with scale {given['scales'][0]:.6g}, zero point "
                            f"{given['zero_points'][0]} after scale {previous['scales'][0]:.6g}, zero point "
                            f"{previous['zero_points'][0]}; mcuflow keeps one quantization per tensor")
    return x


def _constant(d: _Describer, node, v: _Const, quant) -> _Const:
    """The node evaluated on a constant, keeping ``quant`` (None: the compiler derives it)."""
    args = [a.tensor if isinstance(a, _Const) else a for a in (d.value(a) if isinstance(a, torch.fx.Node) else a
                                                                   for a in node.args)]
    with torch.no_grad():
        result = node.target(*args, **node.kwargs)
    c = _Const(result.detach(), v.name)
    c.quant = quant
    return c


def _quantize(d: _Describer, node, per_channel: bool):
    v = d.value(node.args[0])
    spec = _spec(d, node, per_channel)
    if isinstance(v, _Const):
        return _constant(d, node, v, None if spec.get("bias") else spec)  # integers, read by the dequantize
    if not isinstance(v, _TensorId):
        raise _refuse(node, f"operand of type {type(v).__name__} is not a tensor")
    _check_activation(node, spec)
    return _set_activation_quant(d, node, v, spec)


def _dequantize(d: _Describer, node, per_channel: bool):
    v = d.value(node.args[0])
    spec = _spec(d, node, per_channel)
    if isinstance(v, _TensorId):
        _check_activation(node, spec)
        return _set_activation_quant(d, node, v, spec)
    if not isinstance(v, _Const):
        raise _refuse(node, f"operand of type {type(v).__name__} is not a tensor")
    if spec.get("bias"):
        _check_bias_scale(d, node, spec["scales"])
        return _constant(d, node, v, None)
    values = v.tensor
    if values.dtype != torch.int8:
        raise _refuse(node, f"constant {_tensor_name(node)} holds {values.dtype}; mcuflow's kernels take int8 weights")
    given = _given(spec, constant=True)
    if given["symmetric"] and bool((values == _INT8_MIN).any()):
        raise _refuse(node, f"weight {_tensor_name(node)} holds −128 with zero point 0; symmetric int8 weights lie "
                            f"in −127…127")
    return _constant(d, node, v, given)


def _dequantize_scales(d: _Describer, node) -> list[float] | None:
    """The scales of a dequantize node, None for anything else."""
    if not isinstance(node, torch.fx.Node) or str(node.target) not in _DEQUANTIZE_PER_TENSOR + _DEQUANTIZE_PER_CHANNEL:
        return None
    return [float(s) for s in _numbers(d, node.args[1])]


def _check_bias_scale(d: _Describer, node, scales: list[float]) -> None:
    """A bias's given scale must be the one the kernels use: input scale × weight scale."""
    for user in node.users:
        if len(user.args) < 3 or user.args[2] is not node:
            continue
        x_scales, w_scales = _dequantize_scales(d, user.args[0]), _dequantize_scales(d, user.args[1])
        if x_scales is None or w_scales is None:
            continue
        expected = [x_scales[0] * s for s in w_scales]
        if len(expected) == 1:
            expected = expected * len(scales)
        if len(expected) != len(scales) or any(abs(g - e) > _BIAS_RELATIVE_TOLERANCE * e
                                                for g, e in zip(scales, expected)):
            raise UnsupportedModelError(
                f"{user.target} at {node_source(user)}: bias {_tensor_name(node)} is quantized with scale "
                f"{scales[0]:.6g}; the kernels take input scale × weight scale ({expected[0]:.6g})")


HANDLERS: dict[str, Callable[[_Describer, Any], Any]] = {
    **{k: lambda d, n: _quantize(d, n, False) for k in _QUANTIZE_PER_TENSOR},
    **{k: lambda d, n: _quantize(d, n, True) for k in _QUANTIZE_PER_CHANNEL},
    **{k: lambda d, n: _dequantize(d, n, False) for k in _DEQUANTIZE_PER_TENSOR},
    **{k: lambda d, n: _dequantize(d, n, True) for k in _DEQUANTIZE_PER_CHANNEL},
}
