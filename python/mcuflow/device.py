"""Programs on emulated boards: generate the firmware sources for a program, build them with
the cross toolchain and run them under QEMU with semihosting file I/O.

Only the kernels a program uses are compiled in; the arena is one static buffer per memory
region of the plan, sized from the program and placed in the board's section for that region;
inputs and outputs travel as raw files in the program's physical layout.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np

from . import _core
from .api import Program
from .boards import UnknownBoardError, get_board
from .boardfile import firmware_dir
from .crossbuild import FirmwareBuild, FirmwareError, build_firmware, compiler_version, tool_path
from .errors import InputError, McuflowError, run_failure
from .outputs import commit_dir, staging_dir
from .qemu import QemuError, QemuTimeoutError, run as qemu_run

KiB = 1024
EXIT_RUNTIME_BASE = 16  # firmware/harness/harness_io.h: 16 + mcuflow::Error
HARNESSES = ("main", "bench", "programs")  # firmware/harness/<name>.cpp: run over input files, benchmark, many programs
RUNTIME_ERRORS = _core.error_names()


class DeviceError(McuflowError):
    """Building or running firmware failed (message names the board and the cause)."""


# .data/.bss of the runtime, harness and libc share the RAM region that holds the stack: a plan
# for a board leaves them this much (they measure under 4 KiB on every board).
STATIC_RAM_RESERVE = 8 * KiB
# The code region keeps this much beside the program for runtime, kernels, harness and libc (they
# measure under 32 KiB on every board, bench/zoo); a larger program goes to the board's fallback.
CODE_RESERVE = 64 * KiB


def memory_regions(memory) -> tuple[list[tuple[str, int, bool]], bool]:
    """What ``mcuflow.compile(memory=...)`` plans into: the RAM regions as (name, bytes the plan
    may use, fast), fastest first, and whether weights belong in fast RAM (the program's
    constants sit in slow memory). ``memory`` is a board name (its regions from boards.py; the
    region with the stack and static data keeps room for them), a memory-map JSON file, or such
    a map: ``{"regions": [{"name": "DTCM", "bytes": 131072, "fast": true}, {"name": "SRAM",
    "bytes": 1048576}], "weights_in_slow_memory": true}``."""
    if memory is None:
        return [], False
    if isinstance(memory, (str, os.PathLike)) and str(memory).endswith(".json"):
        try:
            memory = json.loads(Path(memory).read_text())
        except OSError as e:
            raise InputError(f"cannot read memory map {memory}: {e.strerror}") from None
        except json.JSONDecodeError as e:
            raise InputError(f"memory map {memory} is not JSON: {e}") from None
    elif isinstance(memory, str):
        board = _board(memory)
        rams = sorted((r for r in board.regions if r.kind == "ram" and r.arena_section), key=lambda r: not r.fast)
        reserve = board.default_stack_size + STATIC_RAM_RESERVE
        regions = [(r.name, r.size - (reserve if r.name == board.ram_region else 0), r.fast) for r in rams]
        return regions, any(r.fast for r in rams) and not board.region(board.code_region).fast
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


def weights_leave_fast_memory(program: Program, memory, regions) -> bool:
    """Whether a program planned for board `memory` (a board name; `regions` from
    memory_regions(memory)) does not fit the board's fast code memory and goes to slow memory
    (program_region) while a fast RAM region is planned: then its costliest weights belong in
    fast RAM, as on a board whose code memory is slow."""
    return (isinstance(memory, str) and not memory.endswith(".json") and any(fast for _, _, fast in regions)
            and not program_region(program, _board(memory)).fast)


def _arena_regions(program: Program, board) -> list:
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


def source_root() -> Path:
    """The mcuflow source tree holding runtime/, kernels/ and firmware/."""
    root = Path(os.environ.get("MCUFLOW_SOURCE_DIR", Path(__file__).resolve().parents[2]))
    if not (root / "runtime" / "src").is_dir():
        raise DeviceError(f"mcuflow sources not found at {root}; set MCUFLOW_SOURCE_DIR")
    return root


def _board(name: str):
    try:
        return get_board(name)
    except (UnknownBoardError, KeyError) as e:
        raise InputError(str(e).strip('"')) from None


def used_kernels(program: Program) -> list[str]:
    return sorted(set(program.kernels))


TIERS = ("reference", "scalar", "dsp", "mve")


def kernel_tier(kernel: str) -> str:
    """Optimized kernels are named <op>_<variant>_<tier>; the rest are reference kernels."""
    suffix = kernel.rsplit("_", 1)[-1]
    return suffix if suffix in TIERS[1:] else "reference"


def board_tiers(board) -> list[str]:
    """Armv6-M (scalar tier) code runs on every core."""
    return ["reference", "scalar"] + (["dsp"] if board.has_dsp else []) + (["mve"] if board.has_mve else [])


def program_region(program: Program, board):
    """The board region that holds the program: its code region, or else the first region of
    `board.program_fallback` with room for it (beside any arena planned there); when none has
    room, the code region, whose overflow the linker reports."""
    size = len(program.device_image)
    code = board.region(board.code_region)
    if size + CODE_RESERVE <= code.size:
        return code
    arenas = dict(zip((r.name for r in _arena_regions(program, board)), program.region_bytes))
    for region in map(board.region, board.program_fallback):
        stack = board.default_stack_size if region.name == board.ram_region else 0
        if size + arenas.get(region.name, 0) + stack <= region.size:
            return region
    return code


def _runtime_sources(root: Path, tiers=("reference",)) -> list[Path]:
    ops = root / "runtime" / "src" / "ops"
    sources = sorted((root / "runtime" / "src").glob("*.cpp")) + sorted(ops.glob("*.cpp"))
    for tier in tiers[1:]:
        sources += sorted((ops / tier).glob("*.cpp"))
    return [s for s in sources if s.name != "all_kernels.cpp"]


# Ops Session::run performs itself (runtime/src/ops): no kernels/ source of their own.
RUNTIME_OPS = {"read_input_rows"}


def _kernel_sources(root: Path, kernels: list[str]) -> list[Path]:
    return [root / "kernels" / kernel_tier(k) / f"{k}.cpp" for k in kernels if k not in RUNTIME_OPS]


def check_tiers(program: Program, board) -> None:
    """A program compiled for a DSP or MVE core needs a board with those instructions."""
    missing = sorted({k for k in used_kernels(program) if kernel_tier(k) not in board_tiers(board)})
    if missing:
        raise DeviceError(f"program compiled for {program.metadata.get('target')} uses {', '.join(missing)}; "
                          f"board {board.name} ({board.core}) lacks the {kernel_tier(missing[0]).upper()} "
                          f"instructions: compile with --target {board.core}")


def _data_directives(image: bytes) -> str:
    """The bytes as assembler data: the program is in the source itself, never a file the
    assembler looks up by name (it would search the working directory first). Words are
    little-endian, as the program format and every Cortex-M board are."""
    whole = len(image) // 4 * 4
    words = np.frombuffer(image[:whole], dtype="<u4").tolist()
    lines = ["  .4byte " + ",".join(f"0x{w:08x}" for w in words[i:i + 16]) + "\n" for i in range(0, len(words), 16)]
    if whole < len(image):
        lines.append("  .byte " + ",".join(f"0x{b:02x}" for b in image[whole:]) + "\n")
    return "".join(lines)


def generate_sources(program: Program, out_dir: Path, board) -> list[Path]:
    """Writes the program blob, the kernel table, the arena buffers (one per memory region, in
    `board`'s section for it) and the model header; returns their sources."""
    out_dir.mkdir(parents=True, exist_ok=True)
    image = program.device_image
    ids = _core.kernel_ids()
    kernels = used_kernels(program)
    region = program_region(program, board)
    section = region.program_section or ".rodata.mcuflow_program"
    (out_dir / "program.S").write_text(
        f"/* Generated by mcuflow: the program, embedded in {region.name} and read in place. */\n"
        f"  .section {section}, \"a\"\n"
        "  .balign 16\n"
        "  .global mcuflow_program\n"
        "mcuflow_program:\n"
        + _data_directives(image) +
        "  .global mcuflow_program_end\n"
        "mcuflow_program_end:\n")
    (out_dir / "mcuflow_model.h").write_text(
        "/* Generated by mcuflow for one program. */\n#pragma once\n#include <cstdint>\n"
        "#include \"mcuflow/runtime/runtime.h\"\n\n"
        f"#define MCUFLOW_REGION_COUNT {len(program.region_bytes)}u\n"
        f"#define MCUFLOW_PROGRAM_BYTES {len(image)}u\n\n"
        "extern \"C\" const uint8_t mcuflow_program[];\nextern \"C\" const uint8_t mcuflow_program_end[];\n"
        "inline uint32_t mcuflow_program_size() { return uint32_t(mcuflow_program_end - mcuflow_program); }\n"
        "mcuflow::KernelTable firmware_kernels();\n"
        "const mcuflow::Span<uint8_t>* firmware_arena_regions();  // MCUFLOW_REGION_COUNT spans, region 0 first\n")
    sizes = [max(n, 16) for n in program.region_bytes]
    sections = [r.arena_section for r in _arena_regions(program, board)]
    (out_dir / "arena.cpp").write_text(
        "// Generated by mcuflow: one arena buffer per memory region of the plan, in the board's section.\n"
        "#include \"mcuflow_model.h\"\n\nnamespace {\n"
        + "".join(f"alignas(16) uint8_t g_region{i}[{n}] __attribute__((section(\"{s}\")));\n"
                  for i, (n, s) in enumerate(zip(sizes, sections)))
        + "const mcuflow::Span<uint8_t> kRegions[] = {"
        + ", ".join(f"{{g_region{i}, {n}u}}" for i, n in enumerate(sizes)) + "};\n}  // namespace\n\n"
        "const mcuflow::Span<uint8_t>* firmware_arena_regions() { return kRegions; }\n")
    # the table ends at the largest id used: Program::load reports higher ids as not linked
    count = max((ids[k] for k in kernels), default=0) + 1
    slots = ["nullptr"] * count
    for k in kernels:
        slots[ids[k]] = f"&mcuflow::ops::kernel_entry_{k}"
    (out_dir / "kernel_table.cpp").write_text(
        "// Generated by mcuflow: the kernels this program uses, and only those, are linked.\n"
        "#include \"mcuflow/runtime/kernel_entries.h\"\n#include \"mcuflow_model.h\"\n\n"
        "namespace {\nconst mcuflow::KernelEntry* const kKernels[] = {\n    "
        + ",\n    ".join(slots) + ",\n};\n}  // namespace\n\n"
        "mcuflow::KernelTable firmware_kernels() {\n"
        f"  return mcuflow::KernelTable{{kKernels, {count}}};\n}}\n")
    return [out_dir / "program.S", out_dir / "kernel_table.cpp", out_dir / "arena.cpp"]


def check_fits(program: Program, board_name: str) -> None:
    """Fails early, before compiling, when a planned region cannot fit its board region."""
    board = _board(board_name)
    regions = _arena_regions(program, board)
    for region, planned in zip(regions, program.region_bytes):
        stack = board.default_stack_size if region.name == board.ram_region else 0
        need = planned + stack
        if need > region.size:
            where = f" in {region.name}" if len(regions) > 1 else ""
            raise DeviceError(f"{board.name}: needs {-(-need // KiB)} KiB of RAM{where}, board has "
                              f"{region.size // KiB} KiB (arena {planned} bytes + stack {stack} bytes)")


def _harness_source(root: Path, harness: str) -> Path:
    if harness not in HARNESSES:
        raise InputError(f"unknown firmware harness '{harness}' ({', '.join(HARNESSES)})")
    return root / "firmware" / "harness" / f"{harness}.cpp"


_FIRMWARE_INPUTS = {".h", ".c", ".cpp", ".S", ".ld", ".json"}  # .json: board files
# What a firmware build writes into its directory (generate_sources, build_firmware, _build_into).
FIRMWARE_OUTPUTS = {"firmware.elf", "firmware.map", "firmware.bin", "build_info.json", "program.mfp", "link.ld",
                    "generated", "obj"}


def _build_digest(root: Path, harness: str) -> str:
    """Everything besides the program that decides a firmware image: the cross compiler, the
    modules that generate sources, choose flags and define boards, and every file a build may
    read (sources, headers anywhere below runtime/, kernels/ and firmware/, linker scripts, board
    files) with its path (debug info names it), so a change to any rebuilds."""
    h = hashlib.sha256(f"{tool_path('gcc')}\n{compiler_version()}\n".encode())
    for module in ("crossbuild.py", "device.py", "boards.py", "boardfile.py"):
        h.update(Path(__file__).with_name(module).read_bytes())
    trees = [root / d for d in ("runtime", "kernels", "firmware")] + [firmware_dir()]
    files = [_harness_source(root, harness)] + sorted(
        {f for d in trees for f in d.rglob("*") if f.suffix in _FIRMWARE_INPUTS})
    for f in files:
        h.update(str(f).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _build_into(program: Program, board, out: Path, harness: str) -> None:
    """Generates and builds the firmware in the new directory `out`."""
    check_fits(program, board.name)
    check_tiers(program, board)
    root = source_root()
    generated = generate_sources(program, out / "generated", board)
    kernels = _kernel_sources(root, used_kernels(program))
    sources = _runtime_sources(root, board_tiers(board)) + [_harness_source(root, harness)] + generated
    try:
        build_firmware(board.name, sources, out, o3_sources=kernels,
                       include_dirs=[root / "runtime" / "include", root / "kernels" / "include", out / "generated"])
    except FirmwareError as e:
        msg = e.message
        if "needs" in msg and "KiB" in msg:
            raise DeviceError(f"{board.name}: {msg}") from None
        raise DeviceError(f"firmware build for {board.name} failed: {e}") from None
    (out / "program.mfp").write_bytes(program.data)  # with its metadata, for `mcuflow size` and other tools


def _staged_build(program: Program, board, target: Path, harness: str) -> Path:
    """Builds the firmware in a new directory beside `target` (outputs.staging_dir: the user's
    modes, the same file system, so outputs.commit_dir can swap it in) and returns it; a failed
    build leaves nothing behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_dir(target)
    try:
        _build_into(program, board, staging, harness)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging


def _commit(staging: Path, target: Path) -> None:
    try:
        commit_dir(staging, target)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise DeviceError(f"cannot replace {target}: {e.strerror}") from None


def _firmware_in(out: Path, board) -> FirmwareBuild:
    info_path = out / "build_info.json"
    info = json.loads(info_path.read_text()) if info_path.is_file() else {}
    return FirmwareBuild(board=board, out_dir=out, elf=out / "firmware.elf", map=out / "firmware.map",
                         bin=out / "firmware.bin", build_info=info_path, info=info)


def _check_replaceable(out: Path) -> None:
    """A firmware directory is replaced whole, so it may hold only what a build writes."""
    if out.exists() and not out.is_dir():
        raise DeviceError(f"{out} exists and is not a directory")
    others = sorted(p.name for p in out.iterdir() if p.name not in FIRMWARE_OUTPUTS) if out.is_dir() else []
    if others:
        raise DeviceError(f"{out} holds files a firmware build does not write ({', '.join(others[:3])}"
                          f"{', ...' if len(others) > 3 else ''}): give a new directory or one mcuflow firmware wrote")


def build(program: Program, board_name: str, out_dir: str | os.PathLike, harness: str = "main") -> FirmwareBuild:
    """Generates and builds the firmware for `program` on `board_name` into `out_dir`; `harness`
    names the application around it (firmware/harness/<harness>.cpp, one of HARNESSES). The
    directory is written whole or not at all: the build runs beside it and replaces it in one
    step at the end, so after a failed build an earlier firmware there is as it was."""
    board = _board(board_name)
    out = Path(out_dir).absolute()
    _check_replaceable(out)
    _commit(_staged_build(program, board, out, harness), out)
    return _firmware_in(out, board)


def cached_build(program: Program, board_name: str, harness: str = "main") -> FirmwareBuild:
    """Builds once per content: the program's bytes, the board, the harness and everything else
    that decides the image (_build_digest); later calls, from any directory, reuse the ELF."""
    board = _board(board_name)
    key = hashlib.sha256("\0".join([hashlib.sha256(program.data).hexdigest(), board.name, harness,
                                     _build_digest(source_root(), harness)]).encode()).hexdigest()[:20]
    cache = Path(os.environ.get("MCUFLOW_CACHE_DIR", Path.home() / ".cache" / "mcuflow")) / "firmware"
    target = cache / f"{board.name}-{harness}-{key}"
    if not (target / "firmware.elf").is_file():  # a concurrent build of the same content swaps in the same bytes
        _commit(_staged_build(program, board, target, harness), target)
    return _firmware_in(target, board)


def _physical_bytes(a: np.ndarray, spec: dict) -> bytes:
    return np.ascontiguousarray(_core.to_physical(a, spec["layout"])).tobytes()


def write_input_files(work_dir: Path, program: Program, samples: list[list[np.ndarray]]) -> None:
    """in_<k>_<i>.bin for the harnesses (firmware/harness/harness_io.h): sample k, input i."""
    for k, sample in enumerate(samples):
        for i, (x, spec) in enumerate(zip(sample, program.inputs)):
            (work_dir / f"in_{k}_{i}.bin").write_bytes(_physical_bytes(x, spec))


def run_harness(elf: Path, board_name: str, work_dir: Path, timeout: float) -> str:
    """Runs a harness firmware in `work_dir` (its host files); returns its console output.
    A hang, a QEMU failure or a non-zero exit raises DeviceError naming the cause."""
    try:
        result = qemu_run(elf, board_name, timeout_s=timeout, cwd=work_dir)
    except QemuTimeoutError:
        raise DeviceError(f"{board_name}: the firmware did not finish within {timeout:g} s and was killed "
                          f"(raise --timeout for large inputs)") from None
    except QemuError as e:
        raise DeviceError(f"{board_name}: {e}") from None
    failed = re.search(r"mcuflow: run failed: (\w+)", result.stdout)
    if failed and failed[1] in RUNTIME_ERRORS and result.exit_code == EXIT_RUNTIME_BASE + RUNTIME_ERRORS.index(failed[1]):
        # the host's message for the same failure: the samples before it printed their counts
        raise run_failure(failed[1], len(re.findall(r"mcuflow: sample \d+ instructions", result.stdout)))
    if result.exit_code != 0:
        raise DeviceError(f"{board_name}: firmware exited with code {result.exit_code}"
                          f"{_exit_reason(result.exit_code)}: {_last_line(result.stdout + result.stderr)}")
    return result.stdout


def run_elf_on_inputs(fw: FirmwareBuild, program: Program, samples: list[list[np.ndarray]], board_name: str,
                      timeout: float = 120.0) -> tuple[list[list[np.ndarray]], list[int]]:
    """Runs a built firmware over `samples` (each one array per input, logical layout, batch 1).
    Returns per-sample outputs (logical layout) and per-sample instruction counts."""
    with tempfile.TemporaryDirectory(prefix="mcuflow-run-") as work:
        w = Path(work)
        (w / "batch.bin").write_bytes(np.uint32(len(samples)).tobytes())
        write_input_files(w, program, samples)
        stdout = run_harness(fw.elf, board_name, w, timeout)
        counts = [int(m) for m in re.findall(r"mcuflow: sample \d+ instructions (\d+)", stdout)]
        outputs = []
        for k in range(len(samples)):
            outs = []
            for j, spec in enumerate(program.outputs):
                raw = (w / f"out_{k}_{j}.bin").read_bytes()
                phys = np.frombuffer(raw, dtype=spec["dtype"]).reshape(spec["physical_shape"])
                # to_logical takes physical bytes carrying the logical shape
                outs.append(_core.to_logical(phys.reshape(spec["shape"]), spec["layout"]))
            outputs.append(outs)
        return outputs, counts


def _exit_reason(code: int) -> str:
    if code >= EXIT_RUNTIME_BASE and code - EXIT_RUNTIME_BASE < len(RUNTIME_ERRORS):
        return f" (runtime error {RUNTIME_ERRORS[code - EXIT_RUNTIME_BASE]})"
    return {2: " (input/output file error)", 3: " (arena too small)", 0xF1: " (HardFault)"}.get(code, "")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def run_on_board(program: Program, inputs, board_name: str, timeout: float = 120.0) -> list[np.ndarray]:
    """Like Program.run, on an emulated board: the batch dimension is iterated on the device."""
    arrays, batch, batched = program._batched_inputs(inputs)
    samples = [[a[b:b + 1] if batched else a for a in arrays] for b in range(batch)]
    fw = cached_build(program, board_name)
    outputs, _ = run_elf_on_inputs(fw, program, samples, board_name, timeout)
    per_output = list(zip(*outputs))
    return [np.concatenate(o, axis=0) if batched else o[0] for o in per_output]


# --- CLI ---------------------------------------------------------------------------------

def cmd_firmware(args) -> int:
    program = Program.load(args.program)
    fw = build(program, args.board, args.output)
    info = fw.info or {}
    print(f"wrote {fw.elf}, {fw.map.name}, {fw.bin.name} and generated sources in {Path(args.output) / 'generated'}")
    if info:
        print(f"compiler: {info.get('compiler', '?')}; flags recorded in {fw.build_info}")
    return 0


def add_commands(sub) -> None:
    f = sub.add_parser("firmware", help="build firmware that runs a program on a board")
    f.add_argument("program")
    f.add_argument("--board", required=True, help="qemu-m0, qemu-m3, qemu-m4, qemu-m7, qemu-m33, qemu-m55, stm32f405")
    f.add_argument("-o", "--output", required=True,
                   help="output directory, replaced whole at the end (one holding other files is refused)")
    f.set_defaults(func=cmd_firmware)
