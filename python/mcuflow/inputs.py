"""What the user hands mcuflow: arrays from .npy / .npz files, exported programs from .pt2 files,
and the matching of named arrays to a model's inputs. Every failure is one InputError line
(or the caller's error type) naming the file or the name that is wrong."""

from __future__ import annotations

import hashlib
import re
import zipfile
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import InputError, McuflowError

__all__ = ["arrays_by_input_name", "load_arrays", "load_array", "load_exported", "file_sha256"]

_POSITIONAL_NAME = re.compile(r"arr_[0-9]+")  # what np.savez(path, x, y) calls unnamed arrays


def arrays_by_input_name(arrays: Mapping[str, Any], names: Sequence[str | None], what: str,
                         error: type[McuflowError] = InputError) -> list:
    """The values of ``arrays`` in input order: by name when its keys are the inputs' ``names``
    (in any order); in file order when the arrays carry no names (numpy's arr_0, arr_1, ...) or
    the program lacks them (None); a single array for a single input. Anything else — a missing,
    extra or unknown name — raises ``error`` with one line naming it."""
    keys = [str(k) for k in arrays]
    values = list(arrays.values())
    if set(keys) == set(names) and len(keys) == len(names):
        return [arrays[n] for n in names]
    unnamed = all(_POSITIONAL_NAME.fullmatch(k) for k in keys) or None in names
    if len(keys) == len(names) and (unnamed or len(keys) == 1):
        return values
    listed = (f"{what} has {len(keys)} array{'s' if len(keys) != 1 else ''} ({', '.join(keys) or 'none'}), "
              f"the model takes {len(names)} input{'s' if len(names) != 1 else ''} ({', '.join(map(str, names))})")
    if unnamed:
        raise error(listed)
    missing = [str(n) for n in names if n not in keys]
    unknown = [k for k in keys if k not in names]
    detail = "; ".join(part for part in (f"no array named {', '.join(missing)}" if missing else "",
                                         f"{', '.join(unknown)} name{'s' if len(unknown) == 1 else ''} no input"
                                         if unknown else "") if part)
    raise error(f"{listed}: {detail}")


def load_arrays(path: str, what: str) -> np.ndarray | dict[str, np.ndarray]:
    """The array of an .npy file, or the arrays of an .npz file by name (one per input: matched
    to the model's input names, arrays_by_input_name)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{what} file {path} does not exist")
    try:
        if p.suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            if not arrays:
                raise InputError(f"{what} file {path} holds no arrays")
            return arrays
        return np.load(p, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as e:
        raise InputError(f"cannot read {what} file {path}: {e}") from None


def load_array(path: str, what: str) -> np.ndarray:
    """The one array of an .npy file (or of an .npz file holding one)."""
    arrays = load_arrays(path, what)
    if isinstance(arrays, dict):
        if len(arrays) != 1:
            raise InputError(f"{what} file {path} holds {len(arrays)} arrays ({', '.join(arrays)}); give one")
        (arrays,) = arrays.values()
    return arrays


def load_exported(path: str):
    import logging

    import torch

    if not Path(path).is_file():
        raise InputError(f"model file {path} does not exist")
    # torch logs a traceback as a warning before raising; the one-line error below says it all.
    logging.getLogger("torch.export").setLevel(logging.CRITICAL)
    try:
        return torch.export.load(path)
    except Exception as e:  # torch raises many types for a file that is not a .pt2 archive
        raise InputError(f"cannot load {path} as a torch.export program (.pt2 written by torch.export.save): "
                         f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
