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
import tempfile
from pathlib import Path

import numpy as np

from . import _core
from .api import Program, load_failure_message
from .boards import KiB, board_named
from .boardfile import firmware_dir
from .crossbuild import FirmwareBuild, FirmwareError, build_firmware, compiler_version, memory_overflows, tool_path
from .errors import DeviceError, InputError, run_failure
from .fit import flash_advice, ram_advice
from .firmware_sources import kernel_sources, kernel_tier, runtime_sources, write_kernel_table
from .firmware_sources import source_root as firmware_source_root
from .memory_map import arena_regions, program_region
from .outputs import commit_dir, discard_dir, staging_dir
from .qemu import QemuError, QemuTimeoutError, run as qemu_run
from .uf2 import UF2Error, write_uf2

EXIT_RUNTIME_BASE = 16  # firmware/harness/harness_io.h: 16 + mcuflow::Error
# firmware/harness/<name>.cpp: run over input files, benchmark, many programs, init by phase
HARNESSES = ("main", "bench", "programs", "init_phases")
# A harness's own defines for every source it is built with: init_phases turns on the runtime's
# phase marks (runtime/include/mcuflow/runtime/load_profile.h), which other builds compile out.
HARNESS_DEFINES = {"init_phases": {"MCUFLOW_LOAD_PROFILE": None}}
RUNTIME_ERRORS = _core.error_names()


def named_errors(console: str) -> str:
    """A harness's console output with each "error <code>" (the device prints codes, no names:
    firmware/harness/harness_io.h) as the runtime's name for it."""
    return re.sub(r"\berror (\d+)\b",
                  lambda m: RUNTIME_ERRORS[int(m[1])] if int(m[1]) < len(RUNTIME_ERRORS) else m[0], console)


def source_root() -> Path:
    """The mcuflow source tree holding runtime/, kernels/ and firmware/ (firmware_sources.source_root)."""
    root = firmware_source_root()
    if not (root / "runtime" / "src").is_dir():
        raise DeviceError(f"mcuflow sources not found at {root}; set MCUFLOW_SOURCE_DIR")
    return root


def used_kernels(program: Program) -> list[str]:
    return sorted(set(program.kernels))


def board_tiers(board) -> list[str]:
    """Armv6-M (scalar tier) code runs on every core."""
    return ["reference", "scalar"] + (["dsp"] if board.has_dsp else []) + (["mve"] if board.has_mve else [])


def check_tiers(program: Program, board) -> None:
    """A program compiled for a DSP or MVE core needs a board with those instructions."""
    missing = sorted({k for k in used_kernels(program) if kernel_tier(k) not in board_tiers(board)})
    if missing:
        raise DeviceError(f"program compiled for {program.metadata.get('target')} uses {', '.join(missing)}; "
                          f"board {board.name} ({board.core}) lacks the {kernel_tier(missing[0]).upper()} "
                          f"instructions: compile with --target {board.core}")
    # the DSP tier's float kernels use the FPU (VMLA.F32): a soft-float build of the core lacks it
    needs_fpu = sorted(k for k in used_kernels(program) if kernel_tier(k) == "dsp" and "_f32" in k)
    if needs_fpu and not board.has_fpu:
        raise DeviceError(f"program compiled for {program.metadata.get('target')} uses {', '.join(needs_fpu)}; "
                          f"board {board.name} builds without hardware float (its cpu_flags): compile for a core "
                          f"without an FPU (--target cortex-m3)")


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
        "#include \"mcuflow/runtime/runtime.h\"\n#include \"mcuflow_kernels.h\"  // mcuflow_kernels()\n\n"
        f"#define MCUFLOW_REGION_COUNT {len(program.region_bytes)}u\n"
        f"#define MCUFLOW_PROGRAM_BYTES {len(image)}u\n\n"
        "extern \"C\" const uint8_t mcuflow_program[];\nextern \"C\" const uint8_t mcuflow_program_end[];\n"
        "inline uint32_t mcuflow_program_size() { return uint32_t(mcuflow_program_end - mcuflow_program); }\n"
        "const mcuflow::Span<uint8_t>* firmware_arena_regions();  // MCUFLOW_REGION_COUNT spans, region 0 first\n")
    sizes = [max(n, 16) for n in program.region_bytes]
    sections = [r.arena_section for r in arena_regions(program, board)]
    (out_dir / "arena.cpp").write_text(
        "// Generated by mcuflow: one arena buffer per memory region of the plan, in the board's section.\n"
        "#include \"mcuflow_model.h\"\n\nnamespace {\n"
        + "".join(f"alignas(16) uint8_t g_region{i}[{n}] __attribute__((section(\"{s}\")));\n"
                  for i, (n, s) in enumerate(zip(sizes, sections)))
        + "const mcuflow::Span<uint8_t> kRegions[] = {"
        + ", ".join(f"{{g_region{i}, {n}u}}" for i, n in enumerate(sizes)) + "};\n}  // namespace\n\n"
        "const mcuflow::Span<uint8_t>* firmware_arena_regions() { return kRegions; }\n")
    table = write_kernel_table(out_dir, kernels, _core.kernel_ids())
    return [out_dir / "program.S", table, out_dir / "arena.cpp"]


def check_fits(program: Program, board_name: str) -> None:
    """Fails early, before compiling, when a planned region cannot fit its board region."""
    board = board_named(board_name)
    regions = arena_regions(program, board)
    for region, planned in zip(regions, program.region_bytes):
        stack = board.default_stack_size if region.name == board.ram_region else 0
        need = planned + stack
        if need > region.size:
            where = f" in {region.name}" if len(regions) > 1 else ""
            raise DeviceError(f"{board.name}: needs {-(-need // KiB)} KiB of RAM{where}, board has "
                              f"{region.size // KiB} KiB (arena {planned} bytes + stack {stack} bytes)\n  "
                              + ram_advice(program.describe(), need - region.size))


def _harness_source(root: Path, harness: str) -> Path:
    if harness not in HARNESSES:
        raise InputError(f"unknown firmware harness '{harness}' ({', '.join(HARNESSES)})")
    return root / "firmware" / "harness" / f"{harness}.cpp"


_FIRMWARE_INPUTS = {".h", ".c", ".cpp", ".S", ".ld", ".json"}  # .json: board files
# What a firmware build writes into its directory (generate_sources, build_firmware, _build_into).
FIRMWARE_OUTPUTS = {"firmware.elf", "firmware.map", "firmware.bin", "firmware.uf2", "build_info.json", "program.mfp",
                    "link.ld", "generated", "obj"}


def _build_digest(root: Path, harness: str) -> str:
    """Everything besides the program that decides a firmware image: the cross compiler, the
    modules that generate sources, choose flags and define boards, and every file a build may
    read (sources, headers anywhere below runtime/, kernels/ and firmware/, linker scripts, board
    files) with its path (debug info names it), so a change to any rebuilds."""
    h = hashlib.sha256(f"{tool_path('gcc')}\n{compiler_version()}\n".encode())
    for module in ("crossbuild.py", "device.py", "firmware_sources.py", "memory_map.py", "boards.py", "boardfile.py",
                   "uf2.py"):
        h.update(Path(__file__).with_name(module).read_bytes())
    trees = [root / d for d in ("runtime", "kernels", "firmware")] + [firmware_dir()]
    files = [_harness_source(root, harness)] + sorted(
        {f for d in trees for f in d.rglob("*") if f.suffix in _FIRMWARE_INPUTS})
    for f in files:
        h.update(str(f).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _overflow_advice(program: Program, stderr: str, board) -> str:
    """What sets each overflowed region's use, as lines to follow the linker's totals."""
    lines, d = [], program.describe()
    for name, over in memory_overflows(stderr):
        try:
            kind = board.region(name).kind
        except KeyError:
            continue
        advice = ram_advice if kind == "ram" else flash_advice
        lines.append(f"{name}: " + advice(d, over))
    return "".join("\n  " + line for line in lines)


def check_board(program: Program, board) -> None:
    """The board can run the program: its instructions (check_tiers) and its RAM (check_fits).
    Commands call it before their first progress line, so bad input stays one line."""
    check_fits(program, board)
    check_tiers(program, board)


def _build_into(program: Program, board, out: Path, harness: str) -> None:
    """Generates and builds the firmware in the new directory `out`."""
    check_board(program, board)
    root = source_root()
    generated = generate_sources(program, out / "generated", board)
    kernels = kernel_sources(root, used_kernels(program))
    sources = runtime_sources(root, board_tiers(board)) + [_harness_source(root, harness)] + generated
    try:
        build_firmware(board, sources, out, o3_sources=kernels, defines=HARNESS_DEFINES.get(harness),
                       include_dirs=[root / "runtime" / "include", root / "kernels" / "include", out / "generated"])
    except FirmwareError as e:
        msg = e.message
        if "needs" in msg and "KiB" in msg:
            raise DeviceError(f"{board.name}: {msg}{_overflow_advice(program, e.stderr, board)}") from None
        raise DeviceError(f"firmware build for {board.name} failed: {e}") from None
    if board.uf2_family:  # what a USB boot loader takes (pico2: the RP2350 boot ROM)
        try:
            write_uf2(out / "firmware.elf", out / "firmware.uf2", board.uf2_family)
        except UF2Error as e:
            raise DeviceError(f"{board.name}: {e}") from None
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
        discard_dir(staging)
        raise
    return staging


def _commit(staging: Path, target: Path) -> None:
    try:
        commit_dir(staging, target)
    except OSError as e:
        discard_dir(staging)
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
    board = board_named(board_name)
    out = Path(out_dir).absolute()
    _check_replaceable(out)
    _commit(_staged_build(program, board, out, harness), out)
    return _firmware_in(out, board)


def cached_build(program: Program, board_name: str, harness: str = "main") -> FirmwareBuild:
    """Builds once per content: the program's bytes, the board, the harness and everything else
    that decides the image (_build_digest); later calls, from any directory, reuse the ELF."""
    board = board_named(board_name)
    key = hashlib.sha256("\0".join([hashlib.sha256(program.data).hexdigest(), repr(board),
                                     Path(board.support_source).read_text(), harness,
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


def run_harness(elf: Path, board_name: str, work_dir: Path, timeout: float, program: Program | None = None) -> str:
    """Runs a harness firmware in `work_dir` (its host files); returns its console output.
    A hang, a QEMU failure or a non-zero exit raises DeviceError naming the cause (for a program
    the board rejects, the op or tensor, named from `program`'s records and metadata)."""
    try:
        result = qemu_run(elf, board_name, timeout_s=timeout, cwd=work_dir)
    except QemuTimeoutError:
        raise DeviceError(f"{board_name}: the firmware did not finish within {timeout:g} s and was killed "
                          f"(raise --timeout for large inputs)") from None
    except QemuError as e:
        raise DeviceError(f"{board_name}: {e}") from None
    stdout = named_errors(result.stdout)
    if program is not None:
        stdout = re.sub(r"(program rejected: )(.*)", lambda m: m[1] + load_failure_message(m[2], program.data), stdout)
    failed = re.search(r"mcuflow: run failed: (\w+)", stdout)
    if failed and failed[1] in RUNTIME_ERRORS and result.exit_code == EXIT_RUNTIME_BASE + RUNTIME_ERRORS.index(failed[1]):
        # the host's message for the same failure: the samples before it printed their counts
        raise run_failure(failed[1], len(re.findall(r"mcuflow: sample \d+ instructions", stdout)))
    if result.exit_code != 0:
        raise DeviceError(f"{board_name}: firmware exited with code {result.exit_code}"
                          f"{_exit_reason(result.exit_code)}: {_last_line(stdout + result.stderr)}")
    return stdout


def run_elf_on_inputs(fw: FirmwareBuild, program: Program, samples: list[list[np.ndarray]], board_name: str,
                      timeout: float = 120.0) -> tuple[list[list[np.ndarray]], list[int]]:
    """Runs a built firmware over `samples` (each one array per input, logical layout, batch 1).
    Returns per-sample outputs (logical layout) and per-sample instruction counts."""
    with tempfile.TemporaryDirectory(prefix="mcuflow-run-") as work:
        w = Path(work)
        (w / "batch.bin").write_bytes(np.uint32(len(samples)).tobytes())
        write_input_files(w, program, samples)
        stdout = run_harness(fw.elf, board_name, w, timeout, program)
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
