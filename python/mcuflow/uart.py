"""The host side of the UART boards' protocol: what semihosting does for the QEMU development
boards, over a serial line (the board side is ``firmware/common/uart_io.c``; docs/boards.md).

Every byte the board sends is in a frame::

    "MF" type:u8 length:u32 payload[length] crc:u16      (little-endian; CRC-16/CCITT-FALSE,
                                                          poly 0x1021, init 0xFFFF, over type,
                                                          length and payload)

The board sends console text ('C'), requests for host files ('R' read a file, 'P' read part of
one, 'W' write one) and its exit code ('X'); the host answers each request with one reply frame
('r': status:i32 size:u32 data). Files are served from one directory, as semihosting's are from
QEMU's working directory; a path that is absolute or climbs out of it is refused (status
MCUFLOW_BOARD_ERR_OPEN).

:func:`run_serial` drives QEMU with the board's UART on its stdin/stdout: it serves requests
until the exit frame, then waits for QEMU to stop (the firmware resets the chip and QEMU runs
with ``-no-reboot``). A firmware that sends no exit frame within the timeout is killed
(:class:`~mcuflow.emulator.QemuTimeoutError`); a corrupt frame or QEMU stopping before the exit
frame is a :class:`~mcuflow.emulator.QemuError` naming what happened.

Standard library only (no torch).
"""

from __future__ import annotations

import binascii
import os
import selectors
import struct
import subprocess
import time
from pathlib import Path, PurePosixPath
from typing import Iterator, List, Optional, Tuple

from .emulator import QemuError, QemuResult, QemuTimeoutError, kill_group

__all__ = ["ProtocolError", "crc16", "encode_frame", "FrameParser", "FileServer", "run_serial"]

MAGIC = b"MF"
HEADER_BYTES = 7  # magic, type, length
MAX_PAYLOAD = 64 * 1024 * 1024  # more than any board's RAM: a larger length is a corrupt frame
# firmware/include/mcuflow/board.h
STATUS_OK, ERR_OPEN, ERR_IO, ERR_TOO_BIG = 0, -1, -2, -3
EXIT_GRACE_S = 10.0  # QEMU stops at the reset right after the exit frame


class ProtocolError(ValueError):
    """The board sent something that is not a well-formed frame of the protocol."""


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no reflection)."""
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(kind: str, payload: bytes) -> bytes:
    body = kind.encode("ascii") + struct.pack("<I", len(payload)) + payload
    return MAGIC + body + struct.pack("<H", crc16(body))


class FrameParser:
    """Splits the bytes from the board into frames. Bytes outside any frame (a boot loader's
    message on a real board) are kept in ``stray``."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.stray = bytearray()

    def feed(self, data: bytes) -> Iterator[Tuple[str, bytes]]:
        """Yields each frame completed by `data` as soon as it is parsed, so the frames before a
        corrupt one are handled before its error."""
        self._buf += data
        while True:
            at = self._buf.find(MAGIC)
            if at < 0:
                keep = 1 if self._buf.endswith(MAGIC[:1]) else 0
                self.stray += self._buf[:len(self._buf) - keep]
                del self._buf[:len(self._buf) - keep]
                return
            self.stray += self._buf[:at]
            del self._buf[:at]
            if len(self._buf) < HEADER_BYTES:
                return
            kind, length = self._buf[2], int.from_bytes(self._buf[3:7], "little")
            if length > MAX_PAYLOAD:
                raise ProtocolError(f"frame {chr(kind)!r} from the board claims {length} bytes (corrupt line?)")
            end = HEADER_BYTES + length + 2
            if len(self._buf) < end:
                return
            body = bytes(self._buf[2:HEADER_BYTES + length])
            if crc16(body) != int.from_bytes(self._buf[end - 2:end], "little"):
                raise ProtocolError(f"frame {chr(kind)!r} ({length} bytes) from the board failed its checksum")
            del self._buf[:end]
            yield chr(kind), body[5:]


def _reply(status: int, size: int = 0, data: bytes = b"") -> bytes:
    return encode_frame("r", struct.pack("<iI", status, size) + data)


class FileServer:
    """Answers the board's file requests from directory ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, raw: bytes) -> Optional[Path]:
        try:
            p = PurePosixPath(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return None
        if not p.parts or p.is_absolute() or ".." in p.parts:
            return None
        return self.root / p

    def handle(self, kind: str, payload: bytes) -> bytes:
        """The reply frame to request ``kind`` ('R', 'P' or 'W')."""
        fixed = {"R": 4, "P": 8, "W": 4}[kind]
        if len(payload) < fixed:
            raise ProtocolError(f"request {kind!r} from the board is {len(payload)} bytes, shorter than its header")
        if kind == "W":
            (path_len,) = struct.unpack_from("<I", payload)
            if fixed + path_len > len(payload):
                raise ProtocolError(f"write request names a {path_len}-byte path in a {len(payload)}-byte frame")
            path = self._path(payload[fixed:fixed + path_len])
            try:
                if path is None:
                    return _reply(ERR_OPEN)
                path.write_bytes(payload[fixed + path_len:])
            except OSError:
                return _reply(ERR_OPEN)
            return _reply(STATUS_OK)
        path = self._path(payload[fixed:])
        try:
            if path is None:
                return _reply(ERR_OPEN)
            with open(path, "rb") as f:
                if kind == "R":
                    (cap,) = struct.unpack_from("<I", payload)
                    size = os.fstat(f.fileno()).st_size
                    return _reply(ERR_TOO_BIG, size) if size > cap else _reply(STATUS_OK, size, f.read(size))
                offset, n = struct.unpack_from("<II", payload)
                f.seek(offset)
                data = f.read(n)
        except OSError:
            return _reply(ERR_OPEN)
        return _reply(STATUS_OK, n, data) if len(data) == n else _reply(ERR_IO, len(data))


def run_serial(cmd: List[str], board_name: str, elf_name: str, cwd: Optional[str], timeout_s: float):
    """Runs QEMU command ``cmd`` (the board's UART on stdio) serving files from ``cwd``; returns
    a :class:`~mcuflow.emulator.QemuResult` whose exit code is the one in the board's exit frame."""
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        raise QemuError(f"could not start QEMU: {e}") from None
    server = FileServer(Path(cwd) if cwd is not None else Path.cwd())
    parser = FrameParser()
    console, stderr, pending = bytearray(), bytearray(), bytearray()
    exit_code = None
    sel = selectors.DefaultSelector()
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        os.set_blocking(stream.fileno(), False)
    sel.register(proc.stdout, selectors.EVENT_READ)
    sel.register(proc.stderr, selectors.EVENT_READ)
    writing = False

    def text() -> str:
        return bytes(console + parser.stray).decode("utf-8", "replace")

    def fail(error: Exception):
        kill_group(proc)
        proc.wait()
        sel.close()
        error.stdout, error.stderr = text(), stderr.decode("utf-8", "replace")
        raise error

    try:
        while exit_code is None and sel.get_map().get(proc.stdout.fileno()) is not None:
            left = t0 + timeout_s - time.monotonic()
            if left <= 0:
                fail(QemuTimeoutError(
                    f"QEMU timeout: {elf_name} on board {board_name} sent no exit frame within "
                    f"timeout_s={timeout_s} s and was killed; output so far:\n{text()[-2000:]}",
                    timeout_s=timeout_s))
            if pending and not writing:
                sel.register(proc.stdin, selectors.EVENT_WRITE)
                writing = True
            for key, _ in sel.select(min(left, 1.0)):
                if key.fileobj is proc.stdin:
                    try:
                        del pending[:os.write(proc.stdin.fileno(), pending)]
                    except BrokenPipeError:
                        pending.clear()
                    if not pending:
                        sel.unregister(proc.stdin)
                        writing = False
                    continue
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fileobj)
                elif key.fileobj is proc.stderr:
                    stderr += data
                else:
                    for kind, payload in parser.feed(data):
                        if kind == "C":
                            console += payload
                        elif kind == "X" and len(payload) == 4:
                            exit_code = struct.unpack("<i", payload)[0]
                        elif kind in ("R", "P", "W"):
                            pending += server.handle(kind, payload)
                        else:
                            raise ProtocolError(f"unknown frame {kind!r} ({len(payload)} bytes) from the board")
    except ProtocolError as e:
        fail(QemuError(f"{board_name}: {e}; console so far:\n{text()[-2000:]}"))
    sel.close()
    try:
        proc.wait(timeout=EXIT_GRACE_S)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.wait()
    stderr += proc.stderr.read() or b""
    if exit_code is None:
        raise QemuError(f"{board_name}: QEMU stopped (status {proc.returncode}) before {elf_name} sent its exit "
                        f"frame: {(text() + stderr.decode('utf-8', 'replace')).strip()[-2000:] or 'no output'}")
    return QemuResult(exit_code=exit_code & 0xFF, stdout=text(), stderr=stderr.decode("utf-8", "replace"),
                      command=cmd, wall_s=time.monotonic() - t0)
