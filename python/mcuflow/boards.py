"""The boards mcuflow builds firmware for.

Each board is a board file, ``firmware/boards/<name>/board.json`` (:mod:`mcuflow.boardfile`
reads and checks it): the core and gcc CPU flags, the QEMU machine, the memory regions (the
MEMORY regions of the linker script generated from the same file), which region holds the
tensor arena by default, the console, the timer behind ``board_counter()`` and the ``-icount
shift`` that makes that counter count instructions exactly. :data:`BOARDS` holds the built-in
boards; :func:`get_board` also takes the path of a user's board file (``--board my.json``).

Counting: with ``-icount shift=K`` QEMU advances virtual time by 2**K ns per
guest instruction. The board timer ticks every ``tick_ns`` ns (``tick_ns <=
2**K``, so every instruction moves it), and the firmware converts ticks to
instructions exactly (``firmware/common/mcuflow_internal.h``). Figures measured
this way are "instructions (QEMU)", never cycles.

This module imports nothing beyond the standard library and ``mcuflow.errors``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .boardfile import BoardFileError, MemoryRegion, board_file, load
from .errors import InputError

__all__ = [
    "MemoryRegion",
    "Board",
    "BOARDS",
    "UnknownBoardError",
    "get_board",
    "board_named",
    "board_cmake",
    "board_names",
    "board_from_file",
    "board_summary",
]

KiB = 1024


@dataclass(frozen=True)
class Board:
    name: str
    qemu_machine: Optional[str]  # None: no emulator runs this board (pico2)
    core: str  # "cortex-m4" etc.
    arch: str  # "armv7e-m" etc.
    cpu_flags: Tuple[str, ...]  # gcc flags selecting CPU, FPU, float ABI
    regions: Tuple[MemoryRegion, ...]
    code_region: str  # holds .text/.rodata and the .data load image
    ram_region: str  # holds .stack/.data/.bss
    arena_region: str  # holds .mcuflow_arena by default
    timer: str  # the peripheral behind board_counter()
    timer_base: int
    timer_clock_hz: Optional[int]  # the timer's input clock on this QEMU machine (None: not set, pico2)
    tick_hz: Optional[int]  # counting rate after any prescaler
    icount_shift: Optional[int]  # QEMU -icount shift=K
    has_fpu: bool
    has_dsp: bool
    has_mve: bool
    tier: str  # kernel tier: "scalar", "dsp" or "mve"
    default_stack_size: int
    secure: bool = False  # runs in the Secure state (Armv8-M TrustZone)
    notes: str = ""
    qemu_cpu: Optional[str] = None  # -cpu, when not the machine's default
    # regions that take the program when it does not fit the code region, in order of preference
    program_fallback: Tuple[str, ...] = ()
    # how console and host files travel: "semihosting", or "uart" (the framed protocol of
    # firmware/common/uart_io.c, python/mcuflow/uart.py) on QEMU's first serial port
    console: str = "semihosting"
    uf2_family: Optional[str] = None  # firmware also as a .uf2 of this family (mcuflow.uf2)
    board_file: str = ""  # the board file this board was read from
    support_source: str = ""  # its board.c: board_init, board_counter, the console transport

    @property
    def mcpu(self) -> str:
        for flag in self.cpu_flags:
            if flag.startswith("-mcpu="):
                return flag.split("=", 1)[1]
        for flag in self.cpu_flags:
            if flag.startswith("-march="):
                return flag.split("=", 1)[1]
        return ""

    @property
    def tick_ns(self) -> float:
        return 1e9 / self.tick_hz

    @property
    def emulated(self) -> bool:
        return self.qemu_machine is not None

    @property
    def ns_per_instruction(self) -> int:
        return 1 << self.icount_shift

    def region(self, name: str) -> MemoryRegion:
        for r in self.regions:
            if r.name.lower() == name.lower():
                return r
        raise KeyError(
            f"board {self.name!r} has no memory region {name!r}; "
            f"regions: {', '.join(r.name for r in self.regions)}"
        )

    @property
    def ram_regions(self) -> List[MemoryRegion]:
        return [r for r in self.regions if r.kind == "ram"]

    @property
    def arena(self) -> MemoryRegion:
        return self.region(self.arena_region)

    def to_dict(self) -> Dict[str, object]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["cpu_flags"] = list(self.cpu_flags)
        d["regions"] = [
            {k: getattr(r, k) for k in r.__dataclass_fields__} for r in self.regions
        ]
        d["mcpu"] = self.mcpu
        return d


def board_from_file(path) -> Board:
    """The board a board file describes (BoardFileError: one line naming the file and the problem)."""
    layout = load(path)
    if layout.facts is None:
        raise BoardFileError(f"board file {path}: missing \"core\" (a board file names its core, cpu_flags, "
                             f"qemu, console and timer)")
    return Board(name=layout.name, regions=layout.regions, code_region=layout.code_region,
                 ram_region=layout.ram_region, arena_region=layout.arena_region,
                 default_stack_size=layout.stack_size, **layout.facts)


# The built-in boards, in the order they are listed.
BUILT_IN = ("qemu-m0", "qemu-m3", "qemu-m4", "qemu-m7", "qemu-m33", "qemu-m55", "stm32f405", "pico2")
_BOARD_LIST = [board_from_file(board_file(name)) for name in BUILT_IN]
BOARDS: Dict[str, Board] = {b.name: b for b in _BOARD_LIST}
# Boards read from a user's board file in this process, by name, so that code handed the name
# of such a board (build records, the harness runner) finds it as it finds a built-in one.
_USER_BOARDS: Dict[str, Board] = {}


class UnknownBoardError(KeyError):
    """Raised for a board name that is not in :data:`BOARDS`."""

    def __init__(self, name: str):
        self.name = name
        msg = (f"unknown board {name!r}; known boards: {', '.join(board_names())}, "
               f"or the path of a board file (NAME.json)")
        super().__init__(msg)
        self.message = msg

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return self.message


def board_names() -> List[str]:
    return list(BOARDS)


def is_board_file(name) -> bool:
    return isinstance(name, (str, os.PathLike)) and str(name).endswith(".json")


def get_board(name) -> Board:
    """Look a board up by name, or read it from a board file when `name` is a path ending in
    .json (a :class:`Board` is returned as is)."""
    if isinstance(name, Board):
        return name
    if is_board_file(name):
        board = board_from_file(name)
        if board.name in BOARDS:
            raise BoardFileError(f"board file {name}: \"name\" {board.name!r} is a built-in board's; "
                                 f"give the board its own name")
        _USER_BOARDS[board.name] = board
        return board
    try:
        return BOARDS[name] if name in BOARDS else _USER_BOARDS[name]
    except (KeyError, TypeError):
        raise UnknownBoardError(str(name)) from None


def board_named(name) -> Board:
    """The board a user named (or gave a board file of): :func:`get_board`, with an unknown name
    or a bad board file an InputError."""
    try:
        return get_board(name)
    except (UnknownBoardError, BoardFileError) as e:
        raise InputError(str(e)) from None


def board_summary(board: Board) -> Dict[str, object]:
    """What `mcuflow boards` lists of a board."""
    return {"name": board.name, "core": board.core, "tier": board.tier, "console": board.console,
            "emulator": board.qemu_machine,
            "regions": [{"name": r.name, "base": r.base, "size": r.size, "kind": r.kind, "fast": r.fast,
                         "arena": r.arena_section is not None} for r in board.regions],
            "code_region": board.code_region, "ram_region": board.ram_region, "arena_region": board.arena_region,
            "board_file": board.board_file}


def board_cmake(board: Board) -> str:
    """firmware/boards/<name>/board.cmake, the board for CMake projects, generated from its board
    file (tests/firmware/test_firmware_boards.py checks the files are this text); the linker
    script mcuflow_add_firmware() generates from board.json itself."""
    emulator = f"QEMU {board.qemu_machine}" if board.qemu_machine else "no emulator"
    lines = [f"# Board {board.name}: {emulator} ({board.core}). Included by mcuflow_add_firmware().",
             "# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.",
             f"set(MCUFLOW_BOARD_CPU_FLAGS {' '.join(board.cpu_flags)})"]
    if board.qemu_machine:
        lines += [f"set(MCUFLOW_BOARD_QEMU_MACHINE {board.qemu_machine})",
                  f"set(MCUFLOW_BOARD_ICOUNT_SHIFT {board.icount_shift})"]
    if board.console == "uart":
        lines += ["# Console and host files over the UART (firmware/common/uart_io.c), no semihosting.",
                  "set(MCUFLOW_BOARD_CONSOLE uart)"]
    return "\n".join(lines) + "\n"
