"""The torch front end, part 2 of 3: the walk over an exported ATen graph.

``walk`` visits the graph once, in execution order: user-input placeholders become
``add_input``, parameters, buffers and lifted constants become ``add_constant`` the first time
an op uses them, each ``call_function`` node goes to the handler of its ATen overload (part 3,
``mcuflow.frontend``), which emits ops of the contract vocabulary, and the graph outputs become
``set_outputs``. Sub-graphs of constants only are evaluated here with torch and sent as
constants. Everything here is independent of which ATen ops are supported.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Collection

import numpy as np
import torch

from .errors import UnsupportedModelError
from .frontend_protocol import Description
from .torch_source import node_source

__all__ = ["walk", "user_inputs"]

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


def _is_static(shape) -> bool:
    return all(type(d) is int for d in shape)


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


class _Const:
    """A constant tensor known at compile time; sent with add_constant on first use."""

    __slots__ = ("tensor", "name", "id", "transpose_of", "quant")

    def __init__(self, tensor: torch.Tensor, name: str, transpose_of: "_Const | None" = None, quant: dict | None = None):
        self.tensor = tensor
        self.name = name
        self.id: int | None = None
        self.transpose_of = transpose_of
        self.quant = quant  # a given quantization (set_quantization's arguments), from a dequantize node


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


def _is_mask(val) -> bool:
    return isinstance(val, torch.Tensor) and val.dtype == torch.bool


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
    """``[(name, shape), ...]`` of the model's tensor inputs (float32, or int64/int32 ids), in order.

    Raises UnsupportedModelError for dynamic shapes, non-tensor or other inputs.
    """
    return [(node.name, tuple(_input_shape(node))) for node in _user_input_nodes(exported_program)]


def _is_ids(val) -> bool:
    return isinstance(val, torch.Tensor) and val.dtype in (torch.int64, torch.int32)


def _input_shape(node: torch.fx.Node) -> list[int]:
    """Static shape of a user-input placeholder; errors for non-tensor, dynamic or non-float32."""
    val = node.meta.get("val")
    where = _first_user_source(node)
    if not isinstance(val, torch.Tensor):
        raise UnsupportedModelError(
            f"unsupported input {node.name} ({type(val).__name__}) at {where}: "
            f"mcuflow models take float32 tensors (or int64/int32 ids) only")
    if not _is_static(val.shape):
        raise _dynamic_error(where, f"input {node.name}", val.shape)
    if not _is_ids(val):
        _val_dtype_check(val, f"input {node.name}", where)
    return [int(d) for d in val.shape]


# --------------------------------------------------------------------------------------------
# The walker


class _Describer:
    def __init__(self, ep, builder, handlers: dict[str, Callable[["_Describer", torch.fx.Node], Any]],
                 vocabulary: Collection[str], unfolded: Collection[str] = ()):
        self.ep = ep
        self.builder = builder
        self.handlers = handlers
        self.vocabulary = vocabulary
        self.unfolded = unfolded  # overloads handled even on constants (quantize / dequantize)
        self.given_quantization: dict[int, dict] = {}  # tensor id -> set_quantization's arguments
        self.env: dict[torch.fx.Node, Any] = {}
        self.used_names: set[str] = set()
        self.states: dict[str, int] = {}  # buffer name -> its state tensor (buffers forward updates)
        self.desc = Description()

    # -- errors -------------------------------------------------------------------------------

    def unsupported(self, node, reason: str | None = None) -> UnsupportedModelError:
        name = _op_name(node.target)
        if reason is None:
            return UnsupportedModelError(
                f"unsupported op {name} at {node_source(node)} — supported: {', '.join(self.vocabulary)}")
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
            t = c.tensor.float() if _is_mask(c.tensor) else c.tensor  # a constant mask: 0s and 1s
            if t.dtype != torch.float32:
                raise UnsupportedModelError(
                    f"unsupported dtype {t.dtype} for {c.name} at {node_source(node)}")
            arr = np.ascontiguousarray(t.detach().cpu().numpy().astype(np.float32, copy=False))
            if arr.ndim == 0:  # 0-d constants are sent like python scalars: shape [1]
                arr = arr.reshape(1)
            c.id = int(self.builder.add_constant(self.unique_name(c.name), arr))
            self.desc.num_constants += 1
            if c.quant is not None:
                self.builder.set_quantization(c.id, **c.quant)
                self.desc.quantized_tensors += 1
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
        assert kind in self.vocabulary, kind
        ids = [self.input_id(node, v) for v in inputs]
        if shape is None:
            shape = self.out_shape(node, val)
            out_val = val if val is not None else node.meta.get("val")
            if isinstance(out_val, (list, tuple)):
                out_val = out_val[0]
            if not indices and not _is_mask(out_val):
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
        # Buffers that forward updates become states: the program keeps them between runs.
        mutated = {spec.target for spec in sig.output_specs if spec.kind == OutputKind.BUFFER_MUTATION}
        for spec in sig.output_specs:
            if spec.kind in (OutputKind.USER_OUTPUT, OutputKind.BUFFER_MUTATION):
                continue
            name = getattr(spec.arg, "name", None)
            producer = nodes_by_name.get(name) if name else None
            where = node_source(producer) if producer is not None else "model output"
            if spec.kind == OutputKind.USER_INPUT_MUTATION:
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
                elif spec.kind == InputKind.BUFFER and spec.target in mutated:
                    self.describe_state(node, spec.target, state[spec.target])
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
        ids = _is_ids(node.meta.get("val"))
        tid = int(self.builder.add_input(node.name, shape, "int32" if ids else "float32"))
        if ids:
            self.desc.integer_inputs.add(node.name)
        self.env[node] = _TensorId(tid)
        self.desc.inputs.append((node.name, shape))
        self.desc.input_ids.append(tid)

    def describe_state(self, node, target: str, tensor: torch.Tensor) -> None:
        where = _first_user_source(node)
        if tensor.dtype != torch.float32:
            raise UnsupportedModelError(f"model updates buffer {target} of dtype {tensor.dtype} at {where}: "
                                        f"mcuflow keeps float32 buffers as state")
        if not _is_static(tensor.shape):
            raise UnsupportedModelError(f"model updates buffer {target} of dynamic shape at {where}: states need static shapes")
        tid = int(self.builder.add_state(target, tensor.detach().cpu().numpy().astype(np.float32)))
        self.env[node] = _TensorId(tid)
        self.states[target] = tid

    def describe_outputs(self, node, sig) -> None:
        from torch.export.graph_signature import OutputKind

        outs = node.args[0]
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        names = [getattr(spec.arg, "name", f"output{i}") for i, spec in enumerate(sig.output_specs)]
        ids = []
        for i, o in enumerate(outs):
            v = self.value(o) if isinstance(o, torch.fx.Node) else o
            spec = sig.output_specs[i] if i < len(sig.output_specs) else None
            if spec is not None and spec.kind == OutputKind.BUFFER_MUTATION:
                where = node_source(o) if isinstance(o, torch.fx.Node) else "model output"
                if not isinstance(v, _TensorId):
                    raise UnsupportedModelError(f"model sets buffer {spec.target} to a constant at {where}: "
                                                f"a buffer that depends on no input needs no state")
                try:
                    self.builder.update_state(self.states[spec.target], v.id)
                except ValueError as e:
                    raise UnsupportedModelError(f"buffer {spec.target} at {where}: {str(e).strip()}") from e
                continue
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
        handler = self.handlers.get(key)
        if handler is None:
            raise self.unsupported(node)
        return handler(self, node)

    def _foldable(self, node) -> bool:
        target = node.target
        if _op_key(target) in self.unfolded:
            return False
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


def _check_buffer_assignments(ep) -> None:
    """A buffer's update must keep its shape and dtype: ``self.buf = t`` in eager PyTorch
    replaces the buffer with ``t`` whatever its shape, where the exported program copies ``t``
    into the buffer (an error in torch's own decomposition for a shape that does not broadcast).
    A state has the buffer's static shape and dtype between runs: anything else is refused here,
    naming the buffer, the model line and the two shapes or dtypes."""
    from torch.export.graph_signature import InputKind

    buffers = {spec.arg.name: spec.target for spec in ep.graph_signature.input_specs
               if spec.kind == InputKind.BUFFER and hasattr(spec.arg, "name")}
    for node in ep.graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten.copy_.default:
            continue
        target, source = node.args[0], node.args[1]
        if not (isinstance(target, torch.fx.Node) and target.name in buffers and isinstance(source, torch.fx.Node)):
            continue
        buffer, value = target.meta.get("val"), source.meta.get("val")
        if not isinstance(buffer, torch.Tensor) or not isinstance(value, torch.Tensor):
            continue
        where = f"buffer {buffers[target.name]} at {node_source(node)}"
        if not _is_static(value.shape):
            raise UnsupportedModelError(f"{where}: the update has dynamic shape {_shape_str(value.shape)}; "
                                        f"a state keeps the buffer's static shape {_shape_str(buffer.shape)}")
        try:
            broadcast = list(torch.broadcast_shapes(value.shape, buffer.shape)) == list(buffer.shape)
        except RuntimeError:
            broadcast = False
        if not broadcast:
            raise UnsupportedModelError(f"{where}: the update has shape {_shape_str(value.shape)}, the buffer "
                                        f"{_shape_str(buffer.shape)}; a state keeps its buffer's shape between runs")
        if value.dtype != buffer.dtype:
            raise UnsupportedModelError(f"{where}: the update is {value.dtype}, the buffer {buffer.dtype}; "
                                        f"a state keeps its buffer's dtype between runs")


def walk(exported_program, builder, handlers: dict[str, Callable[[_Describer, torch.fx.Node], Any]],
         vocabulary: Collection[str], unfolded: Collection[str] = ()) -> Description:
    """Describe ``exported_program`` to ``builder``, each call node by ``handlers[overload]``,
    which may emit the kinds of ``vocabulary`` only; the overloads in ``unfolded`` go to their
    handler even when every argument is a constant."""
    ep = exported_program
    if not isinstance(ep, torch.export.ExportedProgram):
        raise TypeError(f"describe() needs a torch.export.ExportedProgram, got {type(ep).__name__}")
    _check_training_mode(ep)
    _check_buffer_assignments(ep)
    if _has_mutations(ep):
        # In-place ops (nn.ReLU(inplace=True), x += y ...): make aliasing explicit first.
        ep = ep.run_decompositions({})
    return _Describer(ep, builder, handlers, vocabulary, unfolded).run()
