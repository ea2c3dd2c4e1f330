"""Run firmware ELFs under qemu-system-arm.

:func:`run_elf` starts ``qemu-system-arm -M <machine> -nographic
-semihosting-config enable=on,target=native -icount shift=<K> -kernel <elf>``
in ``cwd`` (semihosting file paths are relative to it), waits at most
``timeout_s`` seconds, and returns ``(exit_code, stdout)``. The exit code is
the one the firmware passed to ``board_exit`` (semihosting SYS_EXIT_EXTENDED).
A board without semihosting (``console="uart"``) talks over its UART on QEMU's
stdio instead, and :mod:`mcuflow.uart` serves its files from ``cwd`` the same way.
A firmware that does not finish in time is killed and :class:`QemuTimeoutError`
names the timeout.

Standard library only (no torch).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from .boards import Board, get_board
from .emulator import QemuError, QemuResult, QemuTimeoutError, kill_group
from .uart import run_serial

__all__ = [
    "QemuError",
    "QemuTimeoutError",
    "QemuResult",
    "qemu_binary",
    "qemu_available",
    "qemu_command",
    "run",
    "run_elf",
]

PathLike = Union[str, "os.PathLike[str]"]


def qemu_binary() -> Optional[str]:
    return shutil.which(os.environ.get("MCUFLOW_QEMU", "qemu-system-arm"))


def qemu_available() -> bool:
    return qemu_binary() is not None


def qemu_command(elf: PathLike, board: Union[str, Board], *, icount: bool = True,
                 extra_args: Sequence[str] = ()) -> List[str]:
    b = get_board(board)
    if not b.qemu_machine:
        raise QemuError(f"board {b.name} has no emulator: `mcuflow firmware --board {b.name}` builds its image "
                        f"for the chip, but nothing here runs it")
    qemu = qemu_binary() or "qemu-system-arm"
    cmd = [qemu, "-M", b.qemu_machine]
    if b.qemu_cpu:
        cmd += ["-cpu", b.qemu_cpu]
    if b.console == "uart":
        # The first UART on stdio, no semihosting; the firmware ends with a system reset,
        # which -no-reboot turns into QEMU's exit.
        cmd += ["-nographic", "-serial", "stdio", "-monitor", "none", "-no-reboot"]
    else:
        # Semihosting console output goes to a stdio chardev (QEMU's default
        # would be stderr); the UART and monitor are not connected.
        cmd += ["-nographic", "-serial", "none", "-monitor", "none",
                "-chardev", "stdio,id=mcuflow_semihost",
                "-semihosting-config", "enable=on,target=native,chardev=mcuflow_semihost"]
    if icount:
        cmd += ["-icount", f"shift={b.icount_shift}"]
    cmd += list(extra_args)
    cmd += ["-kernel", str(Path(elf).resolve())]
    return cmd


def run(elf: PathLike, board: Union[str, Board], timeout_s: float = 60.0,
        cwd: Optional[PathLike] = None, *, icount: bool = True,
        extra_args: Sequence[str] = ()) -> QemuResult:
    """Like :func:`run_elf` but returns stderr, the command and wall time too."""
    b = get_board(board)
    elf_path = Path(elf).resolve()
    if not elf_path.is_file():
        raise QemuError(f"firmware ELF not found: {elf_path}")
    if qemu_binary() is None:
        raise QemuError("qemu-system-arm not found on PATH (apt-get install qemu-system-arm)")
    cmd = qemu_command(elf_path, b, icount=icount, extra_args=extra_args)
    workdir = str(Path(cwd).resolve()) if cwd is not None else None
    if b.console == "uart":
        return run_serial(cmd, b.name, elf_path.name, workdir, timeout_s)
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, cwd=workdir, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as e:
        raise QemuError(f"could not start QEMU: {e}") from None
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        stdout = out.decode("utf-8", "replace")
        raise QemuTimeoutError(
            f"QEMU timeout: {elf_path.name} on board {b.name} ({b.qemu_machine}) did not "
            f"exit within timeout_s={timeout_s} s and was killed; output so far:\n"
            f"{stdout[-2000:]}",
            timeout_s=timeout_s, stdout=stdout, stderr=err.decode("utf-8", "replace"),
        ) from None
    return QemuResult(exit_code=proc.returncode, stdout=out.decode("utf-8", "replace"),
                      stderr=err.decode("utf-8", "replace"), command=cmd,
                      wall_s=time.monotonic() - t0)


def run_elf(elf: PathLike, board: Union[str, Board], timeout_s: float = 60.0,
            cwd: Optional[PathLike] = None, **kwargs) -> Tuple[int, str]:
    """Run ``elf`` on ``board``'s QEMU machine; return ``(exit_code, stdout)``.

    Semihosting is on (``target=native``), so the firmware's file paths are
    relative to ``cwd`` (default: the current directory). ``-icount
    shift=K`` uses the board's K so ``board_counter()`` counts instructions.
    Raises :class:`QemuTimeoutError` if it runs longer than ``timeout_s``.
    """
    r = run(elf, board, timeout_s, cwd, **kwargs)
    return r.exit_code, r.stdout
