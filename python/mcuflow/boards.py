"""The emulated boards mcuflow builds firmware for.

One table, :data:`BOARDS`, describes each board: the QEMU machine, the gcc CPU
flags, the memory regions (the same names as the MEMORY regions of
``firmware/boards/<name>/link.ld``), which region holds the tensor arena by
default, the timer behind ``board_counter()`` and the ``-icount shift`` that
makes that counter count instructions exactly.

Counting: with ``-icount shift=K`` QEMU advances virtual time by 2**K ns per
guest instruction. The board timer ticks every ``tick_ns`` ns (``tick_ns <=
2**K``, so every instruction moves it), and the firmware converts ticks to
instructions exactly (``firmware/common/mcuflow_internal.h``). Figures measured
this way are "instructions (QEMU)", never cycles.

A board with a board file (``firmware/boards/<name>/board.json``, :mod:`mcuflow.boardfile`)
takes its memory regions, the regions of code, stack and arena, and its stack size from it.

This module imports nothing beyond the standard library and ``mcuflow.errors``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .boardfile import MemoryRegion, board_file, load
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
]

KiB = 1024
MiB = 1024 * 1024


@dataclass(frozen=True)
class Board:
    name: str
    qemu_machine: str
    core: str  # "cortex-m4" etc.
    arch: str  # "armv7e-m" etc.
    cpu_flags: Tuple[str, ...]  # gcc flags selecting CPU, FPU, float ABI
    regions: Tuple[MemoryRegion, ...]
    code_region: str  # holds .text/.rodata and the .data load image
    ram_region: str  # holds .stack/.data/.bss
    arena_region: str  # holds .mcuflow_arena by default
    timer: str  # the peripheral behind board_counter()
    timer_base: int
    timer_clock_hz: int  # the timer's input clock on this QEMU machine
    tick_hz: int  # counting rate after any prescaler
    icount_shift: int  # QEMU -icount shift=K
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


def _mps2(name: str, machine: str, core: str, arch: str, flags, fpu: bool, dsp: bool,
          tier: str, notes: str) -> Board:
    return Board(
        name=name,
        qemu_machine=machine,
        core=core,
        arch=arch,
        cpu_flags=tuple(flags),
        regions=(
            MemoryRegion("FLASH", 0x00000000, 4 * MiB, "code",
                         note="ZBT SSRAM1, used as code memory"),
            MemoryRegion("RAM", 0x20000000, 4 * MiB, "ram", arena_section=".mcuflow_arena",
                         note="ZBT SSRAM2/3"),
        ),
        code_region="FLASH",
        ram_region="RAM",
        arena_region="RAM",
        timer="CMSDK APB TIMER0 (32-bit down-counter)",
        timer_base=0x40000000,
        timer_clock_hz=25_000_000,
        tick_hz=25_000_000,
        icount_shift=6,
        has_fpu=fpu,
        has_dsp=dsp,
        has_mve=False,
        tier=tier,
        default_stack_size=16 * KiB,
        notes=notes,
    )


def _memory_from_board_file(name: str) -> dict:
    layout = load(board_file(name))
    return dict(name=layout.name, regions=layout.regions, code_region=layout.code_region,
                ram_region=layout.ram_region, arena_region=layout.arena_region,
                default_stack_size=layout.stack_size)


_BOARD_LIST = [
    Board(
        name="qemu-m0",
        qemu_machine="microbit",
        core="cortex-m0",
        arch="armv6-m",
        cpu_flags=("-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"),
        regions=(
            MemoryRegion("FLASH", 0x00000000, 256 * KiB, "code", note="nRF51 flash"),
            MemoryRegion("RAM", 0x20000000, 16 * KiB, "ram", arena_section=".mcuflow_arena",
                         note="nRF51 SRAM"),
        ),
        code_region="FLASH",
        ram_region="RAM",
        arena_region="RAM",
        timer="nRF51 TIMER0, 32-bit mode, PRESCALER=1 (read via TASKS_CAPTURE[0]/CC[0])",
        timer_base=0x40008000,
        timer_clock_hz=16_000_000,
        tick_hz=8_000_000,
        icount_shift=7,
        has_fpu=False,
        has_dsp=False,
        has_mve=False,
        tier="scalar",
        default_stack_size=2 * KiB,
        notes=("16 KiB of RAM only. The nRF51 timer runs at 16 MHz / 2 = 8 MHz: at "
               "16 MHz QEMU's whole-nanosecond resync truncates 62.5 ns ticks and the "
               "count drifts, at 125 ns per tick it is exact, hence shift 7 (128 ns)."),
    ),
    _mps2("qemu-m3", "mps2-an385", "cortex-m3", "armv7-m",
          ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"), fpu=False, dsp=False,
          tier="scalar", notes="SSRAM1 0x0 4 MiB (code), SSRAM2/3 0x20000000 4 MiB."),
    _mps2("qemu-m4", "mps2-an386", "cortex-m4", "armv7e-m",
          ("-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"),
          fpu=True, dsp=True, tier="dsp", notes="Cortex-M4F, single-precision FPU."),
    _mps2("qemu-m7", "mps2-an500", "cortex-m7", "armv7e-m",
          ("-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16", "-mfloat-abi=hard"),
          fpu=True, dsp=True, tier="dsp", notes="Cortex-M7, double-precision FPU."),
    Board(
        name="qemu-m33",
        qemu_machine="mps2-an505",
        core="cortex-m33",
        arch="armv8-m.main",
        cpu_flags=("-mcpu=cortex-m33", "-mthumb", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"),
        regions=(
            MemoryRegion("CODE", 0x10000000, 4 * MiB, "code",
                         note="SSRAM1, Secure alias, used as code memory"),
            MemoryRegion("DATA", 0x38000000, 4 * MiB, "ram", arena_section=".mcuflow_arena",
                         note="SSRAM2+3, Secure alias"),
            MemoryRegion("ISRAM", 0x30000000, 32 * KiB, "ram", fast=True,
                         arena_section=".mcuflow_arena_isram",
                         note="IoTKit internal SRAM, Secure alias"),
        ),
        code_region="CODE",
        ram_region="DATA",
        arena_region="DATA",
        timer="IoTKit CMSDK APB TIMER0, Secure alias 0x50000000",
        timer_base=0x50000000,
        timer_clock_hz=20_000_000,
        tick_hz=20_000_000,
        icount_shift=6,
        has_fpu=True,
        has_dsp=True,
        has_mve=False,
        tier="dsp",
        default_stack_size=16 * KiB,
        secure=True,
        notes="Runs in the Secure state; code and data use the Secure aliases.",
    ),
    Board(
        name="qemu-m55",
        qemu_machine="mps3-an547",
        core="cortex-m55",
        arch="armv8.1-m.main",
        cpu_flags=("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"),
        regions=(
            MemoryRegion("ITCM", 0x00000000, 512 * KiB, "code", fast=True,
                         note="SSE-300 ITCM, used as code memory"),
            MemoryRegion("DTCM", 0x20000000, 512 * KiB, "ram", fast=True,
                         arena_section=".mcuflow_arena", note="SSE-300 DTCM"),
            MemoryRegion("SRAM", 0x01000000, 2 * MiB, "ram",
                         arena_section=".mcuflow_arena_sram",
                         program_section=".rodata.mcuflow_program_sram", note="FPGA SRAM"),
        ),
        code_region="ITCM",
        ram_region="DTCM",
        arena_region="DTCM",
        timer="SSE-300 system counter (CNTCV_LO at 0x48101000, CNTCR at 0x58100000)",
        timer_base=0x48101000,
        timer_clock_hz=32_000_000,
        tick_hz=32_000_000,
        icount_shift=5,
        has_fpu=True,
        has_dsp=True,
        has_mve=True,
        tier="mve",
        default_stack_size=16 * KiB,
        secure=True,
        notes=("Runs in the Secure state. MVE (Helium) integer and float. A program larger than "
               "ITCM goes to SRAM (QEMU also models the QSPI flash, 8 MiB of ROM at 0x28000000, but "
               "behind an MPC at a Non-secure address while the firmware runs Secure)."),
        program_fallback=("SRAM",),
    ),
    Board(
        **_memory_from_board_file("stm32f405"),
        qemu_machine="netduinoplus2",
        core="cortex-m4",
        arch="armv7e-m",
        cpu_flags=("-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"),
        timer="STM32 TIM2 (32-bit up-counter), PSC=31; the DWT cycle counter on the chip",
        timer_base=0x40000000,
        timer_clock_hz=1_000_000_000,
        tick_hz=31_250_000,
        icount_shift=5,
        has_fpu=True,
        has_dsp=True,
        has_mve=False,
        tier="dsp",
        console="uart",
        notes=("The STM32F405 as it is (QEMU netduinoplus2): console and host files over USART1, no "
               "semihosting; the 64 KiB CCM is not used (QEMU 7.2 does not model it). QEMU's TIM2 input "
               "clock measures 1 GHz: PSC=31 makes one tick per instruction at shift 5."),
    ),
]

BOARDS: Dict[str, Board] = {b.name: b for b in _BOARD_LIST}


class UnknownBoardError(KeyError):
    """Raised for a board name that is not in :data:`BOARDS`."""

    def __init__(self, name: str):
        self.name = name
        msg = f"unknown board {name!r}; known boards: {', '.join(board_names())}"
        super().__init__(msg)
        self.message = msg

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return self.message


def board_names() -> List[str]:
    return list(BOARDS)


def get_board(name) -> Board:
    """Look a board up by name (a :class:`Board` is returned as is)."""
    if isinstance(name, Board):
        return name
    try:
        return BOARDS[name]
    except (KeyError, TypeError):
        raise UnknownBoardError(str(name)) from None


def board_named(name) -> Board:
    """The board a user named: :func:`get_board`, with an unknown name an InputError."""
    try:
        return get_board(name)
    except UnknownBoardError as e:
        raise InputError(str(e)) from None


def board_cmake(board: Board) -> str:
    """firmware/boards/<name>/board.cmake, the board for CMake projects, generated from the
    table (tests/firmware/test_firmware_boards.py checks the files are this text)."""
    lines = [f"# Board {board.name}: QEMU {board.qemu_machine} ({board.core}). Included by mcuflow_add_firmware().",
             "# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.",
             f"set(MCUFLOW_BOARD_CPU_FLAGS {' '.join(board.cpu_flags)})"]
    has_board_file = board_file(board.name).is_file()
    if not has_board_file:
        lines.append('set(MCUFLOW_BOARD_LINKER_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/link.ld")')
    lines += [f"set(MCUFLOW_BOARD_QEMU_MACHINE {board.qemu_machine})", f"set(MCUFLOW_BOARD_ICOUNT_SHIFT {board.icount_shift})"]
    if board.console == "uart":
        lines += ["# Console and host files over the UART (firmware/common/uart_io.c), no semihosting.",
                  "set(MCUFLOW_BOARD_CONSOLE uart)"]
    if has_board_file:
        script = "${CMAKE_CURRENT_LIST_DIR}/../../../python/mcuflow/boardfile.py"
        lines += [
            "# The linker script is generated from board.json at configure time (python/mcuflow/boardfile.py).",
            "find_package(Python3 REQUIRED COMPONENTS Interpreter)",
            f'set(MCUFLOW_BOARD_LINKER_SCRIPT "${{CMAKE_BINARY_DIR}}/mcuflow_board_{board.name}/link.ld")',
            "execute_process(",
            f'  COMMAND "${{Python3_EXECUTABLE}}" "{script}"',
            '          "${CMAKE_CURRENT_LIST_DIR}/board.json" -o "${MCUFLOW_BOARD_LINKER_SCRIPT}"',
            "  RESULT_VARIABLE _mcuflow_boardfile_rc ERROR_VARIABLE _mcuflow_boardfile_error)",
            "if(NOT _mcuflow_boardfile_rc EQUAL 0)",
            '  message(FATAL_ERROR "${_mcuflow_boardfile_error}")',
            "endif()",
            "set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS",
            f'             "${{CMAKE_CURRENT_LIST_DIR}}/board.json" "{script}")']
    return "\n".join(lines) + "\n"
