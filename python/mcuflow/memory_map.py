"""Where a program lives on a board: the RAM regions a plan may use (``mcuflow.compile(memory=...)``),
the board region holding each region of a plan, and the region holding the program itself.

Programs are read through what ``api.Program`` exposes (``device_image``, ``region_bytes``,
``metadata``); nothing here builds or runs firmware.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .boards import KiB, board_named
from .errors import DeviceError, InputError

__all__ = ["CODE_RESERVE", "STATIC_RAM_RESERVE", "memory_regions", "weights_leave_fast_memory", "arena_regions",
           "program_region"]

# .data/.bss of the runtime, harness and libc share the RAM region that holds the stack: a plan
# for a board leaves them this much (they measure under 4 KiB on every board).
STATIC_RAM_RESERVE = 8 * KiB
# The code region keeps this much beside the program for runtime, kernels, harness and libc (they
# measure under 32 KiB on every board, bench/zoo); a larger program goes to the board's fallback.
CODE_RESERVE = 64 * KiB


def memory_regions(memory) -> tuple[list[tuple[str, int, bool]], bool]:
    """What ``mcuflow.compile(memory=...)`` plans into: the RAM regions as (name, bytes the plan
    may use, fast), fastest first, and whether weights belong in fast RAM (the program's
    constants sit in slow memory). ``memory`` is a board name or board file (its regions; the
    region with the stack and static data keeps room for them), a memory-map JSON file, or such
    a map: ``{"regions": [{"name": "DTCM", "bytes": 131072, "fast": true}, {"name": "SRAM",
    "bytes": 1048576}], "weights_in_slow_memory": true}``."""
    if memory is None:
        return [], False
    board = _board_of(memory)
    if board is not None:
        rams = sorted((r for r in board.regions if r.kind == "ram" and r.arena_section), key=lambda r: not r.fast)
        reserve = board.default_stack_size + STATIC_RAM_RESERVE
        regions = [(r.name, r.size - (reserve if r.name == board.ram_region else 0), r.fast) for r in rams]
        return regions, any(r.fast for r in rams) and not board.region(board.code_region).fast
    if isinstance(memory, (str, os.PathLike)):
        memory = _read_json(memory)
    entries = memory.get("regions") if isinstance(memory, dict) else None
    if not isinstance(entries, list) or not 1 <= len(entries) <= 4:
        raise InputError('a memory map is {"regions": [{"name": "...", "bytes": N, "fast": true|false}, ...]} '
                         "with 1 to 4 regions")
    regions = []
    for r in entries:
        name, size, fast = (r.get("name"), r.get("bytes"), r.get("fast", False)) if isinstance(r, dict) else (None,) * 3
        if not isinstance(name, str) or not name or name in [n for n, _, _ in regions]:
            raise InputError(f"memory map region {r!r}: needs a unique, non-empty name")
        if not isinstance(size, int) or isinstance(size, bool) or not 16 <= size < 2**32:
            raise InputError(f"memory map region {name}: bytes must be a whole number from 16 to 2**32-1")
        if not isinstance(fast, bool):
            raise InputError(f"memory map region {name}: fast must be true or false")
        regions.append((name, size, fast))
    return sorted(regions, key=lambda r: not r[2]), bool(memory.get("weights_in_slow_memory", False))


def _read_json(path):
    try:
        return json.loads(Path(path).read_text())
    except OSError as e:
        raise InputError(f"cannot read memory map {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"memory map {path} is not JSON: {e}") from None


def _board_of(memory):
    """The board `memory` names: a board's name or a board file (a JSON file with a
    "code_region", where a memory map has none); None for a memory map."""
    if isinstance(memory, (str, os.PathLike)) and str(memory).endswith(".json"):
        loaded = _read_json(memory)
        return board_named(memory) if isinstance(loaded, dict) and "code_region" in loaded else None
    return board_named(memory) if isinstance(memory, str) else None


def weights_leave_fast_memory(program, memory, regions) -> bool:
    """Whether a program planned for board `memory` (a board name or file; `regions` from
    memory_regions(memory)) does not fit the board's fast code memory and goes to slow memory
    (program_region) while a fast RAM region is planned: then its costliest weights belong in
    fast RAM, as on a board whose code memory is slow."""
    board = _board_of(memory) if memory is not None else None
    return (board is not None and any(fast for _, _, fast in regions)
            and not program_region(program, board).fast)


def arena_regions(program, board) -> list:
    """The board region holding each memory region of the program's plan."""
    names = [r["name"] for r in program.metadata.get("plan", {}).get("regions", [])] or ["arena"]
    if len(names) != len(program.region_bytes):  # the names live in the metadata only
        raise DeviceError(f"{board.name}: the program plans {len(program.region_bytes)} memory regions and carries "
                          "no metadata naming them: build from the .mfp file with its metadata")
    regions = []
    for name in names:
        try:
            region = board.arena if name == "arena" else board.region(name)
        except KeyError:
            raise DeviceError(f"{board.name}: the program is planned for a memory region {name!r} the board lacks "
                              f"(compile with memory='{board.name}')") from None
        if not region.arena_section:
            raise DeviceError(f"{board.name}: region {name} cannot hold an arena")
        regions.append(region)
    return regions


def program_region(program, board):
    """The board region that holds the program: its code region, or else the first region of
    `board.program_fallback` with room for it (beside any arena planned there); when none has
    room, the code region, whose overflow the linker reports."""
    size = len(program.device_image)
    code = board.region(board.code_region)
    if size + CODE_RESERVE <= code.size:
        return code
    arenas = dict(zip((r.name for r in arena_regions(program, board)), program.region_bytes))
    for region in map(board.region, board.program_fallback):
        stack = board.default_stack_size if region.name == board.ram_region else 0
        if size + arenas.get(region.name, 0) + stack <= region.size:
            return region
    return code
