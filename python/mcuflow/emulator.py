"""What running firmware under QEMU returns or raises, for both ways a board talks to the host:
semihosting (:mod:`mcuflow.qemu`) and the UART protocol (:mod:`mcuflow.uart`).

Standard library only (no torch).
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from typing import List

__all__ = ["QemuError", "QemuTimeoutError", "QemuResult", "kill_group"]


class QemuError(RuntimeError):
    """QEMU could not be started or failed."""


class QemuTimeoutError(QemuError, TimeoutError):
    """The firmware did not exit within the timeout; QEMU was killed."""

    def __init__(self, message: str, *, timeout_s: float, stdout: str = "", stderr: str = ""):
        super().__init__(message)
        self.timeout_s = timeout_s
        self.stdout = stdout
        self.stderr = stderr


@dataclass
class QemuResult:
    exit_code: int
    stdout: str
    stderr: str
    command: List[str]
    wall_s: float


def kill_group(proc: subprocess.Popen) -> None:
    # QEMU was started in its own session: its id is its process group id.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass
