"""pytest fixtures for the firmware tests: firmware is built once per session (the fixed test
programs) or once per module (a fresh cache of mcuflow.device builds)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fwutil  # noqa: E402


class FirmwareCache:
    """Builds each (program, board, options) combination once per session."""

    def __init__(self, root):
        self.root = root
        self._builds = {}
        self._lock = threading.Lock()

    def get(self, program: str, board: str, **options):
        key = (program, board, tuple(sorted((k, repr(v)) for k, v in options.items())))
        with self._lock:
            if key not in self._builds:
                tag = f"{program}-{board}-{len(self._builds)}"
                self._builds[key] = fwutil.crossbuild.build_firmware(
                    board, fwutil.PROGRAMS[program], self.root / tag, **options)
            return self._builds[key]


@pytest.fixture(scope="session")
def firmware(tmp_path_factory):
    if not (fwutil.HAVE_CROSS and fwutil.HAVE_QEMU):
        pytest.skip("cross toolchain or qemu-system-arm not installed")
    return FirmwareCache(tmp_path_factory.mktemp("firmware"))


@pytest.fixture(scope="module", autouse=True)
def fresh_firmware_cache(tmp_path_factory):
    """mcuflow.device builds of each test module go to a fresh cache: every build really happens."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MCUFLOW_CACHE_DIR", str(tmp_path_factory.mktemp("fwcache")))
    yield
    mp.undo()
