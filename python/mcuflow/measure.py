"""`mcuflow size`: flash and RAM of a firmware ELF by component, and the provenance record that
every measurement (size and bench JSON) carries.

Figures come from the ELF's section headers and symbols (arm-none-eabi-readelf / nm) and from the
linker map, which names the object every input section came from — never from a file's length.
Totals reconcile with arm-none-eabi-size: flash occupied = text + data, static RAM = data + bss
(every allocated section without contents: .bss proper, the arena, the stack and the heap).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .api import Program
from .boardfile import BoardFileError
from .boards import Board, UnknownBoardError, get_board
from .crossbuild import tool_path
from .errors import InputError, McuflowError
from .version import __version__, sources_commit

PROGRAM_SECTION = ".rodata.mcuflow_program"  # python/mcuflow/device.py generate_sources
ALLOCATOR_SYMBOLS = ("malloc", "_malloc_r", "calloc", "realloc", "free", "_sbrk", "_sbrk_r")
TOOLCHAIN_LIBRARIES = re.compile(r"^lib(c|c_nano|g|g_nano|m|gcc|nosys|rdimon|stdc\+\+|supc\+\+)\.a$")

# Flash components in display order: (key, label).
GROUPS = [
    ("runtime_core", "runtime core: loader, verifier, executor (runtime/src)"),
    ("kernel_adapters", "kernel adapters: checks + calls (runtime/src/ops)"),
    ("kernel_table", "kernel table (generated, selective build)"),
    ("kernels", "kernels"),
    ("program", "program: weights, tables, metadata (.mfp)"),
    ("application", "application / harness"),
    ("startup_board", "startup + board support (firmware/)"),
    ("libc", "C library (newlib nano, libm, libgcc)"),
    ("padding", "alignment fill, linker stubs"),
]


class SizeError(McuflowError):
    """The ELF or its linker map cannot be read."""


@dataclass
class Section:
    name: str
    type: str
    addr: int
    offset: int
    size: int
    flags: str

    @property
    def allocated(self) -> bool:
        return "A" in self.flags

    @property
    def berkeley(self) -> str | None:
        """The column arm-none-eabi-size (Berkeley format) counts this section in."""
        if not self.allocated:
            return None
        if "X" in self.flags or "W" not in self.flags:
            return "text"
        return "data" if self.type != "NOBITS" else "bss"


@dataclass
class InputSection:
    output: str  # output section it was placed in
    name: str    # input section name, or "*fill*"
    addr: int
    size: int
    origin: str  # object file, archive(member), "linker stubs" or "" for fill


def _tool(name: str, *args: str) -> str:
    path = tool_path(name)
    if path is None:
        raise SizeError(f"arm-none-eabi-{name} not found: apt-get install gcc-arm-none-eabi")
    p = subprocess.run([path, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise SizeError(f"arm-none-eabi-{name} failed on {args[-1]}: {p.stderr.strip().splitlines()[-1:]}")
    return p.stdout


def elf_sections(elf: Path) -> list[Section]:
    sections = []
    for line in _tool("readelf", "-S", "-W", str(elf)).splitlines():
        m = re.match(r"^\s*\[\s*\d+\]\s+(.*)$", line)
        if not m:
            continue
        parts = m.group(1).split()
        if len(parts) == 9:  # no flags
            parts.insert(6, "")
        if len(parts) != 10 or parts[1] == "NULL":
            continue
        sections.append(Section(parts[0], parts[1], int(parts[2], 16), int(parts[3], 16), int(parts[4], 16), parts[6]))
    return sections


def elf_symbols(elf: Path) -> dict[str, tuple[int, int | None, str]]:
    """name -> (value, size or None, nm type letter)."""
    symbols = {}
    for line in _tool("nm", "-S", str(elf)).splitlines():
        parts = line.split()
        if len(parts) == 4:
            symbols[parts[3]] = (int(parts[0], 16), int(parts[1], 16), parts[2])
        elif len(parts) == 3:
            symbols[parts[2]] = (int(parts[0], 16), None, parts[1])
    return symbols


_MAP_OUTPUT = re.compile(r"^(\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+).*)?$")  # may end "load address 0x.."
_MAP_INPUT = re.compile(r"^ (\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s*(.*))?$")
_MAP_CONTINUED = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s*(.*)$")


def parse_map(text: str) -> list[InputSection]:
    """Input sections of GNU ld's memory map, with the output section each landed in. A name
    too long for its column is printed alone and its address, size and object follow on the
    next line."""
    if "Linker script and memory map" not in text:
        raise SizeError("not a GNU ld map file (no 'Linker script and memory map')")
    body = text.split("Linker script and memory map", 1)[1]
    body = body.split("\nOUTPUT(", 1)[0]
    result: list[InputSection] = []
    output = None
    pending = None  # an input section name waiting for its continuation line
    for line in body.splitlines():
        if not line.strip():
            continue
        if pending is not None:
            m = _MAP_CONTINUED.match(line)
            if m:
                result.append(InputSection(output, pending, int(m.group(1), 16), int(m.group(2), 16),
                                           m.group(3).strip()))
                pending = None
                continue
            pending = None
        if not line.startswith(" "):
            m = _MAP_OUTPUT.match(line)
            if m and not line.startswith(("LOAD ", "START GROUP", "END GROUP")):
                output = m.group(1)
            continue
        m = _MAP_INPUT.match(line)
        if not m or output is None or "(" in m.group(1):  # "(" marks a script pattern, e.g. *(.text)
            continue
        if m.group(3) is None:
            pending = m.group(1)
        else:
            result.append(InputSection(output, m.group(1), int(m.group(2), 16), int(m.group(3), 16),
                                       (m.group(4) or "").strip()))
    return result


def occupied_bytes(inputs: list[InputSection], section_end: int) -> list[tuple[InputSection, int]]:
    """The bytes each input section of one output section really occupies. Merged string
    sections (.rodata.*.str1.1) overlap in the map and print sizes that ignore the merge, so a
    byte belongs to the first section (by address) that covers it and no section reaches past
    the next one's start or the output section's end."""
    entries = sorted((s for s in inputs if s.size), key=lambda s: s.addr)
    starts = sorted({s.addr for s in entries})
    covered = 0
    result = []
    for s in entries:
        later = starts[bisect.bisect_right(starts, s.addr):]
        end = min(s.addr + s.size, later[0] if later else section_end, section_end)
        result.append((s, max(0, end - max(s.addr, covered))))
        covered = max(covered, end)
    return result


def _source_index(root: Path) -> dict[str, str]:
    """Source file stem -> group, for objects whose path was lost (archive members)."""
    index = {}
    for f in (root / "runtime" / "src").glob("*.cpp"):
        index[f.stem] = "runtime_core"
    for f in (root / "runtime" / "src" / "ops").rglob("*.cpp"):
        index[f.stem] = "kernel_adapters"
    for f in (root / "kernels").glob("*/*.cpp"):
        index[f.stem] = "kernels"
    index["kernel_table"] = "kernel_table"
    return index


def _group_of_path(path: str) -> str | None:
    p = path.replace("\\", "/")
    if re.search(r"/(mcuflow_)?kernel_table\.cpp(\.obj)?$", p):
        return "kernel_table"
    from .firmware_sources import TIERS

    for pattern, group in ((r"/runtime/src/ops/", "kernel_adapters"), (r"/runtime/src/", "runtime_core"),
                           (rf"/kernels/({'|'.join(TIERS)})/", "kernels"),
                           (r"/firmware/(common|boards)/", "startup_board"), (r"/firmware/harness/", "application")):
        if re.search(pattern, p):
            return group
    return None


def _stem(name: str) -> str:
    """program.cpp.obj, 006_program.o -> program."""
    base = Path(name).name
    for suffix in (".obj", ".o"):
        base = base[: -len(suffix)] if base.endswith(suffix) else base
    base = re.sub(r"\.(cpp|cc|cxx|c|S|s)$", "", base)
    return re.sub(r"^\d{3}_", "", base)  # crossbuild names objects NNN_<stem>.o


class Classifier:
    """Assigns an input section to (group, item): item is the object's source stem, the kernel
    name, or the library member."""

    def __init__(self, root: Path, build_info: dict | None):
        self.index = _source_index(root)
        self.objects = {rec["object"]: rec["path"] for rec in (build_info or {}).get("sources", [])}

    def __call__(self, s: InputSection) -> tuple[str, str]:
        if s.name == "*fill*" or s.origin in ("", "linker stubs"):
            return "padding", "fill" if s.name == "*fill*" else "linker"
        if s.name.startswith(PROGRAM_SECTION):
            return "program", "program"
        m = re.match(r"^(.*)\((.+)\)$", s.origin)
        if m:  # archive(member): the member name has lost its directory
            archive, member = Path(m.group(1)).name, m.group(2)
            if TOOLCHAIN_LIBRARIES.match(archive):
                return "libc", f"{archive}({member})"
            return self.index.get(_stem(member), "application"), _stem(member)
        # crossbuild objects map to their source through build_info.json; CMake object paths
        # (CMakeFiles/<target>.dir/<source path>.obj) carry the source path themselves
        path = self.objects.get(Path(s.origin).name, s.origin)
        return _group_of_path(path) or "application", _stem(path)


def _demangle(names: list[str]) -> dict[str, str]:
    path = tool_path("c++filt")
    if not path or not names:
        return {n: n for n in names}
    p = subprocess.run([path], input="\n".join(names), capture_output=True, text=True)
    out = p.stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def _symbol_of(section_name: str) -> str:
    """.text._ZN7mcuflow3fooEv -> _ZN7mcuflow3fooEv (-ffunction-sections / -fdata-sections)."""
    m = re.match(r"^\.(?:text|rodata|data|bss)(?:\.startup)?\.(.+)$", section_name)
    return m.group(1) if m else section_name


def embedded_program(elf: Path, sections: list[Section], symbols: dict) -> bytes | None:
    """The program bytes between mcuflow_program and mcuflow_program_end, read from the ELF."""
    if "mcuflow_program" not in symbols or "mcuflow_program_end" not in symbols:
        return None
    start, end = symbols["mcuflow_program"][0], symbols["mcuflow_program_end"][0]
    for s in sections:
        if s.type == "PROGBITS" and s.allocated and s.addr <= start and end <= s.addr + s.size:
            with open(elf, "rb") as f:
                f.seek(s.offset + start - s.addr)
                return f.read(end - start)
    return None


def _program_of(elf: Path, image: bytes | None) -> Program | None:
    """The program the firmware embeds: the full one `mcuflow firmware` leaves beside the ELF
    (program.mfp, with the metadata the device image lacks) when its image is what the ELF
    holds, else the embedded image itself."""
    if not image:
        return None
    beside = elf.parent / "program.mfp"
    if beside.is_file():
        full = Program(beside.read_bytes())
        if full.device_image == image:
            return full
    return Program(image)


def _board_or_none(name: str | None) -> Board | None:
    try:
        return get_board(name) if name else None
    except (UnknownBoardError, KeyError, BoardFileError) as e:
        raise InputError(str(e).strip('"')) from None


def _region_of(board: Board | None, addr: int, section: str) -> str:
    for r in board.regions if board else ():
        if r.base <= addr < r.end:
            return r.name
    return section


def measurement_record(*, program: Program | None, board: str | None, build_info: dict | None,
                       compiler_fallback: str | None = None) -> dict:
    """What produced a measurement: tool, sources, compiler and flags, target, board, hashes."""
    from .device import source_root
    from .firmware_sources import kernel_tier

    info = build_info or {}
    meta = program.metadata if program else {}
    source = meta.get("source", {})
    flags = info.get("flags", {})
    return {
        "mcuflow_version": __version__,
        "mcuflow_commit": info.get("git_commit") or sources_commit(source_root()),
        "compiler": info.get("compiler", {}).get("version") or compiler_fallback,
        "compiler_flags": {"cpu": info.get("cpu_flags"), "opt_level": flags.get("opt_level"),
                           "kernel_opt_level": flags.get("kernel_opt_level"), "common": flags.get("common"),
                           "c++": flags.get("c++"), "ldflags": flags.get("ldflags")} if info else None,
        "target": meta.get("target"),
        "target_tier": meta.get("tier"),
        "precision": meta.get("precision"),
        "board": board,
        "model_file": source.get("model_file"),
        "model_sha256": source.get("model_sha256"),
        "calibration_sha256": source.get("calibration_sha256"),
        "program_sha256": hashlib.sha256(program.data).hexdigest() if program else None,
        "program_bytes": len(program.data) if program else None,
        # what the firmware stores: the program without its metadata
        "device_image_sha256": hashlib.sha256(program.device_image).hexdigest() if program else None,
        "ops": [{"index": i, "kind": op["kind"], "kernel": op["kernel"], "tier": kernel_tier(op["kernel"])}
                for i, op in enumerate(meta.get("ops", []))],
    }


def _comment_compiler(elf: Path, sections: list[Section]) -> str | None:
    """The compiler named in the ELF's .comment (used when no build_info.json is at hand)."""
    for s in sections:
        if s.name == ".comment":
            with open(elf, "rb") as f:
                f.seek(s.offset)
                text = f.read(s.size).decode("ascii", "replace")
            return text.split("\0")[0].strip() or None
    return None


def analyze(elf: str | Path, map_path: str | Path | None = None, build_info: dict | None = None,
            board: str | None = None) -> tuple[dict, Program | None]:
    """Flash and RAM of `elf` by component (see the module docstring), without running it; and
    the program embedded in it, if any."""
    from .device import source_root

    elf = Path(elf)
    if not elf.is_file():
        raise InputError(f"firmware {elf} does not exist")
    if elf.read_bytes()[:4] != b"\x7fELF":
        raise InputError(f"{elf} is not an ELF file")
    map_path = Path(map_path) if map_path else elf.with_suffix(".map")
    if not map_path.is_file():
        raise InputError(f"linker map {map_path} not found (link with -Wl,-Map=...; or pass --map)")
    sections = elf_sections(elf)
    symbols = elf_symbols(elf)
    inputs = parse_map(map_path.read_text(errors="replace"))
    board_name = board or (build_info or {}).get("board_file") or (build_info or {}).get("board")
    board_obj = _board_or_none(board_name)
    classify = Classifier(source_root(), build_info)

    berkeley = {"text": 0, "data": 0, "bss": 0}
    for s in sections:
        if s.berkeley:
            berkeley[s.berkeley] += s.size

    flash_sections = {s.name: s for s in sections if s.berkeley in ("text", "data") and s.size}
    items: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    largest: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for name, section in flash_sections.items():
        placed = 0
        for s, size in occupied_bytes([s for s in inputs if s.output == name], section.addr + section.size):
            group, item = classify(s)
            items[group][item] += size
            placed += size
            if group not in ("program", "padding") and size:
                largest[group].append((size, _symbol_of(s.name)))
        if placed != section.size:  # bytes no input section accounts for (script assignments)
            items["padding"][f"unlisted in {name}"] += section.size - placed
    names = _demangle(sorted({n for entries in largest.values() for _, n in entries}))
    flash_total = berkeley["text"] + berkeley["data"]
    components = []
    for key, label in GROUPS:
        if key not in items:
            continue
        group_items = dict(sorted(items[key].items(), key=lambda kv: (-kv[1], kv[0])))
        components.append({
            "group": key, "label": label, "bytes": sum(group_items.values()), "items": group_items,
            "largest": [{"symbol": names.get(n, n), "bytes": b} for b, n in sorted(largest[key], reverse=True)[:8]],
        })

    ram = {"data": 0, "bss": 0, "arena": {}, "stack_reserved": 0, "heap_reserved": 0, "other": {}}
    for s in sections:
        if s.berkeley == "data":
            ram["data"] += s.size
        elif s.berkeley == "bss":
            if s.name.startswith(".mcuflow_arena"):
                if s.size:
                    region = _region_of(board_obj, s.addr, s.name)
                    ram["arena"][region] = ram["arena"].get(region, 0) + s.size
            elif s.name == ".stack":
                ram["stack_reserved"] += s.size
            elif s.name == ".heap":
                ram["heap_reserved"] += s.size
            elif s.name == ".bss":
                ram["bss"] += s.size
            else:
                ram["other"][s.name] = s.size
    if "__heap_size__" in symbols:
        ram["heap_reserved"] = max(ram["heap_reserved"], symbols["__heap_size__"][0])
    allocators = sorted(n for n in ALLOCATOR_SYMBOLS if n in symbols)
    ram["heap_used"] = None if allocators else 0
    ram["heap_evidence"] = (f"allocator linked ({', '.join(allocators)}): heap use not measured" if allocators
                            else "no allocator linked: none of malloc, free, _sbrk, ... in the symbol table")
    ram["static_total"] = berkeley["data"] + berkeley["bss"]
    ram_items = defaultdict(lambda: defaultdict(int))  # who owns .data/.bss
    for s in inputs:
        if s.output in (".data", ".bss") and s.size:
            group, item = classify(s)
            ram_items[group][item] += s.size
    ram["by_component"] = {g: dict(v) for g, v in ram_items.items()}

    program = _program_of(elf, embedded_program(elf, sections, symbols))
    for c in components:
        if c["group"] == "program" and "mcuflow_program" in symbols:  # the board picks its region
            c["region"] = _region_of(board_obj, symbols["mcuflow_program"][0], "?")
    report = {
        "record": measurement_record(program=program, board=board_obj.name if board_obj else board_name,
                                     build_info=build_info,
                                     compiler_fallback=_comment_compiler(elf, sections)),
        "elf": str(elf),
        "map": str(map_path),
        "flash": {"total": flash_total, "components": components,
                  "kernels": dict(items.get("kernels", {}))},
        "ram": ram,
        "arm_none_eabi_size": berkeley,
    }
    return report, program


def sample_inputs(program: Program, seed: int = 0) -> list[np.ndarray]:
    """A deterministic input for each program input: standard normal floats or uniform int8."""
    rng = np.random.default_rng(seed)
    out = []
    for spec in program.inputs:
        if np.dtype(spec["dtype"]) == np.int8:
            out.append(rng.integers(-128, 128, size=spec["shape"], dtype=np.int8))
        else:
            out.append(rng.standard_normal(spec["shape"]).astype(spec["dtype"]))
    return out


_STACK_LINE = re.compile(r"mcuflow: stack high water (\d+) of (\d+) bytes")


def parse_stack(stdout: str) -> tuple[int, int] | None:
    m = _STACK_LINE.search(stdout)
    return (int(m.group(1)), int(m.group(2))) if m else None


def measure_stack(elf: Path, build_info: dict, program: Program, timeout: float) -> int:
    """Runs a `mcuflow firmware` ELF (harness main.cpp) once under QEMU on a deterministic input
    and returns the stack's high-water mark in bytes."""
    from .device import DeviceError, run_harness, write_input_files

    board = get_board(build_info.get("board_file") or build_info["board"])
    with tempfile.TemporaryDirectory(prefix="mcuflow-size-") as work:
        w = Path(work)
        (w / "batch.bin").write_bytes(np.uint32(1).tobytes())
        write_input_files(w, program, [sample_inputs(program)])
        stdout = run_harness(elf, board.name, w, timeout)
    stack = parse_stack(stdout)
    if stack is None:
        raise DeviceError(f"{board.name}: the firmware printed no stack high-water line")
    return stack[0]


def _is_run_harness(build_info: dict | None) -> bool:
    return any(Path(rec["path"]).as_posix().endswith("firmware/harness/main.cpp")
               for rec in (build_info or {}).get("sources", []))


def size_report(elf: str | Path, map_path=None, board: str | None = None, run: bool = True,
                timeout: float = 120.0) -> dict:
    """analyze() plus the stack high-water mark, measured by running the firmware under QEMU
    when it is a `mcuflow firmware` build (its build_info.json lies beside the ELF)."""
    elf = Path(elf)
    info_path = elf.parent / "build_info.json"
    build_info = json.loads(info_path.read_text()) if info_path.is_file() else None
    report, program = analyze(elf, map_path, build_info, board)
    ram = report["ram"]
    if not run:
        ram["stack_high_water"], ram["stack_note"] = None, "not measured (--no-run)"
    elif not (_is_run_harness(build_info) and program):
        ram["stack_high_water"] = None
        ram["stack_note"] = ("not measured: only firmware built by `mcuflow firmware` (build_info.json beside it) "
                             "is run; elsewhere print board_stack_high_water() after a run")
    else:
        ram["stack_high_water"] = measure_stack(elf, build_info, program, timeout)
        ram["stack_note"] = "measured under QEMU: stack painted at reset, scanned after one inference"
    return report


# --- console -----------------------------------------------------------------------------

def _row(label: str, value, note: str = "", indent: int = 2) -> str:
    text = f"{' ' * indent}{label}"
    return f"{text:<62} {value:>9}  {note}".rstrip() if value != "" else text


def format_report(r: dict) -> str:
    rec = r["record"]
    lines = [f"{r['elf']}: board {rec['board'] or '?'}, target {rec['target'] or '?'}, "
             f"compiler {rec['compiler'] or '?'}",
             f"  program sha256 {rec['program_sha256'] or '(no embedded mcuflow program)'}"
             + (f", model {rec['model_file']} sha256 {rec['model_sha256']}" if rec["model_sha256"] else ""),
             "", _row("flash (bytes)", "", indent=0)]
    for c in r["flash"]["components"]:
        lines.append(_row(c["label"], c["bytes"], f"in {c['region']}" if "region" in c else ""))
        if c["group"] in ("runtime_core", "kernel_adapters", "kernels"):
            for item, b in c["items"].items():
                lines.append(_row(item, b, indent=6))
    size = r["arm_none_eabi_size"]
    lines.append(_row("total occupied", r["flash"]["total"],
                      f"= arm-none-eabi-size text {size['text']} + data {size['data']}"))
    ram = r["ram"]
    lines += ["", _row("RAM (bytes)", "", indent=0),
              _row(".data", ram["data"], "(its initial values are in flash too)"), _row(".bss", ram["bss"])]
    for region, b in ram["arena"].items():
        lines.append(_row(f"tensor arena ({region})", b))
    for name, b in ram["other"].items():
        lines.append(_row(name, b))
    hw = ram["stack_high_water"]
    lines.append(_row("stack reserved", ram["stack_reserved"],
                      f"high-water {hw} bytes" if hw is not None else f"high-water {ram['stack_note']}"))
    lines.append(_row("heap reserved", ram["heap_reserved"],
                      f"used {ram['heap_used']} ({ram['heap_evidence']})" if ram["heap_used"] is not None
                      else ram["heap_evidence"]))
    lines.append(_row("static total", ram["static_total"],
                      f"= arm-none-eabi-size data {size['data']} + bss {size['bss']}"))
    return "\n".join(lines)
