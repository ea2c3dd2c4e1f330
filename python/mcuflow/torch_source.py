"""The torch front end, part 1 of 3: the model source line an exported ATen node came from.

Every op the front end sends carries ``"path:line: code"`` of the user's own model line, taken
from the node's ``stack_trace``, so errors from any layer can name where the model does it.
"""

from __future__ import annotations

import os
import re

import torch

__all__ = ["node_source"]

_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+)(?:, in .*)?$')
_CARET_RE = re.compile(r"^[\s^~]*$")
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_MCUFLOW_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_ZOO_DIR = _MCUFLOW_DIR + "zoo" + os.sep  # the zoo's models are model code like the user's


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
    """2: the user's own code (or a zoo model), 1: some other installed library, 0: torch or mcuflow itself."""
    full = os.path.abspath(path) if not path.startswith("<") else path
    if full.startswith(_ZOO_DIR):
        return 2
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
