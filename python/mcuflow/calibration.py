"""Calibration data: normalize what the user gives into per-sample float32 input tuples.

``normalize_calibration(data, inputs)`` returns ``[(x0, x1, ...), ...]``: one tuple per sample,
one C-contiguous float32 numpy array per model input, each shaped exactly like the exported
input (``inputs`` is the ExportedProgram, or its ``[(name, shape), ...]`` / ``[shape, ...]``).

Accepted forms of ``data``:

* an iterable (list, generator, DataLoader ...) of samples, each a tuple/list with one
  tensor/array per input — or, for a single-input model, a bare tensor/array;
* a dict (or ``numpy.load``-ed ``.npz``, or the path of one) with one array per input — by
  input name (``inputs.arrays_by_input_name``: in file order only when the arrays carry no names,
  as ``np.savez(path, x, y)`` saves them; a missing, extra or unknown name is an error) — each
  with a leading batch dimension;
* a single tensor/array with a leading batch dimension, for a single-input model.

Arrays with a leading batch dimension (``[N·b, ...rest]`` where the exported input is
``[b, ...rest]``, normally ``b == 1``; or ``[N, b, ...rest]``) are split into N samples of the
exported batch size. Every problem raises ``CalibrationError`` with a one-line message that names
the input and the sample index.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Sequence

import numpy as np

from .inputs import arrays_by_input_name
from .errors import CalibrationError

__all__ = ["normalize_calibration", "normalize", "input_signature"]


def input_signature(inputs) -> list[tuple[str, tuple[int, ...]]]:
    """``[(name, shape), ...]`` from an ExportedProgram, ``[(name, shape)]`` or ``[shape]``."""
    if hasattr(inputs, "graph_signature") and hasattr(inputs, "graph_module"):
        from .frontend import user_inputs  # imports torch; only needed for an ExportedProgram

        return [(n, tuple(s)) for n, s in user_inputs(inputs)]
    out = []
    for i, item in enumerate(inputs):
        if (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str)):
            name, shape = item
        else:
            name, shape = f"input{i}", item
        out.append((str(name), tuple(int(d) for d in shape)))
    return out


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def _is_arraylike(x) -> bool:
    """A single tensor or array (not a sample tuple)."""
    if isinstance(x, np.ndarray):
        return True
    mod = type(x).__module__ or ""
    return mod.startswith("torch") and hasattr(x, "detach") and hasattr(x, "shape")


def _to_numpy(x, where: str) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch.Tensor
        t = x.detach().cpu()
        if getattr(t, "dtype", None) is not None and str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy()
    if np.isscalar(x) or isinstance(x, (list, tuple)):
        try:
            return np.asarray(x)
        except Exception as e:  # ragged lists
            raise CalibrationError(f"calibration {where}: cannot convert {type(x).__name__} to an array ({e})") from None
    raise CalibrationError(f"calibration {where}: expected a tensor or array, got {type(x).__name__}")


# Ids travel with the float32 samples; below 2^24 every one is exact in float32.
_MAX_ID = 1 << 24


def _check_dtype(arr: np.ndarray, where: str, ids: bool) -> np.ndarray:
    if ids:
        if not np.issubdtype(arr.dtype, np.integer):
            raise CalibrationError(f"calibration {where}: dtype {arr.dtype}; this input takes integer ids")
        if arr.size and (arr.min() <= -_MAX_ID or arr.max() >= _MAX_ID):
            raise CalibrationError(f"calibration {where}: ids beyond ±2^24")
        return arr
    if not np.issubdtype(arr.dtype, np.floating):
        raise CalibrationError(
            f"calibration {where}: non-float dtype {arr.dtype}; give float32 data (as the model sees it)")
    return arr


def _split(arr: np.ndarray, shape: tuple[int, ...], name: str, where: str) -> list[np.ndarray]:
    """Split an array holding one or more samples of ``shape`` into samples."""
    shape = tuple(shape)
    if arr.shape == shape:
        return [arr]
    rank = len(shape)
    # [N, b, ...rest]: a stack of exported-shape samples
    if arr.ndim == rank + 1 and tuple(arr.shape[1:]) == shape:
        return [arr[i] for i in range(arr.shape[0])]
    # [N*b, ...rest]: a batch to cut into exported-batch-size samples
    if rank >= 1 and arr.ndim == rank and tuple(arr.shape[1:]) == shape[1:]:
        b = shape[0]
        if arr.shape[0] == 0:
            return []
        if b > 0 and arr.shape[0] % b == 0:
            return [arr[i:i + b] for i in range(0, arr.shape[0], b)]
        raise CalibrationError(
            f"calibration input {name} ({where}): expected shape {_shape_str(shape)} or a batch of it, "
            f"got {_shape_str(arr.shape)} ({arr.shape[0]} rows is not a multiple of the exported batch size {b})")
    # one sample without its batch dimension of 1
    if rank >= 1 and shape[0] == 1 and tuple(arr.shape) == shape[1:]:
        return [arr.reshape(shape)]
    raise CalibrationError(
        f"calibration input {name} ({where}): expected shape {_shape_str(shape)} (or a batch of it), "
        f"got {_shape_str(arr.shape)}")


def _finite(arr: np.ndarray, name: str, index: int) -> None:
    if not np.all(np.isfinite(arr)):
        what = "NaN" if np.isnan(arr).any() else "Inf"
        raise CalibrationError(f"calibration input {name} (sample {index}) contains {what}")


def _expand_group(arrays: Sequence[Any], sig, where: str, start: int, ids: Collection[str]) -> list[tuple[np.ndarray, ...]]:
    """One item (one array per input, possibly batched) → samples."""
    names = [n for n, _ in sig]
    if len(arrays) != len(sig):
        raise CalibrationError(
            f"calibration {where} has {len(arrays)} input{'s' if len(arrays) != 1 else ''}, "
            f"the model takes {len(sig)} ({', '.join(names)})")
    per_input = []
    for (name, shape), a in zip(sig, arrays):
        arr = _check_dtype(_to_numpy(a, f"input {name} ({where})"), f"input {name} ({where})", name in ids)
        per_input.append(_split(arr, shape, name, where))
    counts = {len(p) for p in per_input}
    if len(counts) != 1:
        detail = ", ".join(f"{n} has {len(p)}" for n, p in zip(names, per_input))
        raise CalibrationError(f"calibration {where}: inputs hold different numbers of samples ({detail})")
    samples = []
    for k in range(len(per_input[0])):
        sample = []
        for (name, shape), p in zip(sig, per_input):
            arr = np.ascontiguousarray(p[k], dtype=np.float32).reshape(shape)
            _finite(arr, name, start + k)
            sample.append(arr)
        samples.append(tuple(sample))
    return samples


def _from_mapping(data: Mapping, sig, ids: Collection[str]) -> list[tuple[np.ndarray, ...]]:
    arrays = arrays_by_input_name(data, [n for n, _ in sig], "calibration data", CalibrationError)
    return _expand_group(arrays, sig, "arrays", 0, ids)


def normalize_calibration(data, inputs, ids: Collection[str] = ()) -> list[tuple[np.ndarray, ...]]:
    """Normalize ``data`` into a list of per-sample tuples of float32 arrays (see module doc);
    the inputs named in ``ids`` take integer arrays (sent as float32, exact)."""
    sig = input_signature(inputs)
    if not sig:
        raise CalibrationError("the model has no tensor inputs to calibrate")
    if data is None:
        raise CalibrationError("calibration data is missing: give at least one sample")
    if isinstance(data, (str, os.PathLike)):
        path = os.fspath(data)
        try:
            loaded = np.load(path, allow_pickle=False)
        except Exception as e:
            raise CalibrationError(f"cannot read calibration data {path}: {e}") from None
        if isinstance(loaded, np.ndarray):
            data = loaded
        else:
            with loaded:
                data = {k: loaded[k] for k in loaded.files}
    if isinstance(data, Mapping) or hasattr(data, "files") and hasattr(data, "__getitem__"):
        if hasattr(data, "files") and not isinstance(data, Mapping):  # NpzFile
            data = {k: data[k] for k in data.files}
        samples = _from_mapping(data, sig, ids)
    elif _is_arraylike(data):
        if len(sig) != 1:
            raise CalibrationError(
                f"calibration data is one array, the model takes {len(sig)} inputs "
                f"({', '.join(n for n, _ in sig)}); give a dict or tuples")
        samples = _expand_group([data], sig, "array", 0, ids)
    elif isinstance(data, Iterable):
        samples = []
        for i, item in enumerate(data):
            where = f"sample {i}" if len(samples) == i else f"item {i} (sample {len(samples)})"
            if _is_arraylike(item):
                group = [item]
            elif isinstance(item, (tuple, list)):
                group = list(item)
            elif isinstance(item, Mapping):
                names = [n for n, _ in sig]
                if set(item.keys()) != set(names):
                    raise CalibrationError(
                        f"calibration item {i} has keys {', '.join(map(str, item.keys()))}, "
                        f"the model takes {', '.join(names)}")
                group = [item[n] for n in names]
            else:
                raise CalibrationError(
                    f"calibration item {i}: expected a tensor, an array or a tuple of them, got {type(item).__name__}")
            samples.extend(_expand_group(group, sig, where, len(samples), ids))
    else:
        raise CalibrationError(
            f"calibration data of type {type(data).__name__} is not supported: give an iterable of "
            f"samples, a dict of arrays or an .npz file")
    if not samples:
        raise CalibrationError("calibration data is empty: give at least one sample")
    return samples


normalize = normalize_calibration
