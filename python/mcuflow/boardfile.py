"""Board files: a board as JSON, from which its linker script is generated.

``firmware/boards/<name>/board.json`` (or a user's file, ``--board my_board.json``) describes the
core and gcc flags, the emulator, the console, the counter, the memory regions and where code,
the stack and static data, and the default arena go::

    {"name": "stm32f405", "core": "cortex-m4",
     "cpu_flags": ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"],
     "qemu": {"machine": "netduinoplus2", "icount_shift": 5}, "console": "uart",
     "timer": {"name": "TIM2", "base": "0x40000000", "clock_hz": 1000000000, "tick_hz": 31250000},
     "regions": [{"name": "FLASH", "base": "0x08000000", "size": "1M", "kind": "code"},
                 {"name": "SRAM1", "base": "0x20000000", "size": "112K", "kind": "ram"},
                 {"name": "SRAM2", "base": "0x2001C000", "size": "16K", "kind": "ram",
                  "arena_section": ".mcuflow_arena_sram2"}],
     "code_region": "FLASH", "ram_region": "SRAM1", "stack_size": 8192}

(docs/boards.md lists every field). :func:`load` checks it — overlapping regions, a region past
4 GiB, a stack larger than its region, an unknown core, a missing or misnamed field are each
one :class:`BoardFileError` line naming the file — and :func:`linker_script` writes the script
the shared startup code (``firmware/common/startup.c``) expects. ``crossbuild`` generates the
script into the build directory; CMake builds run this file as a script::

    python3 python/mcuflow/boardfile.py firmware/boards/stm32f405/board.json -o link.ld

Standard library only, and no imports from the package, so it runs as a plain script.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Tuple

__all__ = ["MemoryRegion", "BoardLayout", "BoardFileError", "firmware_dir", "board_file", "load",
           "linker_script", "board_linker_script"]

KiB = 1024
ADDRESS_SPACE = 1 << 32
MIN_STACK = 0x100
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NAME_OR_DASH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*\Z")
_SIZE = re.compile(r"(0x[0-9A-Fa-f]+|[0-9]+)([KM]?)\Z")


@dataclass(frozen=True)
class MemoryRegion:
    """One memory region of a board (a MEMORY entry of its linker script)."""

    name: str  # region name in the linker script, e.g. "RAM", "DTCM"
    base: int
    size: int
    kind: str  # "code" (program, constants, weights) or "ram"
    fast: bool = False  # tightly coupled / single-cycle memory on real silicon
    arena_section: Optional[str] = None  # output section placing an arena here
    program_section: Optional[str] = None  # input section placing the program here (not code regions)
    note: str = ""

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def size_kib(self) -> int:
        return self.size // KiB


@dataclass(frozen=True)
class BoardLayout:
    """What a board file says: the regions and which of them hold what, and (``facts``) the
    rest of the board: the fields of :class:`mcuflow.boards.Board` besides the memory map."""

    name: str
    description: str
    regions: Tuple[MemoryRegion, ...]
    code_region: str
    ram_region: str
    arena_region: str
    stack_size: int
    facts: Optional[dict] = None


# The cores the compiler targets (compiler/src/compile.cpp): architecture and kernel tier.
CORES = {
    "cortex-m0": ("armv6-m", "scalar"), "cortex-m0plus": ("armv6-m", "scalar"),
    "cortex-m3": ("armv7-m", "scalar"), "cortex-m23": ("armv8-m.base", "scalar"),
    "cortex-m4": ("armv7e-m", "dsp"), "cortex-m7": ("armv7e-m", "dsp"),
    "cortex-m33": ("armv8-m.main", "dsp"), "cortex-m35p": ("armv8-m.main", "dsp"),
    "cortex-m55": ("armv8.1-m.main", "mve"), "cortex-m85": ("armv8.1-m.main", "mve"),
}
CONSOLES = ("semihosting", "uart")


class BoardFileError(ValueError):
    """A board file that cannot describe a board; the message is one line naming the file."""


def firmware_dir() -> Path:
    """The firmware/ tree (override with MCUFLOW_FIRMWARE_DIR) of the source tree."""
    env = os.environ.get("MCUFLOW_FIRMWARE_DIR")
    if env:
        return Path(env).resolve()
    if not __package__:  # run as a plain script (CMake builds): python/mcuflow/ of the source tree
        return Path(__file__).resolve().parents[2] / "firmware"
    from .firmware_sources import source_root  # here, not at the top: main() runs as a plain script

    return source_root() / "firmware"


def board_file(name: str) -> Path:
    return firmware_dir() / "boards" / name / "board.json"


def _size(where: str, value, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    m = _SIZE.match(value) if isinstance(value, str) else None
    if not m:
        raise BoardFileError(f"{where}: {what} must be a number, \"0x...\" or \"<n>K\"/\"<n>M\", not {value!r}")
    return int(m.group(1), 0) * {"": 1, "K": KiB, "M": KiB * KiB}[m.group(2)]


def _field(where: str, d: dict, key: str, kind, default=None):
    if key not in d:
        if default is not None:
            return default
        raise BoardFileError(f"{where}: missing \"{key}\"")
    value = d[key]
    if kind is bool and not isinstance(value, bool) or kind is str and not isinstance(value, str):
        raise BoardFileError(f"{where}: \"{key}\" must be {'true or false' if kind is bool else 'a string'}")
    return value


def _region(where: str, r) -> MemoryRegion:
    if not isinstance(r, dict):
        raise BoardFileError(f"{where}: a region is an object with name, base, size and kind")
    name = _field(where, r, "name", str)
    if not _NAME.match(name):
        raise BoardFileError(f"{where}: region name {name!r} is not a linker-script name (letters, digits, _)")
    here = f"{where}: region {name}"
    base, size = _size(here, r.get("base"), "base"), _size(here, r.get("size"), "size")
    kind = _field(here, r, "kind", str)
    if kind not in ("code", "ram"):
        raise BoardFileError(f"{here}: kind must be \"code\" or \"ram\", not {kind!r}")
    if size <= 0 or base % 4 or size % 4:
        raise BoardFileError(f"{here}: base and size must be multiples of 4 and the size positive")
    if base + size > ADDRESS_SPACE:
        raise BoardFileError(f"{here}: 0x{base:08X} + {size} bytes ends past the 4 GiB address space")
    arena = r.get("arena_section")
    program = r.get("program_section")
    if arena is not None and not re.match(r"\.mcuflow_arena(_\w+)?\Z", str(arena)):
        raise BoardFileError(f"{here}: arena_section must be \".mcuflow_arena\" or \".mcuflow_arena_<x>\"")
    if program is not None and (kind != "ram" or not re.match(r"\.rodata\.mcuflow_program_\w+\Z", str(program))):
        raise BoardFileError(f"{here}: program_section is \".rodata.mcuflow_program_<x>\", in a RAM region")
    return MemoryRegion(name, base, size, kind, _field(here, r, "fast", bool, False), arena, program,
                        _field(here, r, "note", str, ""))


def load(path) -> BoardLayout:
    """Reads and checks a board file; every problem is one BoardFileError line naming it."""
    where = f"board file {path}"
    try:
        d = json.loads(Path(path).read_text())
    except OSError as e:
        raise BoardFileError(f"cannot read {where}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BoardFileError(f"{where} is not JSON: {e}") from None
    if not isinstance(d, dict) or not isinstance(d.get("regions"), list) or not d["regions"]:
        raise BoardFileError(f"{where}: needs \"regions\", a non-empty list")
    regions = [_region(where, r) for r in d["regions"]]
    names = [r.name.lower() for r in regions]
    if len(set(names)) != len(names):
        raise BoardFileError(f"{where}: two regions share a name")
    ordered = sorted(regions, key=lambda r: r.base)
    for a, b in zip(ordered, ordered[1:]):
        if a.end > b.base:
            raise BoardFileError(f"{where}: regions {a.name} (0x{a.base:08X}-0x{a.end - 1:08X}) and {b.name} "
                                 f"(0x{b.base:08X}-0x{b.end - 1:08X}) overlap")
    by_name = {r.name: r for r in regions}

    def named(key: str, kind: str, default=None) -> MemoryRegion:
        name = _field(where, d, key, str, default)
        if name not in by_name or by_name[name].kind != kind:
            raise BoardFileError(f"{where}: \"{key}\" must name a {kind} region, not {name!r}")
        return by_name[name]

    code, ram = named("code_region", "code"), named("ram_region", "ram")
    arena = named("arena_region", "ram", ram.name)
    # the stack, static data and default arena live in ram_region: it takes ".mcuflow_arena"
    if ram.arena_section not in (None, ".mcuflow_arena") or any(
            r.arena_section == ".mcuflow_arena" for r in regions if r is not ram):
        raise BoardFileError(f"{where}: \".mcuflow_arena\" is {ram.name}'s (the ram_region) and no other region's")
    regions = [r if r is not ram else MemoryRegion(r.name, r.base, r.size, r.kind, r.fast, ".mcuflow_arena",
                                                   r.program_section, r.note) for r in regions]
    sections = [r.arena_section for r in regions if r.arena_section]
    if len(set(sections)) != len(sections):
        raise BoardFileError(f"{where}: two regions share an arena_section")
    if arena.name != ram.name and not by_name[arena.name].arena_section:
        raise BoardFileError(f"{where}: arena_region {arena.name} has no arena_section")
    stack = d.get("stack_size")
    if not isinstance(stack, int) or isinstance(stack, bool) or stack < MIN_STACK or stack % 8:
        raise BoardFileError(f"{where}: stack_size must be a multiple of 8 of at least {MIN_STACK} bytes")
    if stack >= ram.size:
        raise BoardFileError(f"{where}: a {stack}-byte stack does not fit {ram.name} ({ram.size} bytes)")
    name = _field(where, d, "name", str)
    facts = _facts(where, d, Path(path), {r.name: r for r in regions}) if "core" in d else None
    return BoardLayout(name, _field(where, d, "description", str, ""), tuple(regions),
                       code.name, ram.name, arena.name, stack, facts)


def _facts(where: str, d: dict, path: Path, regions: dict) -> dict:
    """The board besides its memory map: core, gcc flags, emulator, console, counter, board.c."""
    core = _field(where, d, "core", str)
    if core not in CORES:
        raise BoardFileError(f"{where}: unknown core {core!r}; known cores: {', '.join(CORES)}")
    arch, tier = CORES[core]
    flags = d.get("cpu_flags")
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags) or f"-mcpu={core}" not in flags:
        raise BoardFileError(f"{where}: \"cpu_flags\" must be a list of gcc flags with \"-mcpu={core}\"")
    qemu = d.get("qemu")
    if qemu is not None and not isinstance(qemu, dict):
        raise BoardFileError(f"{where}: \"qemu\" is an object (machine, icount_shift) or null for no emulator")
    shift = None
    if qemu is not None:
        shift = qemu.get("icount_shift")
        if not isinstance(shift, int) or isinstance(shift, bool) or not 0 <= shift <= 10:
            raise BoardFileError(f"{where}: qemu \"icount_shift\" must be a whole number from 0 to 10")
    console = _field(where, d, "console", str, "semihosting")
    if console not in CONSOLES:
        raise BoardFileError(f"{where}: console must be one of {', '.join(CONSOLES)}, not {console!r}")
    timer = d.get("timer")
    if not isinstance(timer, dict):
        raise BoardFileError(f"{where}: needs \"timer\": the counter behind board_counter() (name, base, clock_hz)")
    clock = timer.get("clock_hz")
    tick = timer.get("tick_hz", clock)
    # a board no emulator runs may count cycles of a clock it does not set (null)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 or v is None and qemu is None
               for v in (clock, tick)):
        raise BoardFileError(f"{where}: timer \"clock_hz\" and \"tick_hz\" must be positive whole numbers")
    image = d.get("uf2_family")
    if image is not None and not isinstance(image, str):
        raise BoardFileError(f"{where}: \"uf2_family\" names a UF2 family, e.g. \"rp2350-arm-s\"")
    fallback = d.get("program_fallback", [])
    if not isinstance(fallback, list) or any(not isinstance(r, str) or r not in regions
                                             or not regions[r].program_section for r in fallback):
        raise BoardFileError(f"{where}: \"program_fallback\" lists regions that have a program_section")
    support = _field(where, d, "support", str, "board.c")
    board_c = path.parent / support
    if not board_c.is_file() and _NAME_OR_DASH.match(support):  # a built-in board's board.c
        board_c = firmware_dir() / "boards" / support / "board.c"
    if not board_c.is_file():
        raise BoardFileError(f"{where}: \"support\" {support!r} is neither a built-in board's name nor a C file "
                             f"beside the board file (its board_init, board_counter and console)")
    return dict(core=core, arch=arch, tier=tier, cpu_flags=tuple(flags),
                has_fpu=any(f in ("-mfloat-abi=hard", "-mfloat-abi=softfp") for f in flags),
                has_dsp=tier in ("dsp", "mve"), has_mve=tier == "mve",
                qemu_machine=_field(where, qemu, "machine", str) if qemu is not None else None,
                qemu_cpu=qemu.get("cpu") if qemu is not None else None, icount_shift=shift,
                console=console, secure=_field(where, d, "secure", bool, False),
                timer=_field(where, timer, "name", str), timer_base=_size(f"{where}: timer", timer.get("base"), "base"),
                timer_clock_hz=clock, tick_hz=tick, program_fallback=tuple(fallback),
                notes=_field(where, d, "notes", str, ""), uf2_family=image, board_file=str(path.resolve()),
                support_source=str(board_c.resolve()))


def _length(size: int) -> str:
    for unit, factor in (("M", KiB * KiB), ("K", KiB)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def _symbol(section: str) -> str:
    return "__" + section.lstrip(".") + "_"


def linker_script(layout: BoardLayout, source: str = "board.json") -> str:
    """The linker script of `layout`: the sections and symbols firmware/common/startup.c and
    the generated firmware sources (arena buffers, the program) use."""
    code, ram = layout.code_region, layout.ram_region
    width = max(len(r.name) for r in layout.regions)
    memory = "".join(f"  {r.name:<{width}} ({'rx' if r.kind == 'code' else 'rwx'}) : ORIGIN = 0x{r.base:08X}, "
                     f"LENGTH = {_length(r.size)}" + (f"  /* {r.note} */" if r.note else "") + "\n"
                     for r in layout.regions)

    def flash_section(name: str, body: str, align: bool = True) -> str:
        return f"  {name} :{' ALIGN(4)' if align else ''}\n  {{\n{body}  }} > {code}\n\n"

    def array(name: str, sort: bool) -> str:
        body = f"    PROVIDE_HIDDEN(__{name}_start = .);\n"
        body += f"    KEEP(*(SORT(.{name}.*)))\n" if sort else ""
        body += f"    KEEP(*(.{name}))\n    PROVIDE_HIDDEN(__{name}_end = .);\n"
        return flash_section(f".{name}", body)

    def arena(r: MemoryRegion) -> str:
        sym = _symbol(r.arena_section)
        return (f"  /* Tensor arena in {r.name}{' (the default)' if r.name == layout.arena_region else ''}; "
                f"contents are not initialised. */\n"
                f"  {r.arena_section} (NOLOAD) : ALIGN(16)\n  {{\n    {sym}start__ = .;\n"
                f"    KEEP(*({r.arena_section} {r.arena_section}.*))\n    . = ALIGN(16);\n"
                f"    {sym}end__ = .;\n  }} > {r.name}\n\n")

    program = "".join(f"  /* Before .rodata, whose .rodata.* would otherwise take it: a program read in place "
                      f"from {r.name}. */\n  .{r.program_section.split('.')[-1]} : ALIGN(16)\n  {{\n"
                      f"    KEEP(*({r.program_section}))\n  }} > {r.name}\n\n"
                      for r in layout.regions if r.program_section)
    ram_region = next(r for r in layout.regions if r.name == ram)
    others = [r for r in layout.regions if r.arena_section and r.name != ram]
    return (
        f"/*\n * mcuflow linker script for board {layout.name}"
        + (f": {layout.description}" if layout.description else "") + ".\n"
        f" * Generated from {source} by python/mcuflow/boardfile.py: edit the board file, not this.\n *\n"
        f" * {code}: .vectors .text .rodata .ARM.exidx .eh_frame *_array, .data load image.\n"
        f" * {ram}: .stack (bottom, so an overflow leaves the region), .data, .bss, .mcuflow_arena, .heap (empty).\n"
        + "".join(f" * {r.name}: {r.arena_section} (NOLOAD).\n" for r in others)
        + " * The stack size can be overridden at link time: -Wl,--defsym=__stack_size__=0x2000\n */\n\n"
        f"MEMORY\n{{\n{memory}}}\n\n"
        f"__stack_size__ = DEFINED(__stack_size__) ? __stack_size__ : 0x{layout.stack_size:X};\n"
        "__heap_size__ = 0;\n\nENTRY(Reset_Handler)\n\nSECTIONS\n{\n"
        + program
        + flash_section(".text", "    KEEP(*(.vectors))\n"
                                 "    KEEP(*(.mcuflow_boot_block))  /* a boot ROM's image block (pico2) */\n"
                                 "    *(.text.Reset_Handler)\n"
                                 "    *(.text .text.* .gnu.linkonce.t.*)\n"
                                 "    *(.glue_7) *(.glue_7t) *(.vfp11_veneer) *(.v4_bx)\n"
                                 "    KEEP(*(.init))\n    KEEP(*(.fini))\n", align=False)
        + flash_section(".rodata", "    *(.rodata .rodata.* .gnu.linkonce.r.*)\n")
        + flash_section(".ARM.extab", "    *(.ARM.extab* .gnu.linkonce.armextab.*)\n")
        + flash_section(".ARM.exidx", "    __exidx_start = .;\n    *(.ARM.exidx* .gnu.linkonce.armexidx.*)\n"
                                      "    __exidx_end = .;\n")
        + flash_section(".eh_frame", "    *(.eh_frame)\n")
        + array("preinit_array", False) + array("init_array", True) + array("fini_array", True)
        + f"  .stack (NOLOAD) : ALIGN(8)\n  {{\n    __stack_limit__ = .;\n    . = . + __stack_size__;\n"
          f"    . = ALIGN(8);\n    __stack_top__ = .;\n  }} > {ram}\n\n"
        + f"  .data : ALIGN(4)\n  {{\n    __data_start__ = .;\n    *(.data .data.* .gnu.linkonce.d.*)\n"
          f"    . = ALIGN(4);\n    __data_end__ = .;\n  }} > {ram} AT > {code}\n"
          "  __data_load__ = LOADADDR(.data);\n\n"
        + f"  .bss (NOLOAD) : ALIGN(4)\n  {{\n    __bss_start__ = .;\n    *(.bss .bss.* .gnu.linkonce.b.*)\n"
          f"    *(COMMON)\n    . = ALIGN(4);\n    __bss_end__ = .;\n  }} > {ram}\n\n"
        + arena(ram_region) + "".join(arena(r) for r in others)
        + f"  /* No heap: mcuflow never allocates. */\n  .heap (NOLOAD) : ALIGN(8)\n  {{\n"
          f"    __heap_start__ = .;\n    . = . + __heap_size__;\n    __heap_end__ = .;\n  }} > {ram}\n\n"
        + "  /DISCARD/ :\n  {\n    *(.note.GNU-stack)\n  }\n\n"
          "  .ARM.attributes 0 : { KEEP(*(.ARM.attributes)) }\n}\n\n"
          "ASSERT(__heap_size__ == 0, \"mcuflow: the heap must be empty\")\n"
          f"ASSERT(__stack_size__ >= 0x{MIN_STACK:X}, \"mcuflow: stack smaller than 256 bytes\")\n")


def board_linker_script(path, out_dir) -> Path:
    """The linker script generated from the board file `path` into `out_dir`/link.ld."""
    path = Path(path)
    script = Path(out_dir) / "link.ld"
    source = f"firmware/boards/{path.parent.name}/board.json" if path.parent.parent == firmware_dir() / "boards" \
        else path.name
    script.write_text(linker_script(load(path), source))
    return script


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3 or args[1] != "-o":
        print("usage: boardfile.py <board.json> -o <link.ld>", file=sys.stderr)
        return 2
    try:
        text = linker_script(load(args[0]), Path(args[0]).name)
    except BoardFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    Path(args[2]).parent.mkdir(parents=True, exist_ok=True)
    Path(args[2]).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
