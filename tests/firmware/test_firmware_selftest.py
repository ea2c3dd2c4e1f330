"""The firmware self-test on every board: console, files, stack, exit code."""

from __future__ import annotations

import json
import os

import pytest

from fwutil import BOARD_NAMES, boards, parse_kv, qemu, requires_cross

pytestmark = requires_cross

EXIT_CODE = 37
INPUT = bytes(range(256)) + b"mcuflow firmware self-test\n" + bytes(200)


@pytest.fixture(scope="session")
def selftest_run(firmware, tmp_path_factory):
    """Build and run the self-test once per board; cache (build, rc, stdout, cwd)."""
    cache = {}

    def get(board):
        if board not in cache:
            fb = firmware.get("selftest", board, defines={"SELFTEST_EXIT_CODE": EXIT_CODE})
            cwd = tmp_path_factory.mktemp(f"run-{board}")
            (cwd / "selftest_in.bin").write_bytes(INPUT)
            rc, out = qemu.run_elf(fb.elf, board, timeout_s=60, cwd=cwd)
            cache[board] = (fb, rc, out, cwd)
        return cache[board]

    return get


@pytest.mark.parametrize("board", BOARD_NAMES)
def test_selftest_exit_code_and_console(selftest_run, board):
    fb, rc, out, _ = selftest_run(board)
    assert f"mcuflow selftest board={board}" in out
    assert "selftest PASS" in out, out
    assert rc == EXIT_CODE, out
    kv = parse_kv(out)
    assert kv["failures"] == 0
    assert kv["read_rc"] == 0 and kv["read_n"] == len(INPUT)
    assert kv["write_rc"] == 0
    assert kv["toobig_rc"] == -3
    assert kv["missing_rc"] == -1
    assert kv["cxx"] == 52
    b = boards.get_board(board)
    if b.has_fpu:
        assert kv["fpu_result_x1000"] == 4875
    else:
        assert "fpu_result_x1000" not in kv
    if b.has_mve:
        assert kv["mve_dot"] == 2480


@pytest.mark.parametrize("board", BOARD_NAMES)
def test_selftest_file_written_back_transformed(selftest_run, board):
    _, rc, out, cwd = selftest_run(board)
    data = (cwd / "selftest_out.bin").read_bytes()
    assert data == bytes(x ^ 0x5A for x in reversed(INPUT))


@pytest.mark.parametrize("board", BOARD_NAMES)
def test_selftest_stack_high_water(selftest_run, board):
    fb, rc, out, _ = selftest_run(board)
    kv = parse_kv(out)
    b = boards.get_board(board)
    assert kv["stack_size"] == b.default_stack_size
    # stack_user(20) keeps 21 frames with a 48-byte array each alive.
    assert 21 * 48 <= kv["stack_high_water"] < kv["stack_size"]


@pytest.mark.parametrize("board", BOARD_NAMES)
def test_selftest_build_outputs(selftest_run, board):
    fb, _, _, _ = selftest_run(board)
    for p in (fb.elf, fb.map, fb.bin, fb.build_info):
        assert p.is_file() and p.stat().st_size > 0
    info = json.loads(fb.build_info.read_text())
    b = boards.get_board(board)
    assert info["board"] == board
    assert info["mcpu"] == b.mcpu
    assert info["cpu_flags"] == list(b.cpu_flags)
    assert "arm-none-eabi-gcc" in info["compiler"]["version"]
    assert info["flags"]["opt_level"] == "-Os"
    assert "-fno-exceptions" in info["flags"]["c++"] and "-fno-rtti" in info["flags"]["c++"]
    assert "-Wl,--gc-sections" in info["flags"]["ldflags"]
    assert all(s["opt"] == "-Os" for s in info["sources"])
    secs = info["sections"]
    # No C++ constructors, no heap.
    assert secs.get(".init_array", {"size": 0})["size"] == 0
    assert secs.get(".heap", {"size": 0})["size"] == 0
    assert secs[".stack"]["size"] == b.default_stack_size
    # .text is in the code region, .bss in the RAM region.
    code, ram = b.region(b.code_region), b.region(b.ram_region)
    assert code.base <= secs[".text"]["addr"] < code.end
    assert ram.base <= secs[".bss"]["addr"] < ram.end
    # The binary image covers code memory only (no RAM addresses).
    assert os.path.getsize(fb.bin) < code.size
