"""The options of ``mcuflow.compile``: one object, checked once when it is made.

Every value is checked by the compiler's own ``check_options`` (``compiler/src/compile.cpp``,
through ``_core.check_options``), the check ``compile_graph`` runs too, so the Python API, the
CLI and C++ callers refuse the same options with the same words. Here only what C++ cannot see
is checked: Python types, whether a percentile was given at all (and how the caller wrote a bad
one), and the memory map
(``memory_map.memory_regions``, which knows the boards). ``mcuflow compile`` makes one before
it imports torch, so a bad option never waits for a model to load.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

from . import _core
from .errors import InputError
from .memory_map import memory_regions

__all__ = ["CompileOptions", "DEFAULT_PERCENTILE", "default_observer"]

DEFAULT_PERCENTILE = 99.99


def default_observer(precision: str) -> str:
    """The observer an int8 program's activation ranges get unless one is named: ``mse``, the most
    accurate on trained models (docs/quantization.md, "The observers"); other precisions take the
    observed range, the only one they have (the int16 layers of precision "mixed" too: its int8 ones
    take the observer)."""
    return "mse" if precision in ("int8", "mixed") else "minmax"


# What the compiler checks a mixed option as: the widest choice it may make for a layer (int16
# activations, int4 weights), whose restrictions the program must meet.
_CHECKED_AS = {"precision": "int16", "weights": "int4"}


def _budget(name: str, value, whole: bool, low: float, high: float | None = None):
    """A budget's value checked: None, or a number (whole: an int) in [low, high]."""
    if value is None:
        return None
    kind = int if whole else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not (low <= value and (high is None or value <= high)):
        bound = f"from {low:g} to {high:g}" if high is not None else f"of at least {low:g}"
        raise InputError(f"{name} must be a {'whole number' if whole else 'number'} {bound}, got {value!r}")
    return value
_INT32 = (-2**31, 2**31 - 1)


@dataclass(frozen=True)
class CompileOptions:
    """``mcuflow.compile``'s options (its docstring says what each does). Making one checks it:
    InputError naming the first bad option. ``percentile`` becomes the percentile the compiler
    uses; ``regions`` and ``copy_weights`` are the memory plan's regions and whether weights
    belong in fast memory."""

    target: str = "cortex-m55"
    precision: str = "int8"
    weights: str = "int8"
    io: str = "float32"
    observer: str | None = None  # default_observer(precision)
    percentile: float | None = None
    bias_correction: bool | None = None  # None: the layers with int4 weights
    fallback: str = "float"
    schedule: bool = True
    in_place: bool = True
    memory: Any = None
    patches: int = 1
    stream_input: bool = False
    # Budgets of precision / weights "mixed" (mixed.Budgets): accuracy on the calibration data
    # against the float program, arena and device-image bytes.
    min_snr_db: float | None = None
    min_agreement: float | None = None
    max_arena_bytes: int | None = None
    max_flash_bytes: int | None = None
    regions: list = field(init=False, default_factory=list)
    copy_weights: bool = field(init=False, default=False)

    def __post_init__(self):
        given = self.percentile
        in_range = (given is not None and not isinstance(given, bool) and isinstance(given, numbers.Real)
                    and 50 < given <= 100)
        # What the compiler checks, revealed to it option by option in the order mcuflow has always
        # named the first bad one; the options not yet revealed stand at their defaults.
        shown = dict(target=self.target, precision=str(self.precision), io=str(self.io), fallback="float", patches=1,
                     stream_input=False, observer="minmax", percentile=DEFAULT_PERCENTILE)

        def compiler_check(**revealed):
            shown.update(revealed)
            try:
                _core.check_options(**shown)
            except _core.CompileError as e:
                raise InputError(str(e)) from None

        if not isinstance(self.target, str):
            raise InputError(f"target is a name such as 'cortex-m55', got {type(self.target).__name__}")
        if self.precision == "mixed" and self.weights == "int4":
            raise InputError("weights 'int4' apply to int8 layers; precision 'mixed' takes weights 'int8' or 'mixed'")
        shown["precision"] = _CHECKED_AS["precision"] if self.precision == "mixed" else self.precision
        compiler_check()
        # int4 weights take int8 activations: beside int16 layers a layer's weights are checked as int8.
        compiler_check(weights=_CHECKED_AS["weights"] if self.weights == "mixed" and self.precision != "mixed"
                       else "int8" if self.weights == "mixed" else str(self.weights))
        regions, copy_weights = memory_regions(self.memory)
        if isinstance(self.patches, bool) or not isinstance(self.patches, int):
            raise InputError(f"patches must be a whole number from 1 to 64, got {self.patches!r}")
        compiler_check(patches=min(max(self.patches, _INT32[0]), _INT32[1]))
        compiler_check(fallback=str(self.fallback))
        if self.bias_correction is not None and not isinstance(self.bias_correction, bool):
            raise InputError(f"bias_correction must be True, False or None, got {self.bias_correction!r}")
        if self.bias_correction and self.precision == "fp32":
            raise InputError("bias_correction applies to quantized programs; precision 'fp32' keeps float weights")
        if not isinstance(self.stream_input, bool):
            raise InputError(f"stream_input must be True or False, got {self.stream_input!r}")
        compiler_check(stream_input=self.stream_input)
        if self.observer is None:
            object.__setattr__(self, "observer", default_observer(str(self.precision)))
        if self.precision == "mixed":  # its int8 layers take any observer, its int16 ones every value's range
            shown["precision"] = "int8"
        compiler_check(observer=str(self.observer), percentile=float(given) if in_range else DEFAULT_PERCENTILE)
        if given is not None and self.observer != "percentile":
            raise InputError(f"percentile applies to observer 'percentile' only (observer is {self.observer!r})")
        # The compiler's range check, worded as it is, but naming the value as the caller wrote it
        # (101 from the API, 101.0 from the CLI), which the compiler's double cannot.
        if given is not None and not in_range:
            raise InputError(f"percentile must be a number above 50 and at most 100, got {given!r}")
        object.__setattr__(self, "percentile", float(given) if in_range else DEFAULT_PERCENTILE)
        mixed = "mixed" in (self.precision, self.weights)
        budgets = dict(min_snr_db=_budget("min_snr_db", self.min_snr_db, False, -math.inf, math.inf),
                       min_agreement=_budget("min_agreement", self.min_agreement, False, 0, 1),
                       max_arena_bytes=_budget("max_arena_bytes", self.max_arena_bytes, True, 0),
                       max_flash_bytes=_budget("max_flash_bytes", self.max_flash_bytes, True, 0))
        given_budgets = [name for name, value in budgets.items() if value is not None]
        if given_budgets and not mixed:
            raise InputError(f"{given_budgets[0]} is a budget of the per-layer choice: it needs precision or "
                             "weights 'mixed'")
        if mixed and budgets["min_snr_db"] is None and budgets["min_agreement"] is None:
            raise InputError("precision and weights 'mixed' choose each layer against an accuracy budget: "
                             "give min_snr_db or min_agreement")
        object.__setattr__(self, "regions", regions)
        object.__setattr__(self, "copy_weights", copy_weights)
