"""Board files (mcuflow.boardfile): the STM32F405's board.json is what boards.py uses, the
generator reproduces every hand-written linker script, and a board file that cannot describe a
board is one clear line."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

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


def test_the_stm32f405_board_file_is_what_the_board_table_uses():
    layout = boardfile.load(boardfile.board_file("stm32f405"))
    b = boards.get_board("stm32f405")
    assert layout.regions == b.regions
    assert (layout.code_region, layout.ram_region, layout.arena_region, layout.stack_size) == (
        b.code_region, b.ram_region, b.arena_region, b.default_stack_size)
    assert [(r.name, r.base, r.size) for r in layout.regions] == [
        ("FLASH", 0x08000000, 1 << 20), ("SRAM1", 0x20000000, 112 << 10), ("SRAM2", 0x2001C000, 16 << 10)]


@pytest.mark.parametrize("name", [n for n in boards.board_names() if not boardfile.board_file(n).is_file()])
def test_the_generator_reproduces_each_hand_written_linker_script(name):
    b = boards.get_board(name)
    layout = boardfile.BoardLayout(b.name, "", b.regions, b.code_region, b.ram_region, b.arena_region,
                                   b.default_stack_size)
    hand_written = (boardfile.firmware_dir() / "boards" / name / "link.ld").read_text()
    assert statements(boardfile.linker_script(layout)) == statements(hand_written)


def write(tmp_path, board) -> str:
    path = tmp_path / "board.json"
    path.write_text(json.dumps(board) if isinstance(board, dict) else board)
    return str(path)


def changed(**fields):
    board = json.loads(json.dumps(STM32))
    for key, value in fields.items():
        if key.startswith("region_"):
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
    ("{not json", "is not JSON"),
])
def test_an_impossible_board_file_is_one_clear_line(tmp_path, board, message):
    path = write(tmp_path, board)
    with pytest.raises(boardfile.BoardFileError) as e:
        boardfile.load(path)
    assert message in str(e.value) and path in str(e.value) and "\n" not in str(e.value)


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
