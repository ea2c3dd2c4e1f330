"""The metadata section of a program (tools read it, the device never does), read as untrusted
bytes: UTF-8, JSON, and the shape the compiler writes (compiler/src/serializer.cpp metadata_json,
the planner's, scheduler's and calibration's reports), checked against the program's own records.

The program's CRC covers the section, but a writer bug or a deliberate edit can recompute it:
whatever the bytes, reading a program ends in its metadata or in one InputError naming the
field, never in another exception later in a tool. Fields this schema does not name are kept
and ignored (newer writers may add them); a field a tool reads belongs in the schema.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from .errors import InputError

NUMBER = (int, float)

# A schema is a type (or tuple of types), [item schema] for a list, or {key: schema} for an object;
# a key ending in "?" is optional, "*" types every key of a string-to-value map.
_TENSOR = {"name": str, "shape": [int], "alias_of": int, "ir": int, "in_place_of?": int, "region?": int, "state?": bool,
           "first_op?": int, "last_op?": int}
_OP = {"kernel": str, "kind": str, "source": str, "reason": str, "fallback": str, "macs": int, "weights?": str}
_SCHEDULE = {"method": str, "states": int, "exported_peak": int, "peak": int, "reordered": bool}
_PLAN = {
    "arena": int, "lower_bound": int, "lower_bound_without_in_place": int, "lower_bound_all_in_place": int,
    "peak_op": int, "peak_tensors": [str], "alignment_padding": int, "method": str, "optimal": bool,
    "search_nodes": int,
    "in_place": [{"op": int, "input": str, "output": str, "shift": int}],
    "embedded": [{"op": int, "part": int, "host": int, "offset": int}],
    "regions": [{"name": str, "bytes": int, "activations": int, "fast": bool, "capacity?": int}],
    "spilled": [{"tensor": str, "to": str, "accesses_per_byte": NUMBER}],
    "copied_weights": [{"tensor": str, "region": str, "bytes": int, "macs_per_byte": NUMBER}],
    "excess": [str],
}
_QUANTIZATION = {"observer": str, "percentile?": NUMBER, "bins?": int,
                 "narrowed?": [{"tensor": str, "observed": [NUMBER], "range": [NUMBER]}], "warnings?": [str],
                 "bias_corrected?": [str]}
SCHEMA = {"target": str, "tier": str, "precision": str, "source?": {"*": str}, "tensors": [_TENSOR], "ops": [_OP],
          "schedule?": _SCHEDULE, "plan?": _PLAN, "quantization?": _QUANTIZATION}

_METADATA_FIELDS = struct.Struct("<II")  # format.h Header.metadata_offset, metadata_bytes
_METADATA_FIELDS_AT = 56


class _Mismatch(Exception):
    pass


def _check(value: Any, schema: Any, where: str) -> None:
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise _Mismatch(f"{where} is not an object")
        for key, item in schema.items():
            if key == "*":
                for k, v in value.items():
                    _check(v, item, f"{where}.{k}")
                continue
            name = key.rstrip("?")
            if name in value:
                _check(value[name], item, f"{where}.{name}")
            elif not key.endswith("?"):
                raise _Mismatch(f"{where} lacks {name!r}")
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise _Mismatch(f"{where} is not a list")
        for i, v in enumerate(value):
            _check(v, schema[0], f"{where}[{i}]")
    elif isinstance(value, bool) and schema is not bool:  # JSON true is no number
        raise _Mismatch(f"{where} is a boolean")
    elif not isinstance(value, schema):
        raise _Mismatch(f"{where} is a {type(value).__name__}")


def _check_narrowed_ranges(metadata: dict) -> None:
    for i, n in enumerate(metadata.get("quantization", {}).get("narrowed", [])):
        if len(n["observed"]) != 2 or len(n["range"]) != 2:
            raise _Mismatch(f"quantization.narrowed[{i}] holds no [lo, hi] pair")


def _check_against_records(metadata: dict, tensor_count: int, op_count: int) -> None:
    tensors, ops = metadata["tensors"], metadata["ops"]
    if len(tensors) != tensor_count or len(ops) != op_count:
        raise _Mismatch(f"it describes {len(tensors)} tensors and {len(ops)} ops, the program holds "
                        f"{tensor_count} and {op_count}")
    for i, t in enumerate(tensors):  # a lifetime may end after the last op (a program output)
        if not -1 <= t["alias_of"] < tensor_count or not -1 <= t.get("in_place_of", -1) < tensor_count:
            raise _Mismatch(f"tensors[{i}] names a tensor the program lacks")
        if any(not -1 <= t.get(k, -1) <= op_count for k in ("first_op", "last_op")) or any(d < 0 for d in t["shape"]):
            raise _Mismatch(f"tensors[{i}] has an op index or a dim out of range")
        if ("first_op" in t) != ("last_op" in t):
            raise _Mismatch(f"tensors[{i}] has half a lifetime")


def section(data: bytes) -> bytes:
    """The metadata section's bytes (empty in a device image), where the header places them."""
    try:
        offset, size = _METADATA_FIELDS.unpack_from(data, _METADATA_FIELDS_AT)
    except struct.error:
        raise InputError("corrupt program: its header is truncated") from None
    if offset + size > len(data):
        raise InputError("corrupt program: the metadata section lies beyond the end of the file")
    return bytes(data[offset:offset + size])


def parse(data: bytes, tensor_count: int | None = None, op_count: int | None = None) -> dict:
    """The metadata of the program `data` ({} for a device image), checked against the schema and,
    given the program's tensor and op counts, against its records. Anything else: InputError."""
    raw = section(data)
    if not raw:
        return {}
    try:
        metadata = json.loads(raw.decode("utf-8"))
        _check(metadata, SCHEMA, "metadata")
        _check_narrowed_ranges(metadata)
        if tensor_count is not None:
            _check_against_records(metadata, tensor_count, op_count)
    except UnicodeDecodeError as e:
        raise InputError(f"corrupt program: metadata section: byte {e.start} is not UTF-8") from None
    except json.JSONDecodeError as e:
        raise InputError(f"corrupt program: metadata section: not JSON ({e.msg} at byte {e.pos})") from None
    except RecursionError:
        raise InputError("corrupt program: metadata section: nested too deeply") from None
    except _Mismatch as e:
        raise InputError(f"corrupt program: metadata section: {e}") from None
    return metadata


def readable(data: bytes) -> dict:
    """The metadata of a program that may have failed verification, or {} where it is unreadable
    (for naming the failing record in an error, best effort)."""
    try:
        return parse(data)
    except InputError:
        return {}
