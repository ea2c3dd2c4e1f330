"""The board table agrees with the firmware tree (no cross toolchain needed)."""

from __future__ import annotations

import re
import subprocess
import sys
from fractions import Fraction

import pytest

from fwutil import BOARD_NAMES, FIRMWARE, PYTHON_DIR, boards, crossbuild
from mcuflow import boardfile

EXPECTED = {
    "qemu-m0": ("microbit", "cortex-m0"),
    "qemu-m3": ("mps2-an385", "cortex-m3"),
    "qemu-m4": ("mps2-an386", "cortex-m4"),
    "qemu-m7": ("mps2-an500", "cortex-m7"),
    "qemu-m33": ("mps2-an505", "cortex-m33"),
    "qemu-m55": ("mps3-an547", "cortex-m55"),
    "stm32f405": ("netduinoplus2", "cortex-m4"),
}


def test_the_boards():
    assert sorted(BOARD_NAMES) == sorted(EXPECTED)
    for name, (machine, cpu) in EXPECTED.items():
        b = boards.get_board(name)
        assert b.qemu_machine == machine
        assert b.mcpu == cpu
        assert f"-mcpu={cpu}" in b.cpu_flags


def test_unknown_board_has_clear_error():
    with pytest.raises(boards.UnknownBoardError) as ei:
        boards.get_board("qemu-m99")
    msg = str(ei.value)
    assert "unknown board 'qemu-m99'" in msg
    for name in EXPECTED:
        assert name in msg
    assert isinstance(ei.value, KeyError)


def test_float_and_vector_flags():
    assert "-mfpu=fpv4-sp-d16" in boards.get_board("qemu-m4").cpu_flags
    assert "-mfloat-abi=hard" in boards.get_board("qemu-m4").cpu_flags
    assert "-mfpu=fpv5-d16" in boards.get_board("qemu-m7").cpu_flags
    m55 = boards.get_board("qemu-m55")
    assert "-mfloat-abi=hard" in m55.cpu_flags and m55.has_mve and m55.tier == "mve"
    assert not any(f.startswith("-mfpu") for f in boards.get_board("qemu-m0").cpu_flags)
    assert [b.name for b in boards.BOARDS.values() if b.has_dsp] == [
        "qemu-m4", "qemu-m7", "qemu-m33", "qemu-m55", "stm32f405", "pico2"]


def test_memory_maps_from_the_brief():
    m0 = boards.get_board("qemu-m0")
    assert (m0.region("FLASH").base, m0.region("FLASH").size) == (0x0, 256 * 1024)
    assert (m0.region("RAM").base, m0.region("RAM").size) == (0x20000000, 16 * 1024)
    m33 = boards.get_board("qemu-m33")
    assert m33.region(m33.code_region).base == 0x10000000
    assert m33.region(m33.ram_region).base == 0x38000000
    m55 = boards.get_board("qemu-m55")
    assert (m55.region("ITCM").base, m55.region("ITCM").size) == (0x0, 512 * 1024)
    assert (m55.region("DTCM").base, m55.region("DTCM").size) == (0x20000000, 512 * 1024)
    assert (m55.region("SRAM").base, m55.region("SRAM").size) == (0x01000000, 2 * 1024 * 1024)
    # RM0090: flash 1 MiB at 0x08000000; SRAM1 112 KiB + SRAM2 16 KiB at 0x20000000
    f4 = boards.get_board("stm32f405")
    assert [(r.name, r.base, r.size) for r in f4.regions] == [
        ("FLASH", 0x08000000, 1024 * 1024), ("SRAM1", 0x20000000, 112 * 1024), ("SRAM2", 0x2001C000, 16 * 1024)]


@pytest.mark.parametrize("name", BOARD_NAMES)
def test_icount_shift_is_smallest_with_one_tick_per_instruction_at_most(name):
    b = boards.get_board(name)
    tick = Fraction(10**9, b.tick_hz)
    assert tick <= 2 ** b.icount_shift, "every instruction must move the timer"
    assert tick > 2 ** (b.icount_shift - 1), "K should be the smallest that works"


def _defines(text):
    return {m.group(1): m.group(2) for m in re.finditer(r"#define\s+(MCUFLOW_\w+)\s+(\S+)", text)}


@pytest.mark.parametrize("name", BOARD_NAMES)
def test_board_c_conversion_matches_table(name):
    b = boards.get_board(name)
    d = _defines((FIRMWARE / "boards" / name / "board.c").read_text())
    num = int(d["MCUFLOW_TICK_NUM"].rstrip("u"))
    shift = int(d["MCUFLOW_TICK_SHIFT"])
    assert Fraction(num, 2**shift) == Fraction(10**9, b.tick_hz) / 2 ** b.icount_shift
    base = d.get("MCUFLOW_CMSDK_TIMER_BASE")
    if base is not None:
        assert int(base.rstrip("u"), 16) == b.timer_base


_MEM_RE = re.compile(r"^\s*(\w+)\s*\((\w+)\)\s*:\s*ORIGIN\s*=\s*(0x[0-9A-Fa-f]+),\s*LENGTH\s*=\s*(\d+)([KM]?)",
                     re.M)


def linker_script_text(name, tmp_path):
    """The linker script generated from the board's board file, as a build generates it."""
    return boardfile.board_linker_script(boardfile.board_file(name), tmp_path).read_text()


@pytest.mark.parametrize("name", BOARD_NAMES)
def test_link_ld_matches_table(name, tmp_path):
    b = boards.get_board(name)
    text = linker_script_text(name, tmp_path)
    regions = {}
    for m in _MEM_RE.finditer(text):
        size = int(m.group(4)) * {"": 1, "K": 1024, "M": 1024 * 1024}[m.group(5)]
        regions[m.group(1)] = (int(m.group(3), 16), size)
    assert regions == {r.name: (r.base, r.size) for r in b.regions}
    assert f"}} > {b.code_region}" in text
    assert f"> {b.ram_region} AT > {b.code_region}" in text  # .data: VMA RAM, LMA flash
    for r in b.regions:
        if r.arena_section:
            assert re.search(re.escape(r.arena_section) + r" \(NOLOAD\)[^}]*\}\s*> " + r.name, text)
    assert re.search(r"\.mcuflow_arena \(NOLOAD\)[^}]*\}\s*> " + b.arena_region, text)
    assert b.arena.kind == "ram"
    for sym in ("__init_array_start", "__preinit_array_start", "__fini_array_start",
                "__stack_limit__", "__stack_top__", "__data_load__", "__bss_start__"):
        assert sym in text
    assert ".eh_frame" in text
    assert "__heap_size__ = 0;" in text
    m = re.search(r"__stack_size__ = DEFINED\(__stack_size__\) \? __stack_size__ : (0x[0-9A-F]+);", text)
    assert m and int(m.group(1), 16) == b.default_stack_size


@pytest.mark.parametrize("name", boards.board_names())
def test_board_cmake_is_generated_from_the_table(name):
    b = boards.get_board(name)
    text = (FIRMWARE / "boards" / name / "board.cmake").read_text()
    assert text == boards.board_cmake(b), f"regenerate firmware/boards/{name}/board.cmake with boards.board_cmake"
    m = re.search(r"set\(MCUFLOW_BOARD_CPU_FLAGS ([^)]*)\)", text)
    assert m and tuple(m.group(1).split()) == b.cpu_flags
    assert (f"set(MCUFLOW_BOARD_QEMU_MACHINE {b.qemu_machine})" in text) == b.emulated
    assert (f"set(MCUFLOW_BOARD_ICOUNT_SHIFT {b.icount_shift})" in text) == b.emulated
    assert ("set(MCUFLOW_BOARD_CONSOLE uart)" in text) == (b.console == "uart")


def _readme_board_rows():
    text = (FIRMWARE / "README.md").read_text()
    header = "| board | QEMU `-M` | core, gcc flags | memory (link.ld regions) |"
    lines = text[text.index(header):].split("\n")[2:]
    rows = lines[:next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    return {cells[0]: cells for cells in ([c.strip() for c in row.strip("|").split("|")] for row in rows)}


def test_the_firmware_readme_board_table_is_the_board_table():
    rows = _readme_board_rows()
    assert sorted(rows) == sorted(BOARD_NAMES)
    for name, (_, machine, flags, memory, arena, _timer, _tick, shift) in rows.items():
        b = boards.get_board(name)
        assert machine == b.qemu_machine, name
        assert f"-mcpu={b.mcpu}" in flags or "flags as" in flags, name
        assert arena == b.arena_region, name
        assert shift.split()[0] == str(b.icount_shift), name
        if not memory.startswith("as "):
            listed = re.findall(r"(\w+) (0x[0-9A-Fa-f]+) (\d+) ([KM])iB", memory)
            assert [(n, int(base, 16), int(size) * {"K": 1024, "M": 1024 * 1024}[u]) for n, base, size, u in listed] \
                == [(r.name, r.base, r.size) for r in b.regions], name


def test_toolchain_file_has_no_cpu():
    text = (FIRMWARE / "cmake" / "arm-none-eabi.cmake").read_text()
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert "-mcpu" not in code and "-mfpu" not in code
    for flag in ("-ffunction-sections", "-fdata-sections", "--gc-sections", "-fno-exceptions", "-fno-rtti"):
        assert flag in code


def test_modules_import_without_torch():
    code = (
        "import sys, importlib, types\n"
        "sys.modules['torch'] = None\n"  # any 'import torch' now fails
        f"stub = types.ModuleType('mcuflow'); stub.__path__ = [{str(PYTHON_DIR / 'mcuflow')!r}]\n"
        "sys.modules['mcuflow'] = stub\n"
        "for m in ('boards', 'boardfile', 'crossbuild', 'qemu', 'uart'): importlib.import_module('mcuflow.' + m)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_overflow_message():
    stderr = ("/usr/bin/arm-none-eabi-ld: firmware.elf section `.bss' will not fit in region `RAM'\n"
              "/usr/bin/arm-none-eabi-ld: region `RAM' overflowed by 4200 bytes\n")
    msgs = crossbuild.parse_memory_overflow(stderr, "qemu-m0")
    assert len(msgs) == 1
    assert msgs[0].startswith("needs 21 KiB of RAM, board has 16 KiB")
    msgs = crossbuild.parse_memory_overflow("region `FLASH' overflowed by 10 bytes", "qemu-m0")
    assert msgs[0].startswith("needs 257 KiB of code memory, board has 256 KiB")
    assert crossbuild.parse_memory_overflow("undefined reference to `foo'", "qemu-m0") == []


def test_firmware_error_carries_stderr():
    e = crossbuild.FirmwareError("compiling x.c failed", stderr="x.c:1: error: boom")
    assert "x.c:1: error: boom" in str(e)
    assert e.stderr == "x.c:1: error: boom"
