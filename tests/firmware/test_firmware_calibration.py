"""board_counter() counts executed instructions exactly under -icount.

firmware/tests/calib.c times an inline-assembly loop of exactly 7 instructions
per iteration for n = 1..160 and some large n. The difference of two counter
reads must be 7*n + C with the same small constant C (the instructions of the
two board_counter() calls themselves) for every n. Because the reads happen at
every phase of the tick/instruction ratio, a wrong tick-to-instruction
conversion shows up as a varying C.
"""

from __future__ import annotations

import pytest

from fwutil import BOARD_NAMES, parse_calib, qemu, requires_cross

pytestmark = requires_cross

# Overhead C measured with arm-none-eabi-gcc 12.2 (-Os); documented in
# firmware/README.md. Only checked for that compiler: another compiler may
# schedule the two calls differently, which must still give a constant C.
DOCUMENTED_OVERHEAD = {
    "qemu-m0": 27,
    "qemu-m3": 24,
    "qemu-m4": 23,
    "qemu-m7": 25,
    "qemu-m33": 25,
    "qemu-m55": 25,
    "stm32f405": 8,  # board_counter() is one load of TIM2's count: no conversion
}
MAX_OVERHEAD = 40

# Starting the count this many ticks before the 32-bit wrap (a multiple of
# 2^7, see board.c) makes the run cross the wrap.
WRAP_PRESET = 1 << 19


def _run_calib(firmware, board, tmp_path, **options):
    fb = firmware.get("calib", board, **options)
    rc, out = qemu.run_elf(fb.elf, board, timeout_s=120, cwd=tmp_path)
    assert rc == 0, out
    assert "calib done" in out
    body, empty, rows, end = parse_calib(out)
    assert body == 7
    assert len(rows) >= 160
    return fb, empty, rows, end


@pytest.mark.parametrize("board", BOARD_NAMES)
def test_counter_counts_instructions_exactly(firmware, board, tmp_path):
    fb, empty, rows, _ = _run_calib(firmware, board, tmp_path)
    overheads = {d - 7 * n for n, d in rows}
    assert len(overheads) == 1, f"overhead varies with n: {sorted(overheads)}"
    (c,) = overheads
    assert c == empty, "loop overhead differs from two back-to-back reads"
    assert 0 < c <= MAX_OVERHEAD
    # e.g. n = 1000 iterations of 7 instructions -> exactly 7000 + C
    assert dict(rows)[1000] == 7000 + c
    assert dict(rows)[100000] == 700000 + c
    version = fb.info["compiler"]["version"]
    if " 12.2." in version:
        assert c == DOCUMENTED_OVERHEAD[board]


@pytest.mark.parametrize("board", [b for b in BOARD_NAMES if b != "qemu-m0"])
def test_counter_is_exact_across_the_32bit_timer_wrap(firmware, board, tmp_path):
    # qemu-m0's nRF51 timer cannot be preset, so it is not in this test.
    _, empty, rows, end = _run_calib(firmware, board, tmp_path,
                                     defines={"MCUFLOW_COUNTER_PRESET": WRAP_PRESET})
    # Started at 2^32 - WRAP_PRESET ticks: a smaller value at the end means it wrapped.
    assert end is not None and end < 2**32 - WRAP_PRESET, "the timer did not wrap during the run"
    overheads = {d - 7 * n for n, d in rows}
    assert overheads == {empty}, sorted(overheads)
