"""Front end: describe a ``torch.export.ExportedProgram`` to the C++ compiler.

This module is deliberately thin. It walks the exported ATen graph once, in execution order,
and for every node calls the builder of ``docs/frontend_contract.md``
(``mcuflow._core.GraphBuilder`` or anything with the same four methods):

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

import operator
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from .errors import UnsupportedModelError

__all__ = [
    "SUPPORTED_KINDS",
    "is_supported_kind",
    "describe",
    "Description",
    "user_inputs",
    "node_source",
]

# The op vocabulary of docs/frontend_contract.md. The only list of supported kinds: error
# messages, is_supported_kind() and the tests all use it.
SUPPORTED_KINDS: tuple[str, ...] = (
    "conv2d",
    "linear",
    "batch_norm",
    "relu",
    "clamp",
    "add",
    "mul",
    "max_pool2d",
    "avg_pool2d",
    "mean",
    "adaptive_avg_pool2d",
    "reshape",
    "permute",
    "softmax",
    "cat",
    "identity",
    "pad",
    "sigmoid",
    "tanh",
    "hardswish",
    "hardsigmoid",
    "silu",
    "gelu",
    "elu",
    "leaky_relu",
    "neg",
    "abs",
    "sub",
    "minimum",
    "maximum",
    "sum",
    "amax",
    "argmax",
    "slice",
    "expand",
    "conv_transpose2d",
    "matmul",
    "upsample_nearest2d",
    "layer_norm",
    "prelu",
    "mish",
    "upsample_bilinear2d",
    "group_norm",
)

# Stand-in for an open clamp bound (the contract keeps infinities out of the program).
FLOAT_MAX = 3.4e38


def is_supported_kind(kind: str) -> bool:
    """True if ``kind`` is an op kind of the front-end contract."""
    return kind in SUPPORTED_KINDS


def _supported_list() -> str:
    return ", ".join(SUPPORTED_KINDS)


# --------------------------------------------------------------------------------------------
# Source lines


_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+)(?:, in .*)?$')
_CARET_RE = re.compile(r"^[\s^~]*$")
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_MCUFLOW_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _parse_frames(stack_trace: str) -> list[tuple[str, int, str]]:
    frames: list[tuple[str, int, str]] = []
    lines = stack_trace.splitlines()
    for i, line in enumerate(lines):
        m = _FRAME_RE.match(line)
        if not m:
            continue
        code = ""
        if i + 1 < len(lines) and not _FRAME_RE.match(lines[i + 1]) and not _CARET_RE.match(lines[i + 1]):
            code = lines[i + 1].strip()
        frames.append((m.group("file"), int(m.group("line")), code))
    return frames


def _frame_rank(path: str) -> int:
    """2: the user's own code, 1: some other installed library, 0: torch or mcuflow itself."""
    full = os.path.abspath(path) if not path.startswith("<") else path
    if full.startswith(_TORCH_DIR) or full.startswith(_MCUFLOW_DIR):
        return 0
    parts = full.replace("\\", "/").split("/")
    if "site-packages" in parts or "dist-packages" in parts:
        return 1
    return 2


def _display_path(path: str) -> str:
    if path.startswith("<"):
        return path
    full = os.path.abspath(path)
    cwd = os.getcwd()
    try:
        if os.path.commonpath([full, cwd]) == cwd:
            return os.path.relpath(full, cwd)
    except ValueError:  # different drives
        pass
    return full


def node_source(node: torch.fx.Node) -> str:
    """``"path:line: code"`` of the model line that created ``node``, or the node's name.

    The line is the innermost frame of ``node.meta["stack_trace"]`` that lies in the user's
    own files (not torch, not mcuflow, not another installed package); if every frame is in a
    library, the innermost frame outside torch is used.
    """
    trace = node.meta.get("stack_trace") if node is not None else None
    if not trace:
        return node.name if node is not None else "<unknown>"
    frames = _parse_frames(trace)
    if not frames:
        return node.name
    best = max(range(len(frames)), key=lambda i: (_frame_rank(frames[i][0]), i))
    path, line, code = frames[best]
    src = f"{_display_path(path)}:{line}"
    return f"{src}: {code}" if code else src


# --------------------------------------------------------------------------------------------
# Small helpers


def _op_name(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # e.g. "aten.sin.default"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order.{target.name()}"
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or str(target)
    mod = {"_operator": "operator", "builtins": ""}.get(mod, mod)
    return f"{mod}.{name}" if mod else name


def _op_key(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if target is operator.getitem:
        return "getitem"
    return _op_name(target)


def _bind(node: torch.fx.Node) -> dict[str, Any]:
    """The node's arguments by schema name, defaults filled in."""
    schema = node.target._schema
    out: dict[str, Any] = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            out[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            out[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            out[arg.name] = arg.default_value
        else:
            out[arg.name] = None
    return out


def _pair(v: Any, name: str = "") -> list[int]:
    if isinstance(v, (list, tuple)):
        vals = [int(x) for x in v]
        if len(vals) == 1:
            return vals * 2
        if len(vals) == 2:
            return vals
        raise ValueError(f"{name} has {len(vals)} values, expected 2")
    return [int(v), int(v)]


def _is_static(shape) -> bool:
    return all(type(d) is int for d in shape)


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


@dataclass
class Description:
    """What ``describe`` sent to the builder."""

    inputs: list[tuple[str, list[int]]] = field(default_factory=list)
    outputs: list[tuple[str, list[int]]] = field(default_factory=list)
    input_ids: list[int] = field(default_factory=list)
    output_ids: list[int] = field(default_factory=list)
    num_ops: int = 0
    num_constants: int = 0
    kinds: list[str] = field(default_factory=list)


class _Const:
    """A constant tensor known at compile time; sent with add_constant on first use."""

    __slots__ = ("tensor", "name", "id", "transpose_of")

    def __init__(self, tensor: torch.Tensor, name: str, transpose_of: "_Const | None" = None):
        self.tensor = tensor
        self.name = name
        self.id: int | None = None
        self.transpose_of = transpose_of


class _Missing:
    """A tuple element the contract has no tensor for (pool indices, BN saved statistics)."""

    __slots__ = ("what",)

    def __init__(self, what: str):
        self.what = what


# --------------------------------------------------------------------------------------------
# Pre-checks on the raw graph


def _check_training_mode(ep) -> None:
    for node in ep.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        key = str(node.target)
        what = None
        if key == "aten.batch_norm.default":
            if _bind(node)["training"]:
                what = "batch_norm"
        elif key in ("aten.dropout.default", "aten.feature_dropout.default",
                     "aten.alpha_dropout.default", "aten.feature_alpha_dropout.default"):
            if _bind(node)["train"]:
                what = "dropout"
        elif key.startswith("aten.native_dropout") or key.startswith("aten._native_batch_norm_legit_functional") \
                or key in ("aten._native_batch_norm_legit.default", "aten.native_batch_norm.default"):
            what = key
        if what:
            raise UnsupportedModelError(
                f"{what} in training mode at {node_source(node)} — call model.eval() before torch.export.export")


def _has_mutations(ep) -> bool:
    for node in ep.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            if node.target._schema.is_mutable:
                return True
    return False


def _first_user_source(node: torch.fx.Node) -> str:
    for user in node.users:
        if user.op == "call_function":
            return node_source(user)
    return f"input {node.name}"


def _val_dtype_check(val, name: str, where: str) -> None:
    if isinstance(val, torch.Tensor) and val.dtype != torch.float32:
        raise UnsupportedModelError(f"unsupported dtype {val.dtype} for {name} at {where}")


def _dynamic_error(where: str, what: str, shape) -> UnsupportedModelError:
    return UnsupportedModelError(
        f"dynamic shape at {where}: mcuflow needs static shapes; export without dynamic_shapes "
        f"({what} has shape {_shape_str(shape)})")


def _user_input_nodes(ep):
    from torch.export.graph_signature import InputKind

    kinds = {spec.arg.name: spec for spec in ep.graph_signature.input_specs
             if hasattr(spec.arg, "name")}
    for node in ep.graph.nodes:
        if node.op == "placeholder":
            spec = kinds.get(node.name)
            if spec is not None and spec.kind == InputKind.USER_INPUT:
                yield node


def user_inputs(exported_program) -> list[tuple[str, tuple[int, ...]]]:
    """``[(name, shape), ...]`` of the model's float32 tensor inputs, in order.

    Raises UnsupportedModelError for dynamic shapes, non-tensor or non-float32 inputs.
    """
    return [(node.name, tuple(_input_shape(node))) for node in _user_input_nodes(exported_program)]


def _input_shape(node: torch.fx.Node) -> list[int]:
    """Static shape of a user-input placeholder; errors for non-tensor, dynamic or non-float32."""
    val = node.meta.get("val")
    where = _first_user_source(node)
    if not isinstance(val, torch.Tensor):
        raise UnsupportedModelError(
            f"unsupported input {node.name} ({type(val).__name__}) at {where}: "
            f"mcuflow models take float32 tensors only")
    if not _is_static(val.shape):
        raise _dynamic_error(where, f"input {node.name}", val.shape)
    _val_dtype_check(val, f"input {node.name}", where)
    return [int(d) for d in val.shape]


# --------------------------------------------------------------------------------------------
# The walker


class _Describer:
    def __init__(self, ep, builder):
        self.ep = ep
        self.builder = builder
        self.env: dict[torch.fx.Node, Any] = {}
        self.used_names: set[str] = set()
        self.desc = Description()

    # -- errors -------------------------------------------------------------------------------

    def unsupported(self, node, reason: str | None = None) -> UnsupportedModelError:
        name = _op_name(node.target)
        if reason is None:
            return UnsupportedModelError(
                f"unsupported op {name} at {node_source(node)} — supported: {_supported_list()}")
        return UnsupportedModelError(f"unsupported arguments for {name} at {node_source(node)} — {reason}")

    # -- values -------------------------------------------------------------------------------

    def unique_name(self, name: str) -> str:
        base, n = name, 1
        while name in self.used_names:
            n += 1
            name = f"{base}_{n}"
        self.used_names.add(name)
        return name

    def value(self, arg):
        """The env value for an argument (Node → id/_Const/tuple; python values as they are)."""
        if isinstance(arg, torch.fx.Node):
            if arg not in self.env:
                raise UnsupportedModelError(f"internal: node {arg.name} used before it was described")
            return self.env[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.value(a) for a in arg)
        return arg

    def is_const(self, v) -> bool:
        if isinstance(v, _Const):
            return True
        if isinstance(v, (list, tuple)):
            return all(self.is_const(x) for x in v)
        if isinstance(v, (int, float, bool, str, type(None), torch.dtype, torch.device,
                          torch.layout, torch.memory_format)):
            return not isinstance(v, torch.SymInt)
        return False

    def register_const(self, c: _Const, node) -> int:
        if c.id is None:
            t = c.tensor
            if t.dtype != torch.float32:
                raise UnsupportedModelError(
                    f"unsupported dtype {t.dtype} for {c.name} at {node_source(node)}")
            arr = np.ascontiguousarray(t.detach().cpu().numpy().astype(np.float32, copy=False))
            if arr.ndim == 0:  # 0-d constants are sent like python scalars: shape [1]
                arr = arr.reshape(1)
            c.id = int(self.builder.add_constant(self.unique_name(c.name), arr))
            self.desc.num_constants += 1
        return c.id

    def arg(self, node, a):
        """Value of a tensor-or-scalar operand; python scalars come back as _Scalar."""
        if isinstance(a, torch.fx.Node):
            return self.value(a)
        if isinstance(a, (bool, int, float)):
            return _Scalar(float(a))
        if a is None:
            return None
        raise self.unsupported(node, f"operand {a!r} is not a tensor")

    def input_id(self, node, v) -> int:
        if isinstance(v, (bool, int, float)) and not isinstance(v, (torch.SymInt, torch.SymFloat)):
            v = _Scalar(float(v))  # e.g. a folded scalar result
        if isinstance(v, _Scalar):
            c = _Const(torch.tensor([v.value], dtype=torch.float32), f"{node.name}.scalar")
            return self.register_const(c, node)
        if isinstance(v, _Const):
            return self.register_const(v, node)
        if isinstance(v, _TensorId):
            return v.id
        if isinstance(v, _Missing):
            raise self.unsupported(node, f"uses {v.what}, which mcuflow does not compute")
        raise self.unsupported(node, f"operand of type {type(v).__name__} is not a tensor")

    def val_of(self, a):
        """Fake/real tensor describing operand ``a`` (for ranks and dtypes), or None."""
        if isinstance(a, torch.fx.Node):
            v = a.meta.get("val")
            return v if isinstance(v, torch.Tensor) else None
        return None

    def out_shape(self, node, val=None) -> list[int]:
        if val is None:
            val = node.meta.get("val")
            if isinstance(val, (list, tuple)):
                val = val[0]
        if not isinstance(val, torch.Tensor):
            raise self.unsupported(node, "produces no tensor")
        if not _is_static(val.shape):
            raise _dynamic_error(node_source(node), node.name, val.shape)
        return [int(d) for d in val.shape]

    def emit(self, node, kind: str, inputs: list, attrs: dict | None = None, val=None, shape=None,
             indices: bool = False) -> "_TensorId":
        """One contract op for ``node``. ``shape``: the output shape when the op is one step
        of a node that becomes several (else the node's own); ``indices``: the node's
        result is an int64 index tensor (argmax), not float32."""
        assert is_supported_kind(kind), kind
        ids = [self.input_id(node, v) for v in inputs]
        if shape is None:
            shape = self.out_shape(node, val)
            out_val = val if val is not None else node.meta.get("val")
            if isinstance(out_val, (list, tuple)):
                out_val = out_val[0]
            if not indices:
                _val_dtype_check(out_val, node.name, node_source(node))
        source = node_source(node)
        try:
            out = self.builder.add_op(kind, ids, dict(attrs or {}), source, [shape])
        except ValueError as e:  # the compiler's one-line "<kind> at <source>: <reason>"
            raise UnsupportedModelError(str(e).strip().splitlines()[0] if str(e).strip() else
                                        f"{kind} at {source}: rejected by the compiler") from e
        self.desc.num_ops += 1
        self.desc.kinds.append(kind)
        return _TensorId(int(list(out)[0]))

    # -- walking ------------------------------------------------------------------------------

    def run(self) -> Description:
        from torch.export.graph_signature import InputKind, OutputKind

        ep = self.ep
        sig = ep.graph_signature
        specs = {spec.arg.name: spec for spec in sig.input_specs if hasattr(spec.arg, "name")}
        nodes_by_name = {n.name: n for n in ep.graph.nodes}

        # The signature: mcuflow compiles pure functions of tensors.
        for spec in sig.input_specs:
            if spec.kind in (InputKind.USER_INPUT, InputKind.PARAMETER, InputKind.BUFFER,
                             InputKind.CONSTANT_TENSOR):
                continue
            raise UnsupportedModelError(
                f"unsupported model input {getattr(spec.arg, 'name', spec.arg)} of kind {spec.kind.name}: "
                f"mcuflow compiles models whose inputs are tensors, parameters, buffers and constants")
        for spec in sig.output_specs:
            if spec.kind == OutputKind.USER_OUTPUT:
                continue
            name = getattr(spec.arg, "name", None)
            producer = nodes_by_name.get(name) if name else None
            where = node_source(producer) if producer is not None else "model output"
            if spec.kind == OutputKind.BUFFER_MUTATION:
                why = f"model updates buffer {spec.target} at {where} — mcuflow compiles inference graphs; call model.eval() and do not modify buffers in forward()"
            elif spec.kind == OutputKind.USER_INPUT_MUTATION:
                why = f"model modifies its input {spec.target} in place at {where} — mcuflow compiles pure functions of their inputs"
            else:
                why = f"unsupported model output {name} of kind {spec.kind.name} at {where} — mcuflow compiles inference graphs"
            raise UnsupportedModelError(why)

        state = ep.state_dict
        consts = ep.constants
        for node in ep.graph.nodes:
            if node.op == "placeholder":
                spec = specs.get(node.name)
                if spec is None:
                    raise UnsupportedModelError(f"internal: placeholder {node.name} missing from the graph signature")
                if spec.kind == InputKind.USER_INPUT:
                    self.describe_input(node)
                else:
                    target = spec.target
                    if target in state:
                        tensor = state[target]
                    elif target in consts:
                        tensor = consts[target]
                    else:
                        raise UnsupportedModelError(
                            f"internal: no tensor for {spec.kind.name.lower()} {target}")
                    if not isinstance(tensor, torch.Tensor):
                        raise UnsupportedModelError(
                            f"unsupported constant {target} of type {type(tensor).__name__} at {_first_user_source(node)}")
                    self.env[node] = _Const(tensor, target)
            elif node.op == "call_function":
                if len(node.users) == 0:
                    continue  # dead values and no-op asserts (_assert_tensor_metadata, _assert_scalar ...)
                self.env[node] = self.describe_call(node)
            elif node.op == "get_attr":
                attr = getattr(ep.graph_module, node.target, None)
                self.env[node] = _Const(attr, node.target) if isinstance(attr, torch.Tensor) else _Opaque(node.target)
            elif node.op == "output":
                self.describe_outputs(node, sig)
            else:
                raise UnsupportedModelError(f"unsupported graph node {node.op} {node.name}")
        return self.desc

    def describe_input(self, node) -> None:
        shape = _input_shape(node)
        self.used_names.add(node.name)
        tid = int(self.builder.add_input(node.name, shape))
        self.env[node] = _TensorId(tid)
        self.desc.inputs.append((node.name, shape))
        self.desc.input_ids.append(tid)

    def describe_outputs(self, node, sig) -> None:
        outs = node.args[0]
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        names = [getattr(spec.arg, "name", f"output{i}") for i, spec in enumerate(sig.output_specs)]
        ids = []
        for i, o in enumerate(outs):
            v = self.value(o) if isinstance(o, torch.fx.Node) else o
            name = names[i] if i < len(names) else f"output{i}"
            if isinstance(v, _TensorId):
                ids.append(v.id)
                shape = self.out_shape(o) if isinstance(o, torch.fx.Node) else []
            elif isinstance(v, _Const):
                ids.append(self.register_const(v, o if isinstance(o, torch.fx.Node) else node))
                shape = list(v.tensor.shape)
            else:
                raise UnsupportedModelError(
                    f"unsupported model output {name} ({type(v).__name__}): mcuflow models return float32 tensors only")
            self.desc.outputs.append((name, shape))
        self.desc.output_ids = ids
        self.builder.set_outputs(ids)

    def describe_call(self, node):
        target = node.target
        key = _op_key(target)
        # Everything computed from constants only is folded here.
        if self._foldable(node):
            folded = self.fold(node)
            if folded is not None:
                return folded
        handler = _HANDLERS.get(key)
        if handler is None:
            raise self.unsupported(node)
        return handler(self, node)

    def _foldable(self, node) -> bool:
        target = node.target
        if isinstance(target, torch._ops.OpOverload):
            if torch.Tag.nondeterministic_seeded in target.tags or target._schema.is_mutable:
                return False
        elif target is not operator.getitem:
            return False
        for a in list(node.args) + list(node.kwargs.values()):
            if not self._arg_const(a):
                return False
        return True

    def _arg_const(self, a) -> bool:
        if isinstance(a, torch.fx.Node):
            return a in self.env and self.is_const(self.env[a])
        if isinstance(a, (list, tuple)):
            return all(self._arg_const(x) for x in a)
        return not isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool))

    def fold(self, node):
        def real(a):
            if isinstance(a, torch.fx.Node):
                return real(self.env[a])
            if isinstance(a, _Const):
                return a.tensor
            if isinstance(a, (list, tuple)):
                return type(a)(real(x) for x in a)
            return a

        try:
            with torch.no_grad():
                result = node.target(*real(node.args), **real(node.kwargs))
        except Exception:  # leave it to the handler (or the unsupported-op error)
            return None

        def wrap(r, suffix=""):
            if isinstance(r, torch.Tensor):
                return _Const(r.detach(), node.name + suffix)
            if isinstance(r, (list, tuple)):
                return tuple(wrap(x, f"{suffix}.{i}") for i, x in enumerate(r))
            return r

        out = wrap(result)
        # Remember plain 2-D transposes so a decomposed linear (addmm on permute(W)) gets W back.
        key = _op_key(node.target)
        if isinstance(out, _Const) and out.tensor.dim() == 2 and node.args:
            src = self.env.get(node.args[0]) if isinstance(node.args[0], torch.fx.Node) else None
            if isinstance(src, _Const) and src.tensor.dim() == 2:
                is_t = key in ("aten.t.default", "aten.numpy_T.default") or \
                    (key == "aten.permute.default" and list(node.args[1]) in ([1, 0], [-1, -2], [1, -2], [-1, 0])) or \
                    (key == "aten.transpose.int" and {int(node.args[1]) % 2, int(node.args[2]) % 2} == {0, 1})
                if is_t:
                    out.transpose_of = src
        return out


class _TensorId:
    __slots__ = ("id",)

    def __init__(self, i: int):
        self.id = i


class _Scalar:
    __slots__ = ("value",)

    def __init__(self, v: float):
        self.value = v


class _Opaque:
    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what


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
    rest = [_Const(wv.tensor.unsqueeze(2), wv.name)]
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
          "aten.mish_.default": "mish"}


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
    return d.emit(node, "prelu", [x, _Const(w.tensor.reshape(-1), w.name)])


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


def describe(exported_program, builder) -> Description:
    """Describe ``exported_program`` to ``builder`` (a ``mcuflow._core.GraphBuilder``).

    Returns a ``Description`` of the inputs and outputs that were declared. Raises
    ``UnsupportedModelError`` with a one-line message for anything mcuflow cannot compile.
    """
    ep = exported_program
    if not isinstance(ep, torch.export.ExportedProgram):
        raise TypeError(f"describe() needs a torch.export.ExportedProgram, got {type(ep).__name__}")
    _check_training_mode(ep)
    if _has_mutations(ep):
        # In-place ops (nn.ReLU(inplace=True), x += y ...): make aliasing explicit first.
        ep = ep.run_decompositions({})
    return _Describer(ep, builder).run()
