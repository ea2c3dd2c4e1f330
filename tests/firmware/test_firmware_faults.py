"""Fault handlers exit with a distinctive code; hangs are killed on time."""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from fwutil import BOARD_NAMES, crossbuild, qemu, requires_cross

pytestmark = requires_cross

MCUFLOW_EXIT_HARDFAULT = 0xF1


def symbol_address(elf, name: str) -> int:
    out = subprocess.run([crossbuild.tool_path("nm"), str(elf)], capture_output=True, text=True, check=True).stdout
    return next(int(line.split()[0], 16) for line in out.splitlines() if line.split()[-1] == name)


@pytest.mark.parametrize("board", BOARD_NAMES)
def test_undefined_instruction_exits_with_hardfault_code(firmware, board, tmp_path):
    fb = firmware.get("fault", board, defines={"FAULT_KIND": 1})
    rc, out = qemu.run_elf(fb.elf, board, timeout_s=30, cwd=tmp_path)
    assert rc == MCUFLOW_EXIT_HARDFAULT, out
    assert "fault test start" in out
    assert "mcuflow: HardFault" in out
    assert "no fault happened" not in out
    # The stacked pc is the faulting instruction's address (the report used to run over the
    # exception frame and print a stack address on the boards whose frame sat near the top).
    pc = re.search(r" pc=0x([0-9a-f]{8})", out)
    assert pc, out
    assert int(pc[1], 16) == symbol_address(fb.elf, "fault_udf"), out


@pytest.mark.parametrize("board", ["qemu-m33", "qemu-m55"])
def test_stack_overflow_faults_on_armv8m(firmware, board, tmp_path):
    # MSPLIM (set by the reset handler) turns the overflow into a fault.
    fb = firmware.get("fault", board, defines={"FAULT_KIND": 2})
    rc, out = qemu.run_elf(fb.elf, board, timeout_s=30, cwd=tmp_path)
    assert rc == MCUFLOW_EXIT_HARDFAULT, out
    assert "mcuflow: HardFault" in out


def test_hang_is_killed_with_a_clear_error(firmware, tmp_path):
    fb = firmware.get("fault", "qemu-m4", defines={"FAULT_KIND": 3})
    t0 = time.monotonic()
    with pytest.raises(qemu.QemuTimeoutError) as ei:
        qemu.run_elf(fb.elf, "qemu-m4", timeout_s=2, cwd=tmp_path)
    assert time.monotonic() - t0 < 20
    msg = str(ei.value)
    assert "timeout" in msg and "timeout_s=2" in msg
    assert "fault test start" in ei.value.stdout
    assert isinstance(ei.value, TimeoutError)


def test_missing_elf_is_a_clear_error(tmp_path):
    with pytest.raises(qemu.QemuError, match="not found"):
        qemu.run_elf(tmp_path / "nope.elf", "qemu-m4", timeout_s=5, cwd=tmp_path)
