"""The torch front end: describe a ``torch.export.ExportedProgram`` to the C++ compiler.

It implements ``mcuflow.frontend_protocol.FrontEnd`` in three parts: the model source line of
a node (``torch_source``), the walk over the graph (``torch_graph``) and, here, the ATen
handlers, one per overload, that map nodes to the contract vocabulary (``SUPPORTED_KINDS``).
The graph is walked once, in execution order, and for every node the builder of
``docs/frontend_contract.md`` is called (``mcuflow._core.GraphBuilder`` or anything with the
same four methods):

* user-input placeholders become ``add_input(name, shape)``;
* parameters, buffers and lifted tensor constants become ``add_constant(name, float32 array)``
  the first time an op uses them (unused ones, such as BatchNorm's int64
  ``num_batches_tracked``, are never sent);
* each ``call_function`` node becomes one ``add_op(kind, inputs, attrs, source, output_shapes)``
  of the contract vocabulary (see ``SUPPORTED_KINDS``);
* the graph outputs become ``set_outputs(ids)``.

Both graphs torch 2.13 produces are understood: the default ``torch.export.export`` graph
(``aten.conv2d.default``, ``aten.linear.default``, ``aten.batch_norm.default`` ...) and the
core-ATen graph after ``ep.run_decompositions()`` (``aten.convolution.default``,
``aten.addmm.default`` on a transposed weight, ``aten._native_batch_norm_legit_no_training`` +
``getitem``, ``aten.max_pool2d_with_indices`` + ``getitem`` ...). Graphs that contain in-place
ops (``relu_``, ``add_`` ...) are functionalized first with ``ep.run_decompositions({})``, which
keeps every op but makes aliasing explicit.

Sub-graphs that depend on constants only (``torch.zeros(...)``, ``self.w.t()``, ``2 * self.w``)
are evaluated here with torch and sent as constants. Shapes and semantics are validated by the
C++ side; this module only rejects what the contract cannot express, always with a one-line
``UnsupportedModelError`` naming the op and the model's own source line.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch

from . import _core, torch_pt2e
from .errors import UnsupportedModelError
from .frontend_protocol import Description
from .torch_graph import (_Const, _Describer, _Missing, _Scalar, _bind, _op_key, _op_name, _shape_str, user_inputs,
                          walk)
from .torch_source import node_source

__all__ = [
    "SUPPORTED_KINDS",
    "is_supported_kind",
    "describe",
    "Description",
    "user_inputs",
    "node_source",
]

# The op vocabulary of docs/frontend_contract.md, from the compiler's op registry: error
# messages, is_supported_kind() and the tests all use it.
SUPPORTED_KINDS: tuple[str, ...] = tuple(_core.op_kinds())

# Stand-in for an open clamp bound (the contract keeps infinities out of the program).
FLOAT_MAX = 3.4e38


def is_supported_kind(kind: str) -> bool:
    """True if ``kind`` is an op kind of the front-end contract."""
    return kind in SUPPORTED_KINDS


def _pair(v: Any, name: str = "") -> list[int]:
    if isinstance(v, (list, tuple)):
        vals = [int(x) for x in v]
        if len(vals) == 1:
            return vals * 2
        if len(vals) == 2:
            return vals
        raise ValueError(f"{name} has {len(vals)} values, expected 2")
    return [int(v), int(v)]


# --------------------------------------------------------------------------------------------
# Handlers: one per ATen overload (string keys, so a torch without some overload still imports)

_HANDLERS: dict[str, Callable[[_Describer, torch.fx.Node], Any]] = {}


def _handles(*keys: str):
    def deco(fn):
        for k in keys:
            _HANDLERS[k] = fn
        return fn
    return deco


def _rank(d: _Describer, a) -> int | None:
    v = d.val_of(a)
    if v is not None:
        return v.dim()
    if isinstance(a, torch.fx.Node) and isinstance(d.env.get(a), _Const):
        return d.env[a].tensor.dim()
    return None


def _norm_dim(dim: int, rank: int) -> int:
    return int(dim) % rank if rank > 0 else int(dim)


def _in(d: _Describer, node, a):
    """Operand value: _TensorId / _Const / _Scalar / _Missing / None."""
    return d.arg(node, a)


def _as_rows(d: _Describer, node, kind: str, x, rest: list, attrs: dict, val=None):
    """A 1-D op over (N, C, L) sent as its 2-D op over the (N, C, 1, L) view (a reshape on
    each side), so 1-D layers get the 2-D kernels of every tier and the passes that fold pads
    and batch norms into convolutions; the compiler keeps chains of them in image layout."""
    xs = _shape_of(d, x)
    if len(xs) not in (2, 3):
        raise d.unsupported(node, f"expects a 2-D (C, L) or 3-D (N, C, L) input, got {_shape_str(xs)}")
    out = d.out_shape(node, val)
    rows_in = ([1] if len(xs) == 2 else []) + xs[:-1] + [1, xs[-1]]
    rows_out = rows_in[:1] + out[-2:-1] + [1, out[-1]]
    rows = d.emit(node, "reshape", [_in(d, node, x)], {"shape": rows_in}, shape=rows_in)
    y = d.emit(node, kind, [rows] + rest, attrs, shape=rows_out)
    return d.emit(node, "reshape", [y], {"shape": out}, val=val)


def _conv1d(d: _Describer, node, x, w, b, stride, padding, dilation, groups, padding_end=None):
    """Conv1d as the conv2d of one row: weight (O, I, K) → (O, I, 1, K)."""
    wv = d.env.get(w) if isinstance(w, torch.fx.Node) else None
    if not isinstance(wv, _Const):
        raise d.unsupported(node, "weights must be constant")
    one = lambda v, name: [int(s) for s in (v if isinstance(v, (list, tuple)) else [v])]  # noqa: E731
    attrs = {}
    for name, value, row in (("stride", stride, 1), ("padding", padding, 0), ("dilation", dilation, 1)):
        vals = one(value, name)
        if len(vals) != 1:
            raise d.unsupported(node, f"{name} has {len(vals)} values, expected 1")
        attrs[name] = [row, vals[0]]
    attrs["groups"] = int(groups)
    if padding_end is not None:
        attrs["padding_end"] = [0, int(padding_end)]
    rest = [_Const(wv.tensor.unsqueeze(2), wv.name, quant=wv.quant)]  # per channel along dim 0 still
    if b is not None:
        rest.append(_in(d, node, b))
    return _as_rows(d, node, "conv2d", x, rest, attrs)


def _convolution(d: _Describer, node, kind: str, what: str, x, w, b, pairs: dict, groups, extra=None):
    """A conv2d / conv_transpose2d op: ``pairs`` are its two-value attributes, ``extra`` any
    others; ``what`` names the operation in errors."""
    wrank = _rank(d, w)
    if wrank == 3 and kind == "conv2d":
        return _conv1d(d, node, x, w, b, pairs["stride"], pairs["padding"], pairs["dilation"], groups,
                       (extra or {}).get("padding_end"))
    if wrank is not None and wrank != 4:
        raise d.unsupported(node, f"only 2-D {what} is supported (weight has rank {wrank})")
    try:
        attrs = {name: _pair(value, name) for name, value in pairs.items()}
    except ValueError as e:
        raise d.unsupported(node, str(e)) from None
    attrs["groups"] = int(groups)
    attrs.update(extra or {})
    inputs = [_in(d, node, x), _in(d, node, w)]
    if b is not None:
        inputs.append(_in(d, node, b))
    return d.emit(node, kind, inputs, attrs)


def _conv(d: _Describer, node, x, w, b, stride, padding, dilation, groups, padding_end=None):
    return _convolution(d, node, "conv2d", "convolution", x, w, b,
                        {"stride": stride, "padding": padding, "dilation": dilation}, groups,
                        {"padding_end": list(padding_end)} if padding_end is not None else None)


@_handles("aten.conv2d.default")
def _h_conv2d(d, node):
    a = _bind(node)
    return _conv(d, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"],
                 a["dilation"], a["groups"])


def _same_padding(d, node, a, spatial: int):
    """(padding, padding_end or None) of padding='same'/'valid' for ``spatial`` dims."""
    mode = a["padding"]
    if mode == "valid":
        return [0] * spatial, None
    if mode != "same":
        raise d.unsupported(node, f"padding={mode!r}")
    dilation = a["dilation"] if isinstance(a["dilation"], (list, tuple)) else [a["dilation"]]
    dilation = [int(v) for v in dilation] * (spatial if len(dilation) == 1 else 1)
    wv = d.val_of(a["weight"])
    if wv is None and isinstance(d.env.get(a["weight"]), _Const):
        wv = d.env[a["weight"]].tensor
    if wv is None or wv.dim() != spatial + 2:
        raise d.unsupported(node, f"padding='same' needs a {spatial + 2}-D weight")
    # PyTorch puts the odd extra row/column of 'same' padding at the bottom/right.
    totals = [dil * (int(k) - 1) for k, dil in zip(wv.shape[2:], dilation)]
    padding = [t // 2 for t in totals]
    padding_end = [t - t // 2 for t in totals]
    return padding, (padding_end if padding_end != padding else None)


@_handles("aten.conv2d.padding")
def _h_conv2d_padding(d, node):
    a = _bind(node)
    padding, padding_end = _same_padding(d, node, a, 2)
    return _conv(d, node, a["input"], a["weight"], a["bias"], a["stride"], padding, _pair(a["dilation"]),
                 a["groups"], padding_end=padding_end)


@_handles("aten.conv1d.default")
def _h_conv1d(d, node):
    a = _bind(node)
    return _conv1d(d, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"], a["dilation"],
                   a["groups"])


@_handles("aten.conv1d.padding")
def _h_conv1d_padding(d, node):
    a = _bind(node)
    padding, padding_end = _same_padding(d, node, a, 1)
    return _conv1d(d, node, a["input"], a["weight"], a["bias"], a["stride"], padding, a["dilation"],
                   a["groups"], padding_end=padding_end[0] if padding_end else None)


@_handles("aten.convolution.default")
def _h_convolution(d, node):
    a = _bind(node)
    if a["transposed"]:
        return _conv_transpose(d, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"],
                               a["output_padding"], a["groups"], a["dilation"])
    return _conv(d, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"],
                 a["dilation"], a["groups"])


def _conv_transpose(d, node, x, w, b, stride, padding, output_padding, groups, dilation):
    return _convolution(d, node, "conv_transpose2d", "transposed convolution", x, w, b,
                        {"stride": stride, "padding": padding, "output_padding": output_padding,
                         "dilation": dilation}, groups)


@_handles("aten.conv_transpose2d.input")
def _h_conv_transpose2d(d, node):
    a = _bind(node)
    return _conv_transpose(d, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"],
                           a["output_padding"], a["groups"], a["dilation"])


@_handles("aten.linear.default")
def _h_linear(d, node):
    a = _bind(node)
    inputs = [_in(d, node, a["input"]), _in(d, node, a["weight"])]
    if a["bias"] is not None:
        inputs.append(_in(d, node, a["bias"]))
    return d.emit(node, "linear", inputs)


def _weight_from_rhs(d, node, rhs) -> _Const:
    """The (out, in) linear weight for ``x @ rhs`` where rhs is a constant (in, out) matrix."""
    v = d.env.get(rhs) if isinstance(rhs, torch.fx.Node) else None
    if not isinstance(v, _Const):
        raise d.unsupported(node, "matrix product with a non-constant weight; only x @ constant (a linear layer) is supported")
    if v.tensor.dim() != 2:
        raise d.unsupported(node, f"matrix product with a constant of rank {v.tensor.dim()}; only 2-D weights are supported")
    if v.transpose_of is not None:
        return v.transpose_of
    return _Const(v.tensor.t().contiguous(), f"{v.name}.T")


@_handles("aten.matmul.default", "aten.mm.default", "aten.bmm.default")
def _h_matmul(d, node):
    x, rhs = node.args[0], node.args[1]
    if isinstance(d.env.get(rhs), _Const):
        return d.emit(node, "linear", [_in(d, node, x), _weight_from_rhs(d, node, rhs)])
    if _rank(d, x) != _rank(d, rhs) or _rank(d, x) < 2:
        raise d.unsupported(node, "matrix product of two activations needs operands of the same rank >= 2")
    return d.emit(node, "matmul", [_in(d, node, x), _in(d, node, rhs)])


@_handles("aten.addmm.default")
def _h_addmm(d, node):
    a = _bind(node)
    if a["beta"] != 1 or a["alpha"] != 1:
        raise d.unsupported(node, f"beta={a['beta']}, alpha={a['alpha']}; only 1 is supported")
    w = _weight_from_rhs(d, node, a["mat2"])
    bias = d.env.get(a["self"]) if isinstance(a["self"], torch.fx.Node) else None
    if not isinstance(bias, _Const):
        raise d.unsupported(node, "bias of a matrix product must be a constant")
    n = w.tensor.shape[0]
    if bias.tensor.numel() != n or bias.tensor.dim() > 2:
        raise d.unsupported(node, f"bias of shape {list(bias.tensor.shape)} for {n} outputs")
    if bias.tensor.dim() != 1:
        bias = _Const(bias.tensor.reshape(n), bias.name)
    return d.emit(node, "linear", [_in(d, node, a["mat1"]), w, bias])


def _bn(d, node, a):
    x = a["input"]
    xv = d.val_of(x)
    if a["running_mean"] is None or a["running_var"] is None:
        raise d.unsupported(node, "batch_norm without running statistics (track_running_stats=False)")
    c = int(xv.shape[1]) if xv is not None and xv.dim() >= 2 else None
    weight = _in(d, node, a["weight"]) if a["weight"] is not None else None
    bias = _in(d, node, a["bias"]) if a["bias"] is not None else None
    if weight is None or bias is None:
        if c is None:
            raise d.unsupported(node, "batch_norm without affine parameters on an input of unknown channels")
        stem = node.name
        rm = d.env.get(a["running_mean"]) if isinstance(a["running_mean"], torch.fx.Node) else None
        if isinstance(rm, _Const) and rm.name.endswith("running_mean"):
            stem = rm.name[: -len("running_mean")].rstrip(".") or node.name
        if weight is None:
            weight = _Const(torch.ones(c, dtype=torch.float32), f"{stem}.weight")
        if bias is None:
            bias = _Const(torch.zeros(c, dtype=torch.float32), f"{stem}.bias")
    inputs = [_in(d, node, x), weight, bias, _in(d, node, a["running_mean"]), _in(d, node, a["running_var"])]
    return inputs, {"eps": float(a["eps"])}


@_handles("aten.batch_norm.default")
def _h_batch_norm(d, node):
    a = _bind(node)
    if a["training"]:
        raise UnsupportedModelError(
            f"batch_norm in training mode at {node_source(node)} — call model.eval() before torch.export.export")
    inputs, attrs = _bn(d, node, a)
    return d.emit(node, "batch_norm", inputs, attrs)


@_handles("aten._native_batch_norm_legit_no_training.default")
def _h_native_bn(d, node):
    a = _bind(node)
    inputs, attrs = _bn(d, node, a)
    val = node.meta["val"][0]
    out = d.emit(node, "batch_norm", inputs, attrs, val=val)
    return (out, _Missing("batch_norm's saved mean"), _Missing("batch_norm's saved inverse std"))


@_handles("aten.relu.default", "aten.relu_.default")
def _h_relu(d, node):
    return d.emit(node, "relu", [_in(d, node, node.args[0])])


def _clamp(d, node, x, lo, hi):
    for name, v in (("min", lo), ("max", hi)):
        if isinstance(v, torch.fx.Node):
            raise d.unsupported(node, f"tensor {name} bound; only numbers are supported")
    lo = -FLOAT_MAX if lo is None else max(float(lo), -FLOAT_MAX)
    hi = FLOAT_MAX if hi is None else min(float(hi), FLOAT_MAX)
    return d.emit(node, "clamp", [_in(d, node, x)], {"min": lo, "max": hi})


@_handles("aten.relu6.default", "aten.relu6_.default")
def _h_relu6(d, node):
    return _clamp(d, node, node.args[0], 0.0, 6.0)


@_handles("aten.hardtanh.default", "aten.hardtanh_.default")
def _h_hardtanh(d, node):
    a = _bind(node)
    return _clamp(d, node, a["self"], a["min_val"], a["max_val"])


@_handles("aten.clamp.default", "aten.clamp_.default", "aten.clip.default", "aten.clip_.default")
def _h_clamp(d, node):
    a = _bind(node)
    return _clamp(d, node, a["self"], a["min"], a["max"])


@_handles("aten.clamp_min.default", "aten.clamp_min_.default")
def _h_clamp_min(d, node):
    a = _bind(node)
    return _clamp(d, node, a["self"], a["min"], None)


@_handles("aten.clamp_max.default", "aten.clamp_max_.default")
def _h_clamp_max(d, node):
    a = _bind(node)
    return _clamp(d, node, a["self"], None, a["max"])


@_handles("aten.add.Tensor", "aten.add.Scalar", "aten.add_.Tensor", "aten.add_.Scalar")
def _h_add(d, node):
    a = _bind(node)
    attrs = {}
    alpha = a["alpha"]
    if alpha is not None and alpha != 1:
        attrs["alpha"] = float(alpha)  # the compiler rejects it; the contract says alpha must be 1
    return d.emit(node, "add", [_in(d, node, a["self"]), _in(d, node, a["other"])], attrs)


def _negated_const(d, node, v, scale: float):
    if isinstance(v, _Scalar):
        return _Scalar(-scale * v.value)
    return _Const(-scale * v.tensor, f"{v.name}.neg")


def _subtract(d, node, minuend, subtrahend, alpha):
    """minuend - alpha * subtrahend: an add of a negated constant, a sub of two activations,
    or (constant - activation) an add to the negated activation."""
    lhs, rhs = _in(d, node, minuend), _in(d, node, subtrahend)
    alpha = 1.0 if alpha is None else float(alpha)
    if isinstance(rhs, (_Scalar, _Const)):
        return d.emit(node, "add", [lhs, _negated_const(d, node, rhs, alpha)])
    if alpha != 1.0:
        raise d.unsupported(node, f"alpha={alpha} with an activation operand; only 1 is supported")
    if isinstance(lhs, (_Scalar, _Const)):
        negated = d.emit(node, "neg", [rhs], shape=_shape_of(d, subtrahend))
        return d.emit(node, "add", [negated, lhs])
    return d.emit(node, "sub", [lhs, rhs])


@_handles("aten.sub.Tensor", "aten.sub.Scalar", "aten.sub_.Tensor", "aten.sub_.Scalar")
def _h_sub(d, node):
    a = _bind(node)
    return _subtract(d, node, a["self"], a["other"], a["alpha"])


@_handles("aten.rsub.Scalar", "aten.rsub.Tensor")
def _h_rsub(d, node):
    a = _bind(node)
    return _subtract(d, node, a["other"], a["self"], a["alpha"])


@_handles("aten.mul.Tensor", "aten.mul.Scalar", "aten.mul_.Tensor", "aten.mul_.Scalar")
def _h_mul(d, node):
    a = _bind(node)
    return d.emit(node, "mul", [_in(d, node, a["self"]), _in(d, node, a["other"])])


@_handles("aten.div.Tensor", "aten.div.Scalar", "aten.div_.Tensor", "aten.div_.Scalar")
def _h_div(d, node):
    a = _bind(node)
    other = _in(d, node, a["other"])
    if isinstance(other, _Scalar):
        recip = _Scalar(1.0 / other.value) if other.value != 0 else None
    elif isinstance(other, _Const):
        recip = _Const(1.0 / other.tensor, f"{other.name}.recip")
    else:
        recip = None
    if recip is None:
        raise d.unsupported(node, "division by an activation or by zero; only x / nonzero constant")
    return d.emit(node, "mul", [_in(d, node, a["self"]), recip])


def _pool_attrs(d, node, a, with_dilation: bool):
    try:
        kernel = _pair(a["kernel_size"], "kernel_size")
        stride = _pair(a["stride"], "stride") if a["stride"] not in (None, [], ()) else list(kernel)
        attrs = {"kernel": kernel, "stride": stride, "padding": _pair(a["padding"], "padding")}
        if with_dilation:
            attrs["dilation"] = _pair(a["dilation"], "dilation")
    except ValueError as e:
        raise d.unsupported(node, str(e)) from None
    attrs["ceil_mode"] = int(bool(a["ceil_mode"]))
    return attrs


@_handles("aten.max_pool2d.default")
def _h_max_pool(d, node):
    a = _bind(node)
    return d.emit(node, "max_pool2d", [_in(d, node, a["self"])], _pool_attrs(d, node, a, True))


@_handles("aten.max_pool2d_with_indices.default")
def _h_max_pool_idx(d, node):
    a = _bind(node)
    out = d.emit(node, "max_pool2d", [_in(d, node, a["self"])], _pool_attrs(d, node, a, True),
                 val=node.meta["val"][0])
    return (out, _Missing("max_pool2d indices"))


@_handles("aten.avg_pool2d.default")
def _h_avg_pool(d, node):
    a = _bind(node)
    attrs = _pool_attrs(d, node, a, False)
    attrs["count_include_pad"] = int(bool(a["count_include_pad"]))
    if a["divisor_override"] is not None:
        attrs["divisor_override"] = int(a["divisor_override"])  # not in the contract: the compiler rejects it
    return d.emit(node, "avg_pool2d", [_in(d, node, a["self"])], attrs)


@_handles("aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default")
def _h_adaptive_avg_pool(d, node):
    shape = d.out_shape(node)
    if len(shape) < 2:
        raise d.unsupported(node, f"output of rank {len(shape)}")
    return d.emit(node, "adaptive_avg_pool2d", [_in(d, node, node.args[0])], {"output_size": shape[-2:]})


def _pool1d_attrs(d, node, a, with_dilation: bool):
    """The 2-D pool attributes of a 1-D pool over the (N, C, 1, L) view."""
    one = lambda v: [int(s) for s in (v if isinstance(v, (list, tuple)) else [v])]  # noqa: E731
    attrs = {}
    names = ["kernel_size", "stride", "padding"] + (["dilation"] if with_dilation else [])
    for name in names:
        vals = one(a[name]) if a[name] is not None else []
        if name == "stride" and not vals:
            vals = one(a["kernel_size"])  # PyTorch: stride defaults to the kernel size
        if len(vals) != 1:
            raise d.unsupported(node, f"{name} has {len(vals)} values, expected 1")
        attrs["kernel" if name == "kernel_size" else name] = [1 if name != "padding" else 0, vals[0]]
    attrs["ceil_mode"] = int(bool(a["ceil_mode"]))
    return attrs


@_handles("aten.max_pool1d.default")
def _h_max_pool1d(d, node):
    a = _bind(node)
    return _as_rows(d, node, "max_pool2d", a["self"], [], _pool1d_attrs(d, node, a, True))


@_handles("aten.avg_pool1d.default")
def _h_avg_pool1d(d, node):
    a = _bind(node)
    attrs = _pool1d_attrs(d, node, a, False)
    attrs["count_include_pad"] = int(bool(a["count_include_pad"]))
    return _as_rows(d, node, "avg_pool2d", a["self"], [], attrs)


@_handles("aten.adaptive_avg_pool1d.default")
def _h_adaptive_avg_pool1d(d, node):
    return _as_rows(d, node, "adaptive_avg_pool2d", node.args[0], [], {"output_size": [1, d.out_shape(node)[-1]]})


@_handles("aten.mean.dim", "aten.mean.default")
def _h_mean(d, node):
    a = _bind(node)
    x = a["self"]
    rank = _rank(d, x)
    dims = a.get("dim")
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        dims = list(range(rank))
    elif isinstance(dims, int):
        dims = [dims]
    dims = sorted(_norm_dim(k, rank) for k in dims)
    return d.emit(node, "mean", [_in(d, node, x)], {"dims": dims, "keepdim": int(bool(a.get("keepdim", False)))})


def _reduce(d, node, kind, x, dims, keepdim, val=None):
    rank = _rank(d, x)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        dims = list(range(rank))
    elif isinstance(dims, int):
        dims = [dims]
    dims = sorted(_norm_dim(k, rank) for k in dims)
    return d.emit(node, kind, [_in(d, node, x)], {"dims": dims, "keepdim": int(bool(keepdim))}, val=val)


@_handles("aten.sum.dim_IntList", "aten.sum.default")
def _h_sum(d, node):
    a = _bind(node)
    if a.get("dtype") not in (None, torch.float32):
        raise d.unsupported(node, f"sum with dtype={a['dtype']}")
    return _reduce(d, node, "sum", a["self"], a.get("dim"), a.get("keepdim", False))


@_handles("aten.amax.default", "aten.max.default")
def _h_amax(d, node):
    a = _bind(node)
    return _reduce(d, node, "amax", a["self"], a.get("dim"), a.get("keepdim", False))


@_handles("aten.max.dim")
def _h_max_dim(d, node):
    a = _bind(node)
    values = _reduce(d, node, "amax", a["self"], a["dim"], a["keepdim"], val=node.meta["val"][0])
    return (values, _Missing("max's indices (use argmax as the model's output)"))


@_handles("aten.argmax.default")
def _h_argmax(d, node):
    a = _bind(node)
    x = a["self"]
    if a["dim"] is None:  # over the flattened input
        if a["keepdim"]:
            raise d.unsupported(node, "keepdim=True without a dim")
        flat = [int(torch.Size(_shape_of(d, x)).numel())]
        x_id = d.emit(node, "reshape", [_in(d, node, x)], {"shape": flat}, shape=flat)
        return d.emit(node, "argmax", [x_id], {"dim": 0, "keepdim": 0}, indices=True)
    return d.emit(node, "argmax", [_in(d, node, x)], {"dim": _norm_dim(a["dim"], _rank(d, x)),
                                                       "keepdim": int(bool(a["keepdim"]))}, indices=True)


@_handles("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
          "aten.view_copy.default", "aten._reshape_copy.default", "aten._reshape_alias.default",
          "aten.flatten.using_ints", "aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
          "aten.unsqueeze.default", "aten.squeeze_copy.default", "aten.squeeze_copy.dim",
          "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default", "aten.view_as.default",
          "aten.reshape_as.default", "aten.unflatten.int")
def _h_reshape(d, node):
    return d.emit(node, "reshape", [_in(d, node, node.args[0])], {"shape": d.out_shape(node)})


@_handles("aten.permute.default", "aten.permute_copy.default")
def _h_permute(d, node):
    x = node.args[0]
    rank = _rank(d, x)
    perm = [_norm_dim(p, rank) for p in node.args[1]]
    return d.emit(node, "permute", [_in(d, node, x)], {"perm": perm})


@_handles("aten.t.default", "aten.numpy_T.default")
def _h_t(d, node):
    x = node.args[0]
    rank = _rank(d, x)
    perm = list(range(rank))[::-1]
    return d.emit(node, "permute", [_in(d, node, x)], {"perm": perm})


@_handles("aten.transpose.int", "aten.transpose_copy.int")
def _h_transpose(d, node):
    x = node.args[0]
    rank = _rank(d, x)
    perm = list(range(rank))
    i, j = _norm_dim(node.args[1], rank), _norm_dim(node.args[2], rank)
    perm[i], perm[j] = perm[j], perm[i]
    return d.emit(node, "permute", [_in(d, node, x)], {"perm": perm})


@_handles("aten.softmax.int", "aten._softmax.default", "aten._safe_softmax.default")
def _h_softmax(d, node):
    a = _bind(node)
    x = a["self"]
    if a.get("dtype") not in (None, torch.float32):
        raise d.unsupported(node, f"softmax with dtype={a['dtype']}")
    return d.emit(node, "softmax", [_in(d, node, x)], {"dim": _norm_dim(a["dim"], _rank(d, x))})


@_handles("aten.cat.default", "aten.concat.default", "aten.concatenate.default")
def _h_cat(d, node):
    a = _bind(node)
    tensors = list(a["tensors"])
    rank = len(d.out_shape(node))
    return d.emit(node, "cat", [_in(d, node, t) for t in tensors], {"dim": _norm_dim(a["dim"], rank)})


@_handles("aten.stack.default")
def _h_stack(d, node):
    """stack: each input viewed with the new dim of size 1, then one cat along it."""
    a = _bind(node)
    out = d.out_shape(node)
    dim = _norm_dim(a["dim"], len(out))
    one = out[:dim] + [1] + out[dim + 1:]
    views = [d.emit(node, "reshape", [_in(d, node, t)], {"shape": one}, shape=one) for t in a["tensors"]]
    return d.emit(node, "cat", views, {"dim": dim})


@_handles("aten.dropout.default", "aten.feature_dropout.default", "aten.alpha_dropout.default",
          "aten.feature_alpha_dropout.default")
def _h_dropout(d, node):
    a = _bind(node)
    if a["train"]:
        raise UnsupportedModelError(
            f"dropout in training mode at {node_source(node)} — call model.eval() before torch.export.export")
    return d.emit(node, "identity", [_in(d, node, a["input"])])


@_handles("aten.clone.default", "aten.contiguous.default", "aten.alias.default", "aten.alias_copy.default",
          "aten.detach.default", "aten.detach_.default", "aten.detach_copy.default",
          "aten.lift_fresh_copy.default", "aten.lift_fresh.default", "aten.to.dtype",
          "aten.to.dtype_layout", "aten.to.device", "aten.to.other", "aten._to_copy.default",
          "aten.type_as.default", "aten.positive.default")
def _h_identity(d, node):
    # dtype conversions: the output dtype is checked (float32 only) by emit().
    return d.emit(node, "identity", [_in(d, node, node.args[0])])


# --- pad, activations, element-wise binaries --------------------------------------------------


def _pad(d, node, x, pad, value):
    pad = [int(p) for p in pad]
    if not any(pad):  # e.g. TensorFlow "same" padding of a 1x1 convolution
        return _in(d, node, x)
    return d.emit(node, "pad", [_in(d, node, x)], {"pad": pad, "value": float(value or 0.0)})


@_handles("aten.constant_pad_nd.default")
def _h_constant_pad(d, node):
    a = _bind(node)
    return _pad(d, node, a["self"], a["pad"], a["value"])


@_handles("aten.pad.default")
def _h_pad(d, node):
    a = _bind(node)
    if a["mode"] != "constant":
        raise d.unsupported(node, f"mode={a['mode']!r}; only constant padding is supported")
    return _pad(d, node, a["self"], a["pad"], a["value"])


_UNARY = {"aten.sigmoid.default": "sigmoid", "aten.sigmoid_.default": "sigmoid", "aten.tanh.default": "tanh",
          "aten.tanh_.default": "tanh", "aten.hardswish.default": "hardswish",
          "aten.hardswish_.default": "hardswish", "aten.hardsigmoid.default": "hardsigmoid",
          "aten.hardsigmoid_.default": "hardsigmoid", "aten.silu.default": "silu", "aten.silu_.default": "silu",
          "aten.neg.default": "neg", "aten.abs.default": "abs", "aten.mish.default": "mish",
          "aten.mish_.default": "mish", "aten.log.default": "log", "aten.log_.default": "log"}


@_handles(*_UNARY)
def _h_unary(d, node):
    return d.emit(node, _UNARY[_op_key(node.target)], [_in(d, node, node.args[0])])


@_handles("aten.gelu.default", "aten.gelu_.default")
def _h_gelu(d, node):
    a = _bind(node)
    if a["approximate"] not in ("none", "tanh"):
        raise d.unsupported(node, f"approximate={a['approximate']!r}")
    return d.emit(node, "gelu", [_in(d, node, a["self"])], {"approximate": int(a["approximate"] == "tanh")})


@_handles("aten.elu.default", "aten.elu_.default")
def _h_elu(d, node):
    a = _bind(node)
    if float(a["scale"]) != 1.0 or float(a["input_scale"]) != 1.0:
        raise d.unsupported(node, "elu with scale or input_scale other than 1 (selu, celu)")
    return d.emit(node, "elu", [_in(d, node, a["self"])], {"alpha": float(a["alpha"])})


@_handles("aten.prelu.default", "aten._prelu_kernel.default")
def _h_prelu(d, node):
    x, w = _in(d, node, node.args[0]), _in(d, node, node.args[1])
    if not isinstance(w, _Const):
        raise d.unsupported(node, "the slopes must be constant (a parameter)")
    return d.emit(node, "prelu", [x, _Const(w.tensor.reshape(-1), w.name, quant=w.quant)])


@_handles("aten.leaky_relu.default", "aten.leaky_relu_.default")
def _h_leaky_relu(d, node):
    a = _bind(node)
    return d.emit(node, "leaky_relu", [_in(d, node, a["self"])], {"negative_slope": float(a["negative_slope"])})


@_handles("aten.minimum.default", "aten.maximum.default")
def _h_min_max(d, node):
    a = _bind(node)
    kind = "minimum" if "minimum" in _op_key(node.target) else "maximum"
    return d.emit(node, kind, [_in(d, node, a["self"]), _in(d, node, a["other"])])


# --- slices, splits, expand, upsample -----------------------------------------------------


def _shape_of(d, a) -> list[int]:
    v = d.val_of(a)
    if v is None and isinstance(d.env.get(a), _Const):
        v = d.env[a].tensor
    return [int(s) for s in v.shape]


def _slice(d, node, x, dim: int, start: int, end: int, step: int = 1, shape=None):
    """x[start:end:step] along ``dim`` (already normalized and clamped)."""
    size = _shape_of(d, x)[dim]
    if start == 0 and end == size and step == 1:
        return _in(d, node, x)
    if shape is None:
        shape = _shape_of(d, x)
        shape[dim] = (end - start + step - 1) // step
    return d.emit(node, "slice", [_in(d, node, x)], {"dim": dim, "start": start, "end": end, "step": step},
                  shape=shape)


@_handles("aten.slice.Tensor", "aten.slice_copy.Tensor")
def _h_slice(d, node):
    a = _bind(node)
    x = a["self"]
    dim = _norm_dim(a["dim"], _rank(d, x))
    size = _shape_of(d, x)[dim]
    start, end, step = slice(a["start"], a["end"], a["step"]).indices(size)
    if end <= start:
        raise d.unsupported(node, "empty slice")
    return _slice(d, node, x, dim, start, end, step)


@_handles("aten.narrow.default")
def _h_narrow(d, node):
    a = _bind(node)
    dim = _norm_dim(a["dim"], _rank(d, a["self"]))
    start = int(a["start"]) % _shape_of(d, a["self"])[dim]
    return _slice(d, node, a["self"], dim, start, start + int(a["length"]))


def _select(d, node, x, dim: int, index: int, shape: list[int]):
    """x.select(dim, index): a slice of one element, then a view without that dim."""
    one = _slice(d, node, x, dim, index, index + 1)
    return d.emit(node, "reshape", [one], {"shape": shape}, shape=shape)


@_handles("aten.select.int", "aten.select_copy.int")
def _h_select(d, node):
    a = _bind(node)
    x = a["self"]
    dim = _norm_dim(a["dim"], _rank(d, x))
    index = int(a["index"]) % _shape_of(d, x)[dim]
    return _select(d, node, x, dim, index, d.out_shape(node))


def _scattered(d, node, x, src, dim: int, start: int, end: int):
    """x with ``src`` (an operand) in place of x[start:end] along ``dim``: the pieces of x
    around it and it, cat'ed (how PyTorch writes an assignment into a slice of a buffer)."""
    size = _shape_of(d, x)[dim]
    parts = ([_slice(d, node, x, dim, 0, start)] if start > 0 else []) + [src] + \
        ([_slice(d, node, x, dim, end, size)] if end < size else [])
    return parts[0] if len(parts) == 1 else d.emit(node, "cat", parts, {"dim": dim})


@_handles("aten.slice_scatter.default")
def _h_slice_scatter(d, node):
    a = _bind(node)
    x = a["self"]
    dim = _norm_dim(a["dim"], _rank(d, x))
    start, end, step = slice(a["start"], a["end"], a["step"]).indices(_shape_of(d, x)[dim])
    if step != 1:
        raise d.unsupported(node, f"a strided assignment (slice step {step})")
    return _scattered(d, node, x, _in(d, node, a["src"]), dim, start, end)


@_handles("aten.select_scatter.default")
def _h_select_scatter(d, node):
    a = _bind(node)
    x = a["self"]
    dim = _norm_dim(a["dim"], _rank(d, x))
    index = int(a["index"]) % _shape_of(d, x)[dim]
    one = _shape_of(d, x)
    one[dim] = 1
    src = d.emit(node, "reshape", [_in(d, node, a["src"])], {"shape": one}, shape=one)
    return _scattered(d, node, x, src, dim, index, index + 1)


@_handles("aten.fill.Tensor", "aten.fill.Scalar")
def _h_fill(d, node):
    """fill(self, value): a constant of self's shape (``buffer[:, 0] = 0.0``, functionalized)."""
    a = _bind(node)
    value = _in(d, node, a["value"])
    if isinstance(value, _Const) and value.tensor.numel() == 1:
        value = _Scalar(float(value.tensor.item()))
    if not isinstance(value, _Scalar):
        raise d.unsupported(node, "fills with a computed value")
    return _Const(torch.full(_shape_of(d, a["self"]), value.value), f"{node.name}.value")


@_handles("aten.copy.default")
def _h_copy(d, node):
    """copy(self, src): src's values in self's shape, what a buffer's copy_ leaves when a later
    op reads the buffer (functionalized)."""
    a = _bind(node)
    shape, src = _shape_of(d, a["self"]), a["src"]
    if _shape_of(d, src) == shape:
        return _in(d, node, src)
    lead = len(shape) - len(_shape_of(d, src))
    ranked = [1] * lead + _shape_of(d, src)
    x = d.emit(node, "reshape", [_in(d, node, src)], {"shape": ranked}, shape=ranked) if lead else _in(d, node, src)
    return d.emit(node, "expand", [x], {"shape": shape})


def _pieces(d, node, x, dim: int, sizes: list[int]):
    out, start = [], 0
    for n in sizes:
        out.append(_slice(d, node, x, dim, start, start + n))
        start += n
    return tuple(out)


@_handles("aten.split.Tensor", "aten.split_with_sizes.default", "aten.split_copy.Tensor",
          "aten.split_with_sizes_copy.default")
def _h_split(d, node):
    x, size_arg = node.args[0], node.args[1]
    dim = _norm_dim(node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0), _rank(d, x))
    total = _shape_of(d, x)[dim]
    if isinstance(size_arg, (list, tuple)):
        sizes = [int(n) for n in size_arg]
    else:
        sizes = [min(int(size_arg), total - s) for s in range(0, total, int(size_arg))]
    return _pieces(d, node, x, dim, sizes)


@_handles("aten.flip.default")
def _h_flip(d, node):
    """flip: along each dim, its size-1 slices cat'ed in reverse order (how a bidirectional
    recurrent layer, decomposed, reads its sequence backwards)."""
    a = _bind(node)
    shape = _shape_of(d, a["self"])
    y = _in(d, node, a["self"])
    for dim in sorted({_norm_dim(k, len(shape)) for k in a["dims"]}):
        if shape[dim] == 1:
            continue
        one = shape[:dim] + [1] + shape[dim + 1:]
        reversed_slices = [d.emit(node, "slice", [y], {"dim": dim, "start": i, "end": i + 1, "step": 1}, shape=one)
                           for i in reversed(range(shape[dim]))]
        y = d.emit(node, "cat", reversed_slices, {"dim": dim}, shape=shape)
    return y


@_handles("aten.chunk.default")
def _h_chunk(d, node):
    a = _bind(node)
    x = a["self"]
    dim = _norm_dim(a["dim"], _rank(d, x))
    return _pieces(d, node, x, dim, [int(v.shape[dim]) for v in node.meta["val"]])


@_handles("aten.unbind.int", "aten.unbind_copy.int")
def _h_unbind(d, node):
    a = _bind(node)
    x = a["self"]
    dim = _norm_dim(a["dim"], _rank(d, x))
    shape = _shape_of(d, x)
    rest = shape[:dim] + shape[dim + 1:]
    return tuple(_select(d, node, x, dim, i, rest) for i in range(shape[dim]))


@_handles("aten.expand.default", "aten.expand_copy.default", "aten.expand_as.default")
def _h_expand(d, node):
    x = node.args[0]
    shape = d.out_shape(node)
    if _shape_of(d, x) == shape:
        return _in(d, node, x)
    return d.emit(node, "expand", [_in(d, node, x)], {"shape": shape})


@_handles("aten.upsample_nearest2d.vec", "aten.upsample_nearest2d.default")
def _h_upsample_nearest(d, node):
    x = node.args[0]
    in_hw, out_hw = _shape_of(d, x)[2:], d.out_shape(node)[2:]
    if any(o % i for i, o in zip(in_hw, out_hw)):
        raise d.unsupported(node, f"nearest upsampling from {in_hw} to {out_hw}; only integer scale factors are supported")
    return d.emit(node, "upsample_nearest2d", [_in(d, node, x)], {"scale": [o // i for i, o in zip(in_hw, out_hw)]})


@_handles("aten.upsample_bilinear2d.vec", "aten.upsample_bilinear2d.default")
def _h_upsample_bilinear(d, node):
    a = _bind(node)
    x = a["input"] if "input" in a else a["self"]
    if _op_key(node.target).endswith(".vec"):
        scales = a["scale_factors"] or [None, None]
    else:
        scales = [a["scales_h"], a["scales_w"]]
    out = d.out_shape(node)
    if len(out) != 4:
        raise d.unsupported(node, f"bilinear upsampling of a rank-{len(out)} tensor; only 4-D (N, C, H, W)")
    # PyTorch computes the source positions from the scale factors when they are given.
    return d.emit(node, "upsample_bilinear2d", [_in(d, node, x)],
                  {"size": out[2:], "align_corners": int(bool(a["align_corners"])),
                   "scale_h": float(scales[0] or 0.0), "scale_w": float(scales[1] or 0.0)})


# --- normalization and attention ----------------------------------------------------------


def _affine(d, node, weight, bias, n: int):
    """The weight and bias of a normalization, ones / zeros when it has no affine parameters."""
    w = _in(d, node, weight) if weight is not None else _Const(torch.ones(n), f"{node.name}.weight")
    b = _in(d, node, bias) if bias is not None else _Const(torch.zeros(n), f"{node.name}.bias")
    return w, b


def _layer_norm(d, node, val=None):
    a = _bind(node)
    shape = list(a["normalized_shape"])
    if len(shape) != 1:
        raise d.unsupported(node, f"normalized_shape={shape}; only the last dim is supported")
    weight, bias = _affine(d, node, a["weight"], a["bias"], int(shape[0]))
    return d.emit(node, "layer_norm", [_in(d, node, a["input"]), weight, bias], {"eps": float(a["eps"])}, val=val)


@_handles("aten.layer_norm.default")
def _h_layer_norm(d, node):
    return _layer_norm(d, node)


@_handles("aten.native_layer_norm.default")
def _h_native_layer_norm(d, node):
    out = _layer_norm(d, node, val=node.meta["val"][0])
    return (out, _Missing("layer_norm's mean"), _Missing("layer_norm's inverse std"))


def _group_norm(d, node, x, groups, weight, bias, eps, val=None):
    shape = _shape_of(d, x)
    if len(shape) < 2:
        raise d.unsupported(node, f"normalization of a rank-{len(shape)} input; (N, C, ...) expected")
    w, b = _affine(d, node, weight, bias, shape[1])
    return d.emit(node, "group_norm", [_in(d, node, x), w, b], {"groups": int(groups), "eps": float(eps)}, val=val)


@_handles("aten.group_norm.default")
def _h_group_norm(d, node):
    a = _bind(node)
    return _group_norm(d, node, a["input"], a["num_groups"], a["weight"], a["bias"], a["eps"])


@_handles("aten.native_group_norm.default")
def _h_native_group_norm(d, node):
    a = _bind(node)
    out = _group_norm(d, node, a["input"], a["group"], a["weight"], a["bias"], a["eps"], val=node.meta["val"][0])
    return (out, _Missing("group_norm's mean"), _Missing("group_norm's inverse std"))


@_handles("aten.instance_norm.default")
def _h_instance_norm(d, node):
    """InstanceNorm: a group norm with one channel per group; with running statistics
    (track_running_stats=True in eval mode) it is a batch norm."""
    a = _bind(node)
    x = a["input"]
    if not a["use_input_stats"]:
        c = _shape_of(d, x)[1]
        w, b = _affine(d, node, a["weight"], a["bias"], c)
        return d.emit(node, "batch_norm", [_in(d, node, x), w, b, _in(d, node, a["running_mean"]),
                                           _in(d, node, a["running_var"])], {"eps": float(a["eps"])})
    return _group_norm(d, node, x, _shape_of(d, x)[1], a["weight"], a["bias"], a["eps"])


@_handles("aten._native_batch_norm_legit.no_stats")
def _h_batch_norm_input_stats(d, node):
    """Batch statistics over every dim but the channels: decomposed instance_norm views the
    input as [1, N*C, ...] first, so with N = 1 this is a group norm with one channel a group."""
    a = _bind(node)
    x = a["input"]
    shape = _shape_of(d, x)
    if shape[0] != 1:
        raise d.unsupported(node, "batch statistics over a batch larger than 1 (training-mode batch norm)")
    out = _group_norm(d, node, x, shape[1], a["weight"], a["bias"], a["eps"], val=node.meta["val"][0])
    return (out, _Missing("batch_norm's mean"), _Missing("batch_norm's inverse std"))


@_handles("aten.scaled_dot_product_attention.default")
def _h_sdpa(d, node):
    """softmax(q @ k^T * scale) @ v as matmul, mul, softmax, matmul (no mask, no dropout)."""
    a = _bind(node)
    if a["attn_mask"] is not None or a["is_causal"] or float(a["dropout_p"]) != 0.0 or a.get("enable_gqa"):
        raise d.unsupported(node, "attention with a mask, causal masking, dropout or grouped queries")
    q, k, v = a["query"], a["key"], a["value"]
    qs, ks = _shape_of(d, q), _shape_of(d, k)
    if len(qs) != len(ks) or _shape_of(d, v)[:-2] != qs[:-2] or ks[:-2] != qs[:-2]:
        raise d.unsupported(node, "query, key and value must have the same batch dims")
    rank = len(qs)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    kt = d.emit(node, "permute", [_in(d, node, k)], {"perm": perm}, shape=[ks[i] for i in perm])
    scores_shape = qs[:-1] + [ks[-2]]
    scores = d.emit(node, "matmul", [_in(d, node, q), kt], shape=scores_shape)
    scale = a["scale"] if a["scale"] is not None else 1.0 / float(qs[-1]) ** 0.5
    scaled = d.emit(node, "mul", [scores, _Scalar(float(scale))], shape=scores_shape)
    weights = d.emit(node, "softmax", [scaled], {"dim": rank - 1}, shape=scores_shape)
    return d.emit(node, "matmul", [weights, _in(d, node, v)])


@_handles("getitem")
def _h_getitem(d, node):
    src, idx = node.args[0], node.args[1]
    v = d.env.get(src)
    if not isinstance(v, tuple):
        raise d.unsupported(node, "indexing a value that is not a tuple of tensors")
    item = v[idx]
    if isinstance(item, _Missing):
        raise UnsupportedModelError(
            f"unsupported use of {item.what} at {node_source(node)} — only the first result of "
            f"{_op_name(src.target)} is supported")
    return item


# --- masks and lookups -------------------------------------------------------------------
# A comparison's bool result is a mask (0/1 bytes); where and masked_fill pick by one.

_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


@_handles(*(f"aten.{c}.{form}" for c in _COMPARISONS for form in ("Tensor", "Scalar")))
def _h_compare(d, node):
    a = _bind(node)
    kind = _op_key(node.target).split(".")[1]
    return d.emit(node, kind, [_in(d, node, a["self"]), _in(d, node, a["other"])])


@_handles("aten.logical_not.default", "aten.bitwise_not.default")
def _h_logical_not(d, node):
    a = _bind(node)
    v = d.val_of(a["self"])
    if _op_key(node.target) == "aten.bitwise_not.default" and (v is None or v.dtype != torch.bool):
        raise d.unsupported(node, "bitwise_not of a non-bool tensor")
    return d.emit(node, "eq", [_in(d, node, a["self"]), _Scalar(0.0)])


@_handles("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def _h_where(d, node):
    a = _bind(node)
    return d.emit(node, "where", [_in(d, node, a["condition"]), _in(d, node, a["self"]), _in(d, node, a["other"])])


@_handles("aten.masked_fill.Scalar", "aten.masked_fill.Tensor", "aten.masked_fill_.Scalar", "aten.masked_fill_.Tensor")
def _h_masked_fill(d, node):
    a = _bind(node)
    return d.emit(node, "where", [_in(d, node, a["mask"]), _in(d, node, a["value"]), _in(d, node, a["self"])])


@_handles("aten.embedding.default")
def _h_embedding(d, node):
    a = _bind(node)
    table = d.value(a["weight"]) if isinstance(a["weight"], torch.fx.Node) else None
    if not isinstance(table, _Const):
        raise d.unsupported(node, "the embedding table is computed; mcuflow looks rows up in a constant table")
    return d.emit(node, "embedding", [_in(d, node, a["indices"]), table])


# --- activations that core ATen decomposes --------------------------------------------------
# ep.run_decompositions() writes Mish as x * tanh(where(x > 20, x, log1p(exp(x)))) and PReLU as
# where(x > 0, x, weight * x). Both are matched back into one mish / prelu node, so they run on
# their own kernels (Mish's int8 lookup table, prelu_s8) instead of exp and log1p tables that
# int8 cannot represent.


def _call(n, *keys: str) -> bool:
    return isinstance(n, torch.fx.Node) and n.op == "call_function" and _op_key(n.target) in keys


def _scalar_arg(n, value: float) -> bool:
    return isinstance(n, (int, float)) and not isinstance(n, bool) and float(n) == value


def _greater_than(n, x, value: float) -> bool:
    return _call(n, "aten.gt.Scalar") and n.args[0] is x and _scalar_arg(n.args[1], value)


def _decomposed_mish(n):
    """x of mul(x, tanh(where(x > 20, x, log1p(exp(x))))), or None."""
    if not _call(n, "aten.mul.Tensor"):
        return None
    for x, t in (n.args[:2], n.args[1::-1]):
        if not _call(t, "aten.tanh.default") or not _call(t.args[0], "aten.where.self"):
            continue
        cond, same, soft = t.args[0].args
        if same is x and _greater_than(cond, x, 20.0) and _call(soft, "aten.log1p.default") \
                and _call(soft.args[0], "aten.exp.default") and soft.args[0].args[0] is x:
            return x
    return None


def _decomposed_prelu(n):
    """(x, weight) of where(x > 0, x, weight * x) with one weight per channel (dim 1), or None."""
    if not _call(n, "aten.where.self"):
        return None
    cond, x, scaled = n.args
    if x is not None and _greater_than(cond, x, 0.0) and _call(scaled, "aten.mul.Tensor"):
        for w, other in (scaled.args[:2], scaled.args[1::-1]):
            xv, wv = x.meta.get("val"), getattr(w, "meta", {}).get("val")
            if other is not x or not isinstance(xv, torch.Tensor) or not isinstance(wv, torch.Tensor):
                continue
            channels = xv.shape[1] if xv.dim() >= 2 else 1
            per_channel = wv.dim() == xv.dim() and all(s == 1 for i, s in enumerate(wv.shape) if i != 1)
            if wv.numel() == 1 or (per_channel and wv.shape[1] == channels):
                return x, w
    return None


def _fuse_decomposed_activations(ep):
    """``ep``, or a copy of it whose decomposed Mish and PReLU are aten.mish / aten.prelu nodes
    (the user's program is never changed)."""
    def match(n):
        x = _decomposed_mish(n)
        if x is not None:
            return torch.ops.aten.mish.default, (x,)
        xw = _decomposed_prelu(n)
        return (torch.ops.aten.prelu.default, xw) if xw is not None else None

    if not isinstance(ep, torch.export.ExportedProgram) or not any(match(n) for n in ep.graph.nodes):
        return ep
    ep = copy.deepcopy(ep)
    graph = ep.graph
    for root in list(graph.nodes):  # in order: a match sees the fused nodes before it
        found = match(root)
        if found is None:
            continue
        with graph.inserting_before(root):
            fused = graph.call_function(*found)
        fused.meta = dict(root.meta)
        root.replace_all_uses_with(fused)
    graph.eliminate_dead_code()
    return ep


# torch.export keeps nn.GRU / nn.LSTM (and nn.RNN) whole; PyTorch's own decompositions write one
# as the linear layers, gate slices, sigmoid / tanh and element-wise ops of each layer and time
# step, which are all in the vocabulary (int8 with LUT gates, float fallback as for any op).
_RECURRENT = (torch.ops.aten.gru.input, torch.ops.aten.lstm.input, torch.ops.aten.rnn_tanh.input,
              torch.ops.aten.rnn_relu.input)


def _decompose_recurrent(ep):
    """``ep``, or a decomposed copy of it when it has recurrent layers (the user's program is
    never changed)."""
    if not isinstance(ep, torch.export.ExportedProgram) or not any(
            n.op == "call_function" and n.target in _RECURRENT for n in ep.graph.nodes):
        return ep
    from torch._decomp import get_decompositions

    return copy.deepcopy(ep).run_decompositions(get_decompositions(list(_RECURRENT)))


def describe(exported_program, builder) -> Description:
    """Describe ``exported_program`` to ``builder`` (a ``mcuflow._core.GraphBuilder``).

    Returns a ``Description`` of the inputs and outputs that were declared. Raises
    ``UnsupportedModelError`` with a one-line message for anything mcuflow cannot compile.
    """
    ep = _fuse_decomposed_activations(_decompose_recurrent(exported_program))
    return walk(ep, builder, {**_HANDLERS, **torch_pt2e.HANDLERS}, SUPPORTED_KINDS, torch_pt2e.HANDLERS.keys())
