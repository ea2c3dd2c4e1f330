"""The options of ``mcuflow.compile``: one object, checked once when it is made.

Every value is checked by the compiler's own ``check_options`` (``compiler/src/compile.cpp``,
through ``_core.check_options``), the check ``compile_graph`` runs too, so the Python API, the
CLI and C++ callers refuse the same options with the same words. Here only what C++ cannot see
is checked: Python types, whether a percentile was given at all, and the memory map
(``memory_map.memory_regions``, which knows the boards). ``mcuflow compile`` makes one before
it imports torch, so a bad option never waits for a model to load.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

from . import _core
from .errors import InputError
from .memory_map import memory_regions

__all__ = ["CompileOptions", "DEFAULT_PERCENTILE"]

DEFAULT_PERCENTILE = 99.99
_INT32 = (-2**31, 2**31 - 1)


@dataclass(frozen=True)
class CompileOptions:
    """``mcuflow.compile``'s options (its docstring says what each does). Making one checks it:
    InputError naming the first bad option. ``percentile`` becomes the percentile the compiler
    uses; ``regions`` and ``copy_weights`` are the memory plan's regions and whether weights
    belong in fast memory."""

    target: str = "cortex-m55"
    precision: str = "int8"
    io: str = "float32"
    observer: str = "minmax"
    percentile: float | None = None
    fallback: str = "float"
    schedule: bool = True
    in_place: bool = True
    memory: Any = None
    patches: int = 1
    stream_input: bool = False
    regions: list = field(init=False, default_factory=list)
    copy_weights: bool = field(init=False, default=False)

    def __post_init__(self):
        if not isinstance(self.target, str):
            raise InputError(f"target is a name such as 'cortex-m55', got {type(self.target).__name__}")
        if isinstance(self.patches, bool) or not isinstance(self.patches, int):
            raise InputError(f"patches must be a whole number from 1 to 64, got {self.patches!r}")
        if not isinstance(self.stream_input, bool):
            raise InputError(f"stream_input must be True or False, got {self.stream_input!r}")
        given = self.percentile
        if given is not None and (isinstance(given, bool) or not isinstance(given, numbers.Real)):
            raise InputError(f"percentile must be a number above 50 and at most 100, got {given!r}")
        percentile = DEFAULT_PERCENTILE if given is None else float(given)
        try:
            _core.check_options(self.target, str(self.precision), str(self.io), str(self.fallback),
                                min(max(self.patches, _INT32[0]), _INT32[1]), self.stream_input, str(self.observer),
                                percentile)
        except _core.CompileError as e:
            raise InputError(str(e)) from None
        if given is not None and self.observer != "percentile":
            raise InputError(f"percentile applies to observer 'percentile' only (observer is {self.observer!r})")
        regions, copy_weights = memory_regions(self.memory)
        object.__setattr__(self, "percentile", percentile)
        object.__setattr__(self, "regions", regions)
        object.__setattr__(self, "copy_weights", copy_weights)
