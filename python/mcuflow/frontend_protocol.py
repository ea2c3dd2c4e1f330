"""What a front end is: the protocol every model front end implements (docs/frontend_contract.md).

A front end turns a model of some framework into calls on a ``GraphBuilder`` (the compiler's
``mcuflow._core.GraphBuilder``) using the op vocabulary of the contract, and names the model's
tensor inputs so calibration data can be matched to them. ``mcuflow.frontend`` is the torch
front end (``torch.export.ExportedProgram``); another (ONNX, say) implements the same two
functions and nothing else in mcuflow changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

__all__ = ["Description", "FrontEnd", "GraphBuilder"]


class GraphBuilder(Protocol):
    """The compiler side of the contract (``mcuflow._core.GraphBuilder``)."""

    def add_input(self, name: str, shape: list[int], dtype: str = "float32") -> int: ...  # or "int32" ids

    def add_constant(self, name: str, array: Any) -> int: ...

    def add_op(self, kind: str, inputs: list[int], attrs: dict[str, Any], source: str,
               output_shapes: list[list[int]]) -> Sequence[int]: ...

    def set_outputs(self, ids: list[int]) -> None: ...


@dataclass
class Description:
    """What a front end's ``describe`` sent to the builder."""

    inputs: list[tuple[str, list[int]]] = field(default_factory=list)
    integer_inputs: set[str] = field(default_factory=set)  # ids: the program takes them as int32
    outputs: list[tuple[str, list[int]]] = field(default_factory=list)
    input_ids: list[int] = field(default_factory=list)
    output_ids: list[int] = field(default_factory=list)
    num_ops: int = 0
    num_constants: int = 0
    kinds: list[str] = field(default_factory=list)
    quantized_tensors: int = 0  # tensors sent with a given quantization (set_quantization)


class FrontEnd(Protocol):
    """A model front end. Both functions raise ``UnsupportedModelError`` with one line naming
    the op and the model's source line for anything the contract cannot express."""

    def describe(self, model: Any, builder: GraphBuilder) -> Description:
        """Describe ``model`` to ``builder``: inputs, constants, ops, outputs, in that order of use."""

    def user_inputs(self, model: Any) -> list[tuple[str, tuple[int, ...]]]:
        """``[(name, shape), ...]`` of the model's tensor inputs (float32 or integer ids), in order."""
