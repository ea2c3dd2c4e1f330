"""mcuflow's PT2E quantizer: PyTorch's own quantization flow, annotated for mcuflow's int8 kernels.

    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
    from mcuflow.quantizer import MCUFlowQuantizer

    graph = torch.export.export(model.eval(), example).module()
    prepared = prepare_pt2e(graph, MCUFlowQuantizer())
    for x in calibration: prepared(x)
    converted = convert_pt2e(prepared)
    program = mcuflow.compile(torch.export.export(converted, example), "cortex-m55")  # no calibration

The annotations are the tensor specs mcuflow's own calibration gives (docs/quantization.md,
compiler/src/quantizer.cpp), so the converted model computes what the int8 program computes:

- activations: asymmetric int8 per tensor, −128…127;
- conv2d / depthwise / conv1d weights: symmetric int8 per output channel (conv_transpose2d: along
  dim 1), −127…127; linear weights per tensor (``per_channel_linear=True``: per output feature);
  PReLU slopes per tensor; biases int32 at input scale × weight scale;
- outputs that mcuflow derives from the input (pools, mean, views, slices, pads, upsampling,
  standalone relu/clamp) share the input's observer; softmax outputs are fixed at 1/256, −128;
- an activation a kernel fuses (relu, relu6, hardtanh, clamp after a conv, linear, matmul or an
  element-wise binary op with one user) and a BatchNorm after a conv (folded into it) are not
  quantized on their own: the chain's last output is;
- a cat's inputs and output share one observer (the copy kernel then needs no requantization).
"""

from __future__ import annotations

import operator
from typing import Iterable, Optional

import torch
from torch.fx import Node

from torchao.quantization.pt2e import observer as _observers
from torchao.quantization.pt2e.fake_quantize import FakeQuantize, FusedMovingAvgObsFakeQuantize
from torchao.quantization.pt2e.quantizer import (DerivedQuantizationSpec, FixedQParamsQuantizationSpec,
                                                 QuantizationAnnotation, QuantizationSpec, Quantizer,
                                                 SharedQuantizationSpec)
from torchao.quantization.pt2e.quantizer.quantizer import Q_ANNOTATION_KEY

__all__ = ["MCUFlowQuantizer"]

_aten = torch.ops.aten
_INT8_MIN, _INT8_MAX = -128, 127
_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
# Softmax outputs lie in [0, 1): 256 steps from the lowest integer (the compiler's softmax rule).
_SOFTMAX_SCALE, _SOFTMAX_ZERO_POINT = 1.0 / 256, -128


def _targets(*names: str) -> frozenset:
    """The ATen overloads with these names ("conv2d" or "conv2d.padding"), those that exist."""
    found = set()
    for name in names:
        packet, _, overload = name.partition(".")
        ops = getattr(_aten, packet, None)
        if ops is None:
            continue
        found.update(getattr(ops, o) for o in ([overload] if overload else ops.overloads()))
    return frozenset(found)


# Weights in arg 1 quantized per output channel (dim 0), bias in arg 2.
_CONV = _targets("conv1d", "conv2d")
_CONV_TRANSPOSE = _targets("conv_transpose1d", "conv_transpose2d")  # weight (in, out, ...): dim 1
_LINEAR = _targets("linear")
_PRELU = _targets("prelu")
_BATCH_NORM = _targets("batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit")
# Ops whose int8 kernel applies a following clamp itself (compiler kFusesActivation).
_FUSES_ACTIVATION = _CONV | _CONV_TRANSPOSE | _LINEAR | _targets("matmul", "mm", "bmm", "add", "sub", "mul",
                                                                  "minimum", "maximum")
# Clamps (compiler clamp_bounds): relu, relu6 and hardtanh are clamps.
_CLAMPS = _targets("relu", "relu_", "relu6", "hardtanh", "hardtanh_", "clamp")
# Outputs that keep their input's quantization (compiler OutputQuant::kInput).
_SHARES_INPUT = _CLAMPS | _targets(
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "mean", "amax", "view", "reshape", "_unsafe_view", "flatten", "permute", "transpose", "t", "squeeze",
    "unsqueeze", "unflatten", "slice", "select", "expand", "pad", "constant_pad_nd", "upsample_nearest2d",
    "upsample_bilinear2d", "dropout", "clone", "contiguous", "alias", "detach")
# Ops returning several tensors (read through getitem), each sharing the input's quantization.
_SPLITS = _targets("split", "split_with_sizes", "chunk", "unbind", "max_pool2d_with_indices")
_SOFTMAX = _targets("softmax", "_softmax")
_CAT = _targets("cat", "concat")
# Every tensor argument is an activation (or a constant operand quantized from its range).
_ALL_TENSOR_ARGS = _targets("add", "sub", "mul", "minimum", "maximum", "matmul", "mm", "bmm")


def _is_float_tensor(node) -> bool:
    val = node.meta.get("val") if isinstance(node, Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.float32


def _annotation(node: Node) -> Optional[QuantizationAnnotation]:
    return node.meta.get(Q_ANNOTATION_KEY)


def _annotate(node: Node, inputs: dict, output=None) -> None:
    node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(input_qspec_map=inputs, output_qspec=output,
                                                         _annotated=True)


class MCUFlowQuantizer(Quantizer):
    """Annotates an exported graph with the quantization mcuflow's int8 kernels take.

    ``observer``: how activation ranges are observed — ``"minmax"`` (mcuflow's default) or
    ``"histogram"`` (PyTorch's HistogramObserver, which narrows ranges by the quantization error).
    ``per_channel_linear``: linear weights get one scale per output feature instead of one.
    ``is_qat``: fake-quantize for quantization-aware training (use with ``prepare_qat_pt2e``).
    """

    def __init__(self, observer: str = "minmax", per_channel_linear: bool = False, is_qat: bool = False):
        super().__init__()
        if observer not in ("minmax", "histogram"):
            raise ValueError(f"unknown observer '{observer}' (minmax, histogram)")
        self.per_channel_linear = bool(per_channel_linear)
        self.is_qat = bool(is_qat)
        if is_qat:
            activation = FusedMovingAvgObsFakeQuantize.with_args(observer=_observers.MovingAverageMinMaxObserver,
                                                                 eps=2 ** -12)
        elif observer == "histogram":
            activation = _observers.HistogramObserver.with_args(eps=2 ** -12)
        else:
            activation = _observers.MinMaxObserver.with_args(eps=2 ** -12)
        self.activation = QuantizationSpec(torch.int8, activation, _INT8_MIN, _INT8_MAX, torch.per_tensor_affine)
        self.softmax_output = FixedQParamsQuantizationSpec(torch.int8, _SOFTMAX_SCALE, _SOFTMAX_ZERO_POINT,
                                                           _INT8_MIN, _INT8_MAX, torch.per_tensor_affine)

    # -- specs --------------------------------------------------------------------------------

    def weight_spec(self, axis: Optional[int]) -> QuantizationSpec:
        """Symmetric int8 (−127…127): per channel along ``axis``, per tensor when None."""
        if axis is None:
            observer, scheme = _observers.MinMaxObserver, torch.per_tensor_symmetric
        else:
            observer, scheme = _observers.PerChannelMinMaxObserver, torch.per_channel_symmetric
        constructor = FakeQuantize.with_args(observer=observer) if self.is_qat else observer
        return QuantizationSpec(torch.int8, constructor, -_INT8_MAX, _INT8_MAX, scheme, axis)

    @staticmethod
    def bias_spec(x: Node, weight: Node, node: Node, weight_spec: QuantizationSpec) -> DerivedQuantizationSpec:
        """int32 at input scale × weight scale, zero point 0 (per channel when the weight is)."""
        def derive(observers):
            input_scale, _ = observers[0].calculate_qparams()
            weight_scale, _ = observers[1].calculate_qparams()
            scale = (input_scale * weight_scale).to(torch.float32)
            return scale, torch.zeros_like(scale, dtype=torch.int32)

        per_channel = weight_spec.qscheme == torch.per_channel_symmetric
        return DerivedQuantizationSpec(
            derived_from=[(x, node), (weight, node)], derive_qparams_fn=derive, dtype=torch.int32,
            quant_min=_INT32_MIN, quant_max=_INT32_MAX,
            qscheme=torch.per_channel_symmetric if per_channel else torch.per_tensor_symmetric,
            ch_axis=0 if per_channel else None)

    def input_spec(self, x: Node):
        """An activation input: the producer's quantization where it has one (the int8 tensor
        itself, never requantized on the way), else a new observer (a model input)."""
        annotation = _annotation(x)
        if annotation is not None and annotation.output_qspec is not None:
            return SharedQuantizationSpec(x)
        return self.activation

    # -- annotation ---------------------------------------------------------------------------

    def transform_for_annotation(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        """Attention as the ops mcuflow runs it (matmul, mul, softmax, matmul; the torch front end
        sends ``scaled_dot_product_attention`` so), so each of its tensors is quantized."""
        for node in list(model.graph.nodes):
            if node.target is _aten.scaled_dot_product_attention.default:
                _decompose_attention(model.graph, node)
        model.graph.eliminate_dead_code()
        model.recompile()
        return model

    def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        outputs = {n for node in model.graph.nodes if node.op == "output" for n in _flat_nodes(node.args)}
        for node in model.graph.nodes:
            if node.op != "call_function" or _annotation(node) is not None:
                continue
            self._annotate_node(node, outputs)
        return model

    def _annotate_node(self, node: Node, outputs: set) -> None:
        target = node.target
        if target in _CONV or target in _CONV_TRANSPOSE or target in _LINEAR:
            self._annotate_weighted(node, outputs)
        elif target in _PRELU:
            x, weight = node.args[0], node.args[1]
            _annotate(node, {x: self.input_spec(x), weight: self.weight_spec(None)}, self.activation)
        elif target in _SOFTMAX:
            _annotate(node, {node.args[0]: self.input_spec(node.args[0])}, self.softmax_output)
        elif target in _CAT:
            tensors = [t for t in node.args[0] if isinstance(t, Node)]
            if not tensors:
                return
            first = tensors[0]
            shared = SharedQuantizationSpec((first, node))
            _annotate(node, {t: self.input_spec(first) if t is first else shared for t in tensors}, shared)
        elif target in _SPLITS:
            x = node.args[0]
            _annotate(node, {x: self.input_spec(x)})
            for user in node.users:
                if user.target is operator.getitem and _is_float_tensor(user):
                    _annotate(user, {}, SharedQuantizationSpec((x, node)))
        elif target in _SHARES_INPUT:
            x = node.args[0]
            if not _is_float_tensor(x) or not _is_float_tensor(node):
                return
            _annotate(node, {x: self.input_spec(x)}, SharedQuantizationSpec((x, node)))
        elif _is_float_tensor(node):
            args = node.args if target in _ALL_TENSOR_ARGS else node.args[:1]
            inputs = {a: self.input_spec(a) for a in args if _is_float_tensor(a)}
            self._annotate_with_fused_output(node, inputs, outputs)

    def _annotate_weighted(self, node: Node, outputs: set) -> None:
        x, weight = node.args[0], node.args[1]
        bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")
        if node.target in _CONV:
            weight_spec = self.weight_spec(0)
        elif node.target in _CONV_TRANSPOSE:
            weight_spec = self.weight_spec(1)
        else:
            weight_spec = self.weight_spec(0 if self.per_channel_linear else None)
        inputs = {x: self.input_spec(x), weight: weight_spec}
        if isinstance(bias, Node):
            inputs[bias] = self.bias_spec(x, weight, node, weight_spec)
        self._annotate_with_fused_output(node, inputs, outputs)

    def _annotate_with_fused_output(self, node: Node, inputs: dict, outputs: set) -> None:
        """Annotates ``node`` and the BatchNorm and clamps mcuflow folds into it: only the
        chain's last output is quantized."""
        chain = [node]
        while True:
            last = chain[-1]
            users = list(last.users)
            if len(users) != 1 or last in outputs:
                break
            user = users[0]
            folds_bn = user.target in _BATCH_NORM and len(chain) == 1 and (node.target in _CONV or
                                                                            node.target in _CONV_TRANSPOSE)
            fuses = user.target in _CLAMPS and node.target in _FUSES_ACTIVATION
            if not (folds_bn or fuses):
                break
            chain.append(user)
            # a BatchNorm in training mode returns a tuple: its value is getitem 0
            if user.target in _BATCH_NORM and not _is_float_tensor(user):
                getitems = [u for u in user.users if u.target is operator.getitem and u.args[1] == 0]
                if len(getitems) != 1 or len(user.users) != 1:
                    break
                chain.append(getitems[0])
        _annotate(node, inputs, None if len(chain) > 1 else self.activation)
        for inner in chain[1:-1]:
            _annotate(inner, {})
        if len(chain) > 1:
            _annotate(chain[-1], {}, self.activation)

    def validate(self, model: torch.fx.GraphModule) -> None:
        pass


def _decompose_attention(graph: torch.fx.Graph, node: Node) -> None:
    """softmax(q @ kᵀ · scale) @ v in place of an attention node without mask, dropout or
    grouped queries (the front end refuses the others)."""
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
    a = dict(zip(names, node.args), **node.kwargs)
    if a.get("attn_mask") is not None or a.get("is_causal") or a.get("dropout_p", 0.0) or a.get("enable_gqa"):
        return
    q, k, v = a["query"], a["key"], a["value"]
    scale = a.get("scale")
    if scale is None:
        scale = 1.0 / float(q.meta["val"].shape[-1]) ** 0.5

    def call(target, *args):
        new = graph.call_function(target, args)
        new.meta = {key: node.meta[key] for key in ("stack_trace", "nn_module_stack") if key in node.meta}
        values = [x.meta["val"] if isinstance(x, Node) else x for x in args]
        with node.meta["val"].fake_mode:
            new.meta["val"] = target(*values)
        return new

    with graph.inserting_before(node):
        scores = call(_aten.matmul.default, q, call(_aten.transpose.int, k, -2, -1))
        weights = call(_aten.softmax.int, call(_aten.mul.Tensor, scores, float(scale)), -1)
        out = call(_aten.matmul.default, weights, v)
    node.replace_all_uses_with(out)
    graph.erase_node(node)


def _flat_nodes(args) -> Iterable[Node]:
    if isinstance(args, Node):
        yield args
    elif isinstance(args, (list, tuple)):
        for a in args:
            yield from _flat_nodes(a)
