"""Cross-compile device firmware for an mcuflow board.

:func:`build_firmware` compiles a list of C/C++/assembly sources together with
the board support (``firmware/common`` startup + semihosting, the board's
``board.c``) using ``arm-none-eabi-gcc``/``g++`` directly, links them with the
board's ``link.ld`` (generated into ``out_dir`` from its board file ``board.json``,
:mod:`mcuflow.boardfile`) and writes into ``out_dir``:

* ``firmware.elf``, ``firmware.map``, ``firmware.bin``
* ``build_info.json``: compiler and version, every flag, ``-mcpu``, the board,
  the sources with their optimisation level, section sizes, git commit.

Runtime code is built with ``-Os``; files listed in ``o3_sources`` (kernels)
with ``-O3``. On failure a :class:`FirmwareError` carries the tool's stderr; a
linker "region overflowed" error becomes "needs N KiB of RAM, board has M KiB".

Standard library only (no torch).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Union

from .boardfile import BoardFileError, board_linker_script, firmware_dir
from .boards import BOARDS, Board, get_board
from .version import sources_commit

__all__ = [
    "FirmwareError",
    "FirmwareBuild",
    "build_firmware",
    "firmware_dir",
    "toolchain_available",
    "tool_path",
    "compiler_version",
    "board_support_sources",
    "board_cpu_flags",
    "parse_memory_overflow",
]

PathLike = Union[str, "os.PathLike[str]"]

C_EXTS = {".c"}
CXX_EXTS = {".cc", ".cpp", ".cxx", ".c++"}
ASM_EXTS = {".s", ".S", ".sx"}

COMMON_FLAGS = [
    "-ffunction-sections",
    "-fdata-sections",
    "-fno-common",
    "-fno-unwind-tables",
    "-fno-asynchronous-unwind-tables",
    "-ffp-contract=off",  # no fused multiply-add: float kernels round like the host build
    "-g",
    "-Wall",
    "-Wextra",
]
C_FLAGS = ["-std=gnu11"]
CXX_FLAGS = [
    "-std=c++17",
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-threadsafe-statics",
    "-fno-use-cxa-atexit",
]
LD_FLAGS = [
    "-nostartfiles",
    "--specs=nano.specs",
    "-Wl,--gc-sections",
    "-Wl,--no-warn-rwx-segments",
]


class FirmwareError(Exception):
    """A firmware build step failed. ``stderr`` holds the tool's output."""

    def __init__(self, message: str, *, stderr: str = "", command: Optional[Sequence[str]] = None,
                 board: Optional[str] = None):
        self.message = message
        self.stderr = stderr or ""
        self.command = list(command) if command else None
        self.board = board
        super().__init__(message)

    def __str__(self) -> str:
        if self.stderr.strip():
            return f"{self.message}\n--- compiler output ---\n{self.stderr.rstrip()}"
        return self.message


@dataclass
class FirmwareBuild:
    board: Board
    out_dir: Path
    elf: Path
    map: Path
    bin: Path
    build_info: Path
    info: Dict[str, object] = field(default_factory=dict)


def _prefix() -> str:
    return os.environ.get("MCUFLOW_CROSS_PREFIX", "arm-none-eabi-")


def tool_path(tool: str) -> Optional[str]:
    """Full path of e.g. ``gcc`` -> arm-none-eabi-gcc, or None."""
    return shutil.which(_prefix() + tool)


def toolchain_available() -> bool:
    return all(tool_path(t) for t in ("gcc", "g++", "objcopy", "size"))


def compiler_version() -> str:
    gcc = tool_path("gcc")
    if not gcc:
        return ""
    out = subprocess.run([gcc, "--version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0].strip() if out.stdout else ""


def board_cpu_flags(board: Union[str, Board]) -> List[str]:
    return list(get_board(board).cpu_flags)


def board_support_sources(board: Union[str, Board]) -> List[Path]:
    b = get_board(board)
    fw = firmware_dir()
    return [
        fw / "common" / "startup.c",
        fw / "common" / ("uart_io.c" if b.console == "uart" else "semihost.c"),
        fw / "common" / "cxx_support.c",
        Path(b.support_source),
    ]


_OVERFLOW_RE = re.compile(r"region [`']([^'`]+)' overflowed by (\d+) bytes")


def memory_overflows(stderr: str) -> List[tuple]:
    """ld's "region `X' overflowed by N bytes" lines as (region, bytes), each region once."""
    found: Dict[str, int] = {}
    for m in _OVERFLOW_RE.finditer(stderr):
        found.setdefault(m.group(1), int(m.group(2)))
    return list(found.items())


def parse_memory_overflow(stderr: str, board: Union[str, Board]) -> List[str]:
    """Turn ld's "region `X' overflowed by N bytes" into readable sentences."""
    b = get_board(board)
    msgs: List[str] = []
    for name, over in memory_overflows(stderr):
        try:
            region = b.region(name)
        except KeyError:
            msgs.append(f"memory region {name} overflowed by {over} bytes")
            continue
        need_kib = math.ceil((region.size + over) / 1024)
        have_kib = region.size // 1024
        what = "RAM" if region.kind == "ram" else "code memory"
        msgs.append(
            f"needs {need_kib} KiB of {what}, board has {have_kib} KiB "
            f"(board {b.name}, region {region.name} overflowed by {over} bytes)"
        )
    return msgs


def _norm_defines(defines) -> List[str]:
    if not defines:
        return []
    out = []
    if isinstance(defines, Mapping):
        for k, v in defines.items():
            out.append(f"-D{k}" if v is None else f"-D{k}={v}")
    else:
        for d in defines:
            out.append(d if d.startswith("-D") else f"-D{d}")
    return out


def _lang(path: Path) -> str:
    suffix = path.suffix
    if suffix in C_EXTS:
        return "c"
    if suffix.lower() in CXX_EXTS:
        return "c++"
    if suffix in ASM_EXTS:
        return "asm"
    raise FirmwareError(f"don't know how to compile {path} (suffix {suffix!r})")


def _within(path: Path, out: Path) -> Path:
    """`path` relative to the output directory when it lies inside it, else as given."""
    try:
        return path.relative_to(out)
    except ValueError:
        return path


def _run(cmd: List[str], what: str, board: str, cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    except FileNotFoundError as e:
        raise FirmwareError(f"{what}: tool not found: {e}", command=cmd, board=board) from None
    if proc.returncode != 0:
        raise FirmwareError(f"{what} failed (exit {proc.returncode}) for board {board}",
                            stderr=proc.stderr + proc.stdout, command=cmd, board=board)
    return proc


def _section_sizes(elf: Path) -> Dict[str, Dict[str, int]]:
    size = tool_path("size")
    if not size:
        return {}
    p = subprocess.run([size, "-A", "-d", str(elf)], capture_output=True, text=True)
    out: Dict[str, Dict[str, int]] = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            out[parts[0]] = {"size": int(parts[1]), "addr": int(parts[2])}
    return out


def build_firmware(
    board: Union[str, Board],
    sources: Iterable[PathLike],
    out_dir: PathLike,
    *,
    include_dirs: Iterable[PathLike] = (),
    defines: Union[Mapping[str, object], Iterable[str], None] = None,
    o3_sources: Iterable[PathLike] = (),
    opt_level: str = "-Os",
    kernel_opt_level: str = "-O3",
    extra_cflags: Sequence[str] = (),
    extra_cxxflags: Sequence[str] = (),
    extra_ldflags: Sequence[str] = (),
    stack_size: Optional[int] = None,
    linker_script: Optional[PathLike] = None,
    with_board_support: bool = True,
    jobs: Optional[int] = None,
) -> FirmwareBuild:
    """Compile and link ``sources`` for ``board`` into ``out_dir``.

    ``defines``: mapping NAME -> value (None for a bare ``-DNAME``) or a list
    of "NAME=VALUE" strings. ``o3_sources``: files (also listed in
    ``sources`` or not) compiled with ``kernel_opt_level`` instead of
    ``opt_level``. ``stack_size`` overrides the link script's default.
    """
    b = get_board(board)
    if not toolchain_available():
        raise FirmwareError(
            f"cross toolchain not found ({_prefix()}gcc/g++/objcopy/size); install "
            "gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib",
            board=b.name)
    gcc, gxx, objcopy = tool_path("gcc"), tool_path("g++"), tool_path("objcopy")
    fw = firmware_dir()
    if not (fw / "common" / "startup.c").is_file():
        raise FirmwareError(f"mcuflow firmware tree not found at {fw}; set MCUFLOW_FIRMWARE_DIR",
                            board=b.name)
    out = Path(out_dir).resolve()
    obj_dir = out / "obj"
    obj_dir.mkdir(parents=True, exist_ok=True)

    # Lists, not sets: the link order (and so the image) must not follow PYTHONHASHSEED.
    user_sources = [Path(s).resolve() for s in sources]
    o3 = list(dict.fromkeys(Path(s).resolve() for s in o3_sources))
    user_sources += [s for s in o3 if s not in user_sources]
    all_sources = (board_support_sources(b) if with_board_support else []) + user_sources
    for s in all_sources:
        if not s.is_file():
            raise FirmwareError(f"source file not found: {s}", board=b.name)

    incs = [fw / "include", fw / "common"] + [Path(i).resolve() for i in include_dirs]
    inc_flags = [f"-I{_within(i, out)}" for i in incs]
    board_macro = "MCUFLOW_BOARD_" + re.sub(r"[^A-Za-z0-9]", "_", b.name).upper()
    def_flags = [f"-D{board_macro}=1", f'-DMCUFLOW_BOARD_NAME="{b.name}"'] + _norm_defines(defines)
    cpu = list(b.cpu_flags)

    # Every tool runs in `out`, and files in it are named relative to it: with the prefix map
    # (debug info's directories and file names), no image depends on where it was built.
    prefix_map = [f"-ffile-prefix-map={out}=."]
    compile_jobs = []
    source_records = []
    for idx, src in enumerate(all_sources):
        lang = _lang(src)
        opt = kernel_opt_level if src in o3 else opt_level
        obj = _within(obj_dir / f"{idx:03d}_{src.stem}.o", out)
        if lang == "c":
            cmd = [gcc] + cpu + [opt] + COMMON_FLAGS + C_FLAGS + list(extra_cflags)
        elif lang == "c++":
            cmd = [gxx] + cpu + [opt] + COMMON_FLAGS + CXX_FLAGS + list(extra_cxxflags)
        else:
            cmd = [gcc] + cpu + ["-x", "assembler-with-cpp"] + COMMON_FLAGS
        cmd += prefix_map + inc_flags + def_flags + ["-c", str(_within(src, out)), "-o", str(obj)]
        compile_jobs.append((cmd, src, obj))
        source_records.append({"path": str(_within(src, out)), "lang": lang,
                               "opt": opt if lang != "asm" else None, "object": obj.name})

    def _compile(job):
        cmd, src, _ = job
        _run(cmd, f"compiling {src.name}", b.name, cwd=out)

    workers = jobs or min(len(compile_jobs), os.cpu_count() or 1) or 1
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(_compile, compile_jobs))
    else:
        for j in compile_jobs:
            _compile(j)

    try:  # generated into the build directory for a board with a board file
        ld_script = Path(linker_script).resolve() if linker_script else board_linker_script(b.board_file, out)
    except BoardFileError as e:
        raise FirmwareError(str(e), board=b.name) from None
    elf = out / "firmware.elf"
    map_path = out / "firmware.map"
    binp = out / "firmware.bin"
    ldflags = cpu + ["-T", str(_within(ld_script, out))] + LD_FLAGS + [f"-Wl,-Map={map_path.name}"]
    if stack_size is not None:
        ldflags.append(f"-Wl,--defsym=__stack_size__={int(stack_size)}")
    ldflags += list(extra_ldflags)
    # libm after the objects so float kernels (roundf, expf) resolve; unused code is collected.
    link_cmd = [gcc] + ldflags + [str(o) for _, _, o in compile_jobs] + ["-lm", "-o", elf.name]
    try:
        _run(link_cmd, "linking firmware.elf", b.name, cwd=out)
    except FirmwareError as e:
        overflow = parse_memory_overflow(e.stderr, b)
        if overflow:
            raise FirmwareError("firmware does not fit: " + "; ".join(overflow),
                                stderr=e.stderr, command=link_cmd, board=b.name) from None
        raise
    _run([objcopy, "-O", "binary", str(elf), str(binp)], "objcopy firmware.bin", b.name)

    info: Dict[str, object] = {
        "board": b.name,
        "qemu_machine": b.qemu_machine,
        "mcpu": b.mcpu,
        "cpu_flags": cpu,
        "compiler": {"gcc": gcc, "g++": gxx, "version": compiler_version()},
        "flags": {
            "common": COMMON_FLAGS,
            "c": C_FLAGS + list(extra_cflags),
            "c++": CXX_FLAGS + list(extra_cxxflags),
            "opt_level": opt_level,
            "kernel_opt_level": kernel_opt_level,
            "defines": def_flags,
            "file_prefix_map": "<output directory>=.",
            "include_dirs": [str(_within(i, out)) for i in incs],
            "ldflags": ldflags,
        },
        "linker_script": str(_within(ld_script, out)),
        "stack_size": stack_size,
        "sources": source_records,
        "outputs": {"elf": elf.name, "map": map_path.name, "bin": binp.name},
        "sections": _section_sizes(elf),
        "git_commit": sources_commit(fw.parent),
        "icount_shift": b.icount_shift,
    }
    if b.name not in BOARDS:  # a user's board file: tools reading this record find the board by it
        info["board_file"] = b.board_file
    info_path = out / "build_info.json"
    info_path.write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
    return FirmwareBuild(board=b, out_dir=out, elf=elf, map=map_path, bin=binp,
                         build_info=info_path, info=info)
