"""Board files (mcuflow.boardfile): every built-in board is its board.json, the build generates
every linker script from it, and a board file that cannot describe a board is one clear line."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import mcuflow
from mcuflow import boardfile, boards

STM32 = {
    "name": "chip",
    "regions": [
        {"name": "FLASH", "base": "0x08000000", "size": "1M", "kind": "code"},
        {"name": "SRAM1", "base": "0x20000000", "size": "112K", "kind": "ram"},
        {"name": "SRAM2", "base": "0x2001C000", "size": "16K", "kind": "ram", "arena_section": ".mcuflow_arena_sram2"},
    ],
    "code_region": "FLASH",
    "ram_region": "SRAM1",
    "stack_size": 8192,
}


def statements(script: str) -> list[str]:
    """A linker script without comments and spacing."""
    script = re.sub(r"/\*.*?\*/", "", script, flags=re.S)
    return [re.sub(r"\s+", " ", line).strip() for line in script.splitlines() if line.strip()]


@pytest.mark.parametrize("name", boards.board_names())
def test_each_built_in_board_is_its_board_file(name):
    path = boardfile.board_file(name)
    layout = boardfile.load(path)
    b = boards.get_board(name)
    assert b == boards.board_from_file(path) and b.board_file == str(path)
    assert (layout.regions, layout.code_region, layout.ram_region, layout.arena_region, layout.stack_size) == (
        b.regions, b.code_region, b.ram_region, b.arena_region, b.default_stack_size)
    for key in ("core", "cpu_flags", "qemu_machine", "console", "tier", "icount_shift"):
        assert layout.facts[key] == getattr(b, key), key


def test_the_board_files_hold_the_facts_of_each_board():
    f4 = boards.get_board("stm32f405")
    assert [(r.name, r.base, r.size) for r in f4.regions] == [
        ("FLASH", 0x08000000, 1 << 20), ("SRAM1", 0x20000000, 112 << 10), ("SRAM2", 0x2001C000, 16 << 10)]
    assert (f4.core, f4.console, f4.qemu_machine, f4.tier) == ("cortex-m4", "uart", "netduinoplus2", "dsp")
    m55 = boards.get_board("qemu-m55")
    assert (m55.arch, m55.tier, m55.has_mve, m55.has_fpu, m55.secure) == ("armv8.1-m.main", "mve", True, True, True)
    m0 = boards.get_board("qemu-m0")
    assert (m0.arch, m0.tier, m0.has_dsp, m0.has_fpu, m0.icount_shift) == ("armv6-m", "scalar", False, False, 7)


def test_no_hand_written_linker_script_is_left():
    # the build generates every board's script from its board file (crossbuild, board.cmake)
    assert sorted((boardfile.firmware_dir() / "boards").glob("*/link.ld")) == []
    cmake = (boardfile.firmware_dir() / "cmake" / "mcuflow_firmware.cmake").read_text()
    assert '"${generator}" "${board_dir}/board.json" -o "${MCUFLOW_BOARD_LINKER_SCRIPT}"' in cmake


def write(tmp_path, board) -> str:
    path = tmp_path / "board.json"
    path.write_text(json.dumps(board) if isinstance(board, dict) else board)
    return str(path)


# STM32 with the rest of a board: what `--board my_board.json` takes
FULL = dict(STM32, core="cortex-m4", cpu_flags=["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft"],
            qemu={"machine": "mps2-an386", "icount_shift": 6}, support="qemu-m4",
            timer={"name": "CMSDK APB TIMER0", "base": "0x40000000", "clock_hz": 25000000})
REMOVE = object()


def changed(base=STM32, **fields):
    board = json.loads(json.dumps(base))
    for key, value in fields.items():
        if value is REMOVE:
            del board[key]
        elif key.startswith("region_"):
            index, field = key[len("region_"):].split("_", 1)
            board["regions"][int(index)][field] = value
        else:
            board[key] = value
    return board


@pytest.mark.parametrize("board, message", [
    (changed(region_2_base="0x2001B000"),
     "regions SRAM1 (0x20000000-0x2001BFFF) and SRAM2 (0x2001B000-0x2001EFFF) overlap"),
    (changed(region_0_base="0x08000000", region_0_size="1M", region_1_base="0x080F0000"), "overlap"),
    (changed(region_2_base="0xFFFFF000"), "region SRAM2: 0xFFFFF000 + 16384 bytes ends past the 4 GiB address space"),
    (changed(stack_size=112 * 1024), "a 114688-byte stack does not fit SRAM1 (114688 bytes)"),
    (changed(stack_size=100), "stack_size must be a multiple of 8 of at least 256 bytes"),
    (changed(region_1_size="0"), "region SRAM1: base and size must be multiples of 4 and the size positive"),
    (changed(region_1_size="lots"), "region SRAM1: size must be a number"),
    (changed(region_1_kind="dram"), "region SRAM1: kind must be \"code\" or \"ram\""),
    (changed(region_1_name="SRAM 1"), "region name 'SRAM 1' is not a linker-script name"),
    (changed(region_2_name="sram1"), "two regions share a name"),
    (changed(code_region="SRAM1"), "\"code_region\" must name a code region, not 'SRAM1'"),
    (changed(ram_region="CCM"), "\"ram_region\" must name a ram region, not 'CCM'"),
    (changed(region_2_arena_section=".mcuflow_arena"), "\".mcuflow_arena\" is SRAM1's (the ram_region)"),
    (changed(region_2_arena_section=".bss"), "arena_section must be"),
    (changed(regions=[]), "needs \"regions\", a non-empty list"),
    (changed(name=7), "\"name\" must be a string"),
    (changed(arena_region="FLASH"), "\"arena_region\" must name a ram region, not 'FLASH'"),
    (changed(code_region=REMOVE), "missing \"code_region\""),
    (changed(FULL, core="cortex-m9"), "unknown core 'cortex-m9'; known cores: cortex-m0, "),
    (changed(FULL, cpu_flags=["-mcpu=cortex-m7"]), "\"cpu_flags\" must be a list of gcc flags with \"-mcpu=cortex-m4\""),
    (changed(FULL, console="jtag"), "console must be one of semihosting, uart, not 'jtag'"),
    (changed(FULL, qemu={"machine": "mps2-an386"}), "qemu \"icount_shift\" must be a whole number"),
    (changed(FULL, timer=REMOVE), "needs \"timer\""),
    (changed(FULL, support="my_board.c"), "\"support\" 'my_board.c' is neither a built-in board's name nor a C file"),
    (changed(FULL, program_fallback=["SRAM2"]), "\"program_fallback\" lists regions that have a program_section"),
    ("{not json", "is not JSON"),
])
def test_an_impossible_board_file_is_one_clear_line(tmp_path, board, message):
    path = write(tmp_path, board)
    with pytest.raises(boardfile.BoardFileError) as e:
        boardfile.load(path)
    assert message in str(e.value) and path in str(e.value) and "\n" not in str(e.value)


def test_a_full_user_board_file_is_a_board(tmp_path):
    b = boards.get_board(write(tmp_path, FULL))
    assert (b.name, b.core, b.tier, b.has_fpu, b.qemu_machine, b.icount_shift) == (
        "chip", "cortex-m4", "dsp", False, "mps2-an386", 6)
    assert b.support_source.endswith("firmware/boards/qemu-m4/board.c") and b.tick_hz == 25000000
    assert boards.get_board("chip") is b  # found by name afterwards, as build records name it
    with pytest.raises(boardfile.BoardFileError, match="'qemu-m4' is a built-in board's; give the board its own"):
        boards.get_board(write(tmp_path, changed(FULL, name="qemu-m4")))
    with pytest.raises(mcuflow.InputError, match="unknown core"):
        boards.board_named(write(tmp_path, changed(FULL, core="m4")))


def test_the_script_refuses_a_bad_board_file_with_one_line_on_stderr(tmp_path):
    script = boardfile.__file__  # runs as a plain script too (CMake builds do)
    bad = write(tmp_path, changed(region_2_base="0x2001B000"))
    p = subprocess.run([sys.executable, script, bad, "-o", str(tmp_path / "link.ld")], capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "overlap" in p.stderr
    assert not (tmp_path / "link.ld").exists()
    good = write(tmp_path, STM32)
    p = subprocess.run([sys.executable, script, good, "-o", str(tmp_path / "link.ld")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "link.ld").read_text()
    assert "SRAM2 (rwx) : ORIGIN = 0x2001C000, LENGTH = 16K" in text and "} > SRAM1 AT > FLASH" in text


def test_mcuflow_boards_lists_every_board_and_a_user_s_file(tmp_path):
    p = subprocess.run([sys.executable, "-m", "mcuflow.cli", "boards"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = {line.split()[0]: line for line in p.stdout.splitlines()[1:]}
    assert list(rows) == boards.board_names()
    assert rows["stm32f405"].split()[1:5] == ["cortex-m4", "dsp", "uart", "netduinoplus2"]
    assert "FLASH 0x08000000 1 MiB code, SRAM1 0x20000000 112 KiB ram*, SRAM2 0x2001C000 16 KiB ram" in rows["stm32f405"]
    assert rows["pico2"].split()[1:5] == ["cortex-m33", "dsp", "uart", "none"]
    p = subprocess.run([sys.executable, "-m", "mcuflow.cli", "boards", "--json", write(tmp_path, FULL)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    [chip] = json.loads(p.stdout)
    assert (chip["name"], chip["core"], chip["emulator"], chip["arena_region"]) == ("chip", "cortex-m4", "mps2-an386",
                                                                                    "SRAM1")


def test_board_file_cores_are_the_compilers_targets_with_their_tiers():
    """boardfile.CORES repeats the compiler's core list (the generator runs as a plain script,
    without the extension): it must name exactly the compiler's cores, each on its tier."""
    from mcuflow import _core
    for core, (_, tier) in boardfile.CORES.items():
        assert _core.target_tier(core) == tier, core
    with pytest.raises(Exception, match="known targets: ") as e:
        _core.target_tier("no-such-core")
    known = str(e.value).split("known targets: ")[1].split(", ")  # less the "reference" pseudo-target
    assert set(known) - {"reference"} == set(boardfile.CORES)
