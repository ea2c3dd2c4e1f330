"""What a firmware compiles and links for a set of kernels: the runtime sources (with the
adapters of each tier), the kernel sources, and the generated kernel table. The one generator
of both builds: ``mcuflow firmware`` (``device.py``) calls it, and the CMake integration
(``firmware/cmake/mcuflow_runtime.cmake``) runs this file as a script at configure time and
includes the list it writes::

    python3 python/mcuflow/firmware_sources.py [--program model.mfp] [--kernel K]... -o DIR

writes ``DIR/mcuflow_kernels.h``, ``DIR/kernel_table.cpp`` and ``DIR/mcuflow_sources.cmake``
(``MCUFLOW_KERNELS``, ``MCUFLOW_ARENA_BYTES``, ``MCUFLOW_RUNTIME_SOURCES`` built -Os,
``MCUFLOW_KERNEL_SOURCES`` built -O3). A program's kernels are the ones its op records name by
kernel id (a device image without metadata works too). A bad file or kernel name is one line
on stderr and exit status 1.

Standard library only, and no imports from the package, so it runs as a plain script.
"""

from __future__ import annotations

import os
import re
import struct
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

__all__ = ["source_root", "TIERS", "RUNTIME_OPS", "FirmwareSourcesError", "kernel_tier", "kernel_tiers", "runtime_sources",
           "kernel_sources", "kernel_ids", "PROGRAM_MAGIC", "op_kernel_ids", "program_kernels", "KERNELS_HEADER",
           "kernel_table_source"]

TIERS = ("reference", "scalar", "dsp", "mve")
# Ops Session::run performs itself (runtime/src/ops): no kernels/ source of their own.
RUNTIME_OPS = {"read_input_rows"}
# Kernels that run another kernel: a ring kernel convolves the ring's window with the plain one.
KERNEL_CALLS = {"ring_conv_s8": ("conv_s8",), "ring_dwconv_s8": ("dwconv_s8",),
                "ring_conv_f32": ("conv_f32",), "ring_dwconv_f32": ("dwconv_f32",),
                "dwconv_s16_mve": ("dwconv_s16",),  # its int64 walk where int32 is not provably exact
                # the int16 DSP kernels run their reference where int32 is not provably exact
                "conv_s16_1x1_dsp": ("conv_s16",), "conv_s16_dsp": ("conv_s16",), "dwconv_s16_dsp": ("dwconv_s16",),
                "fc_s16_dsp": ("fc_s16",),
                # the float MVE kernels run their reference where MVE's flush-to-zero could differ
                "conv_f32_mve": ("conv_f32",), "fc_f32_mve": ("fc_f32",), "dwconv_f32_mve": ("dwconv_f32",),
                # the int4-weight kernels build their int8 kernel's inputs in their scratch, then run it
                "conv_s8_w4_1x1_mve": ("conv_s8_1x1_mve",), "conv_s8_w4_mve": ("conv_s8_mve",),
                "fc_s8_w4_mve": ("fc_s8_mve",), "conv_s8_w4_1x1_dsp": ("conv_s8_dsp",),
                "conv_s8_w4_dsp": ("conv_s8_dsp",), "fc_s8_w4_dsp": ("fc_s8_dsp",),
                "dwconv_s8_w4_mve": ("dwconv_s8_mve",), "dwconv_s8_w4_dsp": ("dwconv_s8_dsp",)}
KERNEL_ID_HEADER = Path("runtime") / "include" / "mcuflow" / "runtime" / "kernel_id.h"

# docs/program_format.md: op_count u16 at 22, ops_offset u32 at 32, arena_bytes u32 at 64; each
# 28-byte op record starts with its u16 kernel id.
PROGRAM_MAGIC = b"MFP1"
_OP_RECORD_BYTES = 28


def source_root() -> Path:
    """The tree holding runtime/, kernels/ and firmware/: MCUFLOW_SOURCE_DIR when set; else the
    copy an installed wheel carries in mcuflow/sources (python/CMakeLists.txt puts it there);
    else the repository this file lies in (python/mcuflow/ of a checkout or an editable install)."""
    env = os.environ.get("MCUFLOW_SOURCE_DIR")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent
    packaged = here / "sources"
    return packaged if (packaged / "runtime" / "src").is_dir() else here.parents[1]


class FirmwareSourcesError(Exception):
    """A kernel without a source, or a file that is not an mcuflow program."""


def kernel_tier(kernel: str) -> str:
    """Optimized kernels are named <op>_<variant>_<tier>; the rest are reference kernels."""
    suffix = kernel.rsplit("_", 1)[-1]
    return suffix if suffix in TIERS[1:] else "reference"


def kernel_tiers(kernels: Sequence[str]) -> List[str]:
    """The tiers whose adapters ``kernels`` need, in TIERS order: the reference tier always, and
    the scalar tier with any other (the DSP and MVE adapters share its table checks)."""
    used = {kernel_tier(k) for k in kernels} | {"reference"}
    if used - {"reference"}:
        used.add("scalar")
    return [t for t in TIERS if t in used]


def runtime_sources(root: Path, tiers: Sequence[str] = ("reference",)) -> List[Path]:
    """The runtime (loader, verifier, executor, reference adapters) and the adapters of `tiers`."""
    ops = root / "runtime" / "src" / "ops"
    sources = sorted((root / "runtime" / "src").glob("*.cpp")) + sorted(ops.glob("*.cpp"))
    for tier in tiers:
        if tier != "reference":
            sources += sorted((ops / tier).glob("*.cpp"))
    return [s for s in sources if s.name != "all_kernels.cpp"]


def kernel_sources(root: Path, kernels: Sequence[str]) -> List[Path]:
    """One source per kernel, kernels/<tier>/<kernel>.cpp, in the order given, each followed by the
    kernels it calls (once)."""
    sources = []
    for k in dict.fromkeys(c for k in kernels for c in (k, *KERNEL_CALLS.get(k, ()))):
        if k in RUNTIME_OPS:
            continue
        source = root / "kernels" / kernel_tier(k) / f"{k}.cpp"
        if not source.is_file():
            known = ", ".join(sorted(p.stem for p in (root / "kernels").glob("*/*.cpp")))
            raise FirmwareSourcesError(f"unknown kernel '{k}' (no {source}); known: {known}")
        sources.append(source)
    return sources


def kernel_ids(root: Path) -> Dict[str, int]:
    """Kernel name -> id, from the list the runtime is built from (MCUFLOW_KERNELS in kernel_id.h)."""
    text = (root / KERNEL_ID_HEADER).read_text()
    return {name: int(i) for name, i in re.findall(r"X\(([a-z0-9_]+), ([0-9]+)[,)]", text)}


def op_kernel_ids(data: bytes, where: str = "the program") -> List[int]:
    """The kernel id of each of a program's op records, in op order (read before any check of the
    program, so a refused program's ops can be named too)."""
    if data[:4] != PROGRAM_MAGIC:
        raise FirmwareSourcesError(f"{where} is not an mcuflow program (.mfp)")
    if len(data) < 68:
        raise FirmwareSourcesError(f"{where} is truncated (no program header)")
    (op_count,) = struct.unpack_from("<H", data, 22)
    (ops_offset,) = struct.unpack_from("<I", data, 32)
    if ops_offset + op_count * _OP_RECORD_BYTES > len(data):
        raise FirmwareSourcesError(f"{where} is truncated (its {op_count} op records do not fit)")
    return [struct.unpack_from("<H", data, ops_offset + _OP_RECORD_BYTES * i)[0] for i in range(op_count)]


def program_kernels(data: bytes, ids: Dict[str, int], where: str = "the program") -> List[str]:
    """The kernels a program's op records name, sorted, each once."""
    names = {i: name for name, i in ids.items()}
    kernels = set()
    for i, kid in enumerate(op_kernel_ids(data, where)):
        if kid not in names:
            raise FirmwareSourcesError(f"{where}: op {i} uses kernel id {kid}, unknown to this mcuflow")
        kernels.add(names[kid])
    return sorted(kernels)


def program_arena_bytes(data: bytes) -> int:
    return struct.unpack_from("<I", data, 64)[0]


KERNELS_HEADER = """// Generated by mcuflow.
#pragma once
#include "mcuflow/runtime/runtime.h"

// The kernels this firmware links, indexed by kernel id: pass it to mcuflow::Program::load.
mcuflow::KernelTable mcuflow_kernels();
"""


def kernel_table_source(kernels: Sequence[str], ids: Dict[str, int]) -> str:
    """kernel_table.cpp: the kernels given, and only those, are linked. The table ends at the
    largest id used: Program::load reports higher ids as not linked."""
    count = max((ids[k] for k in kernels), default=0) + 1
    slots = ["nullptr"] * count
    for k in kernels:
        slots[ids[k]] = f"&mcuflow::ops::kernel_entry_{k}"
    return ("// Generated by mcuflow: the kernels this firmware uses, and only those, are linked.\n"
            "#include \"mcuflow/runtime/kernel_entries.h\"\n#include \"mcuflow_kernels.h\"\n\n"
            "namespace {\nconst mcuflow::KernelEntry* const kKernels[] = {\n    "
            + ",\n    ".join(slots) + ",\n};\n}  // namespace\n\n"
            "mcuflow::KernelTable mcuflow_kernels() {\n"
            f"  return mcuflow::KernelTable{{kKernels, {count}}};\n}}\n")


def write_kernel_table(out_dir: Path, kernels: Sequence[str], ids: Dict[str, int]) -> Path:
    """Writes mcuflow_kernels.h and kernel_table.cpp into `out_dir`; returns the source."""
    (out_dir / "mcuflow_kernels.h").write_text(KERNELS_HEADER)
    table = out_dir / "kernel_table.cpp"
    table.write_text(kernel_table_source(kernels, ids))
    return table


def _cmake_list(name: str, values) -> str:
    return f"set({name}\n" + "".join(f"  \"{v}\"\n" for v in values) + ")\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: firmware_sources.py [--program model.mfp] [--kernel K]... -o DIR"
    program, kernels, out = None, [], None
    while args:
        flag = args.pop(0)
        if flag in ("--program", "--kernel", "-o") and args:
            value = args.pop(0)
            if flag == "--program":
                program = value
            elif flag == "--kernel":
                kernels.append(value)
            else:
                out = Path(value)
        else:
            print(usage, file=sys.stderr)
            return 1
    if out is None or (program is None and not kernels):
        print(usage, file=sys.stderr)
        return 1
    root = source_root()
    ids = kernel_ids(root)
    arena_bytes = 0
    try:
        unknown = [k for k in kernels if k not in ids]
        if unknown:
            kernel_sources(root, unknown)  # names the kernel without a source
            raise FirmwareSourcesError(f"kernel '{unknown[0]}' has no kernel id in {root / KERNEL_ID_HEADER}")
        if program is not None:
            try:
                data = Path(program).read_bytes()
            except OSError as e:
                raise FirmwareSourcesError(f"cannot read mcuflow program {program}: {e.strerror}") from None
            kernels += program_kernels(data, ids, program)
            arena_bytes = program_arena_bytes(data)
        kernels = sorted(set(kernels))  # the link order, like `mcuflow firmware`'s
        sources = kernel_sources(root, kernels)
    except FirmwareSourcesError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    table = write_kernel_table(out, kernels, ids)
    (out / "mcuflow_sources.cmake").write_text(
        "# Generated by mcuflow (python/mcuflow/firmware_sources.py).\n"
        + _cmake_list("MCUFLOW_KERNELS", kernels) + f"set(MCUFLOW_ARENA_BYTES {arena_bytes})\n"
        + _cmake_list("MCUFLOW_RUNTIME_SOURCES", [p.as_posix() for p in runtime_sources(root, kernel_tiers(kernels))]
                      + [table.as_posix()])
        + _cmake_list("MCUFLOW_KERNEL_SOURCES", [p.as_posix() for p in sources]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
