"""The host side of the UART boards' framed protocol (mcuflow.uart), without QEMU: frames,
checksums, the file server, and run_serial against small fake boards (Python processes
speaking the protocol on stdio) that misbehave on purpose."""

from __future__ import annotations

import struct
import sys
import textwrap
import time

import pytest

from mcuflow import qemu, uart


def board_frame(kind: str, payload: bytes) -> bytes:
    """A frame as the firmware builds it, written out from docs/boards.md's layout."""
    body = kind.encode() + len(payload).to_bytes(4, "little") + payload
    return b"MF" + body + uart.crc16(body).to_bytes(2, "little")


def test_crc_is_crc16_ccitt_false():
    assert uart.crc16(b"123456789") == 0x29B1  # the catalogued check value of CRC-16/CCITT-FALSE


def test_frames_split_from_any_chunking_and_stray_bytes_are_kept():
    stream = b"boot\n" + board_frame("C", b"hello") + board_frame("X", struct.pack("<i", 3))
    parser = uart.FrameParser()
    frames = [f for i in range(len(stream)) for f in parser.feed(stream[i:i + 1])]
    assert frames == [("C", b"hello"), ("X", struct.pack("<i", 3))]
    assert bytes(parser.stray) == b"boot\n"
    assert uart.encode_frame("r", b"abc") == board_frame("r", b"abc")


def test_a_corrupt_frame_is_refused_after_the_frames_before_it():
    frame = bytearray(board_frame("C", b"hello"))
    frame[8] ^= 0x01
    frames = uart.FrameParser().feed(board_frame("C", b"first") + bytes(frame))
    assert next(frames) == ("C", b"first")
    with pytest.raises(uart.ProtocolError, match="checksum"):
        next(frames)
    with pytest.raises(uart.ProtocolError, match="claims"):
        list(uart.FrameParser().feed(b"MFC" + (1 << 30).to_bytes(4, "little")))


def reply(frame: bytes):
    (kind, payload), = list(uart.FrameParser().feed(frame))
    assert kind == "r"
    status, size = struct.unpack_from("<iI", payload)
    return status, size, payload[8:]


def test_file_server_reads_writes_and_refuses_paths_outside_its_directory(tmp_path):
    (tmp_path / "in.bin").write_bytes(b"0123456789")
    server = uart.FileServer(tmp_path)
    assert reply(server.handle("R", struct.pack("<I", 64) + b"in.bin")) == (0, 10, b"0123456789")
    assert reply(server.handle("R", struct.pack("<I", 4) + b"in.bin")) == (uart.ERR_TOO_BIG, 10, b"")
    assert reply(server.handle("R", struct.pack("<I", 64) + b"nope.bin"))[0] == uart.ERR_OPEN
    assert reply(server.handle("P", struct.pack("<II", 3, 4) + b"in.bin")) == (0, 4, b"3456")
    assert reply(server.handle("P", struct.pack("<II", 8, 4) + b"in.bin"))[0] == uart.ERR_IO
    assert reply(server.handle("W", struct.pack("<I", 7) + b"out.bin" + b"xyz")) == (0, 0, b"")
    assert (tmp_path / "out.bin").read_bytes() == b"xyz"
    (tmp_path.parent / "secret").write_bytes(b"s")
    for path in (b"../secret", str(tmp_path.parent / "secret").encode(), b""):
        assert reply(server.handle("R", struct.pack("<I", 64) + path))[0] == uart.ERR_OPEN
        assert reply(server.handle("W", struct.pack("<I", len(path)) + path + b"x"))[0] == uart.ERR_OPEN
    with pytest.raises(uart.ProtocolError, match="shorter than its header"):
        server.handle("P", b"\x00")


# A fake board: sends what `script` says on stdout, reads replies on stdin.
FAKE = textwrap.dedent("""
    import binascii, struct, sys, time
    out = sys.stdout.buffer
    def frame(kind, payload):
        body = kind.encode() + struct.pack("<I", len(payload)) + payload
        out.write(b"MF" + body + struct.pack("<H", binascii.crc_hqx(body, 0xFFFF))); out.flush()
    def read_reply():
        head = sys.stdin.buffer.read(7)
        n = struct.unpack_from("<I", head, 3)[0]
        return sys.stdin.buffer.read(n + 2)[:n]
""")


def fake_board(tmp_path, script: str, timeout_s: float = 10.0):
    cmd = [sys.executable, "-c", FAKE + textwrap.dedent(script)]
    return uart.run_serial(cmd, "fake", "fake.elf", str(tmp_path), timeout_s)


def test_run_serial_serves_files_and_returns_the_exit_code(tmp_path):
    (tmp_path / "in.bin").write_bytes(b"abc")
    r = fake_board(tmp_path, """
        frame("R", struct.pack("<I", 16) + b"in.bin")
        data = read_reply()[8:]
        frame("W", struct.pack("<I", 7) + b"out.bin" + data[::-1])
        read_reply()
        frame("C", b"done\\n")
        frame("X", struct.pack("<i", 300))
    """)
    assert (tmp_path / "out.bin").read_bytes() == b"cba"
    assert r.stdout == "done\n" and r.exit_code == 300 & 0xFF


def test_run_serial_names_a_board_that_stops_without_an_exit_frame(tmp_path):
    with pytest.raises(qemu.QemuError, match=r"QEMU stopped \(status 0\) before fake.elf sent its exit frame: partial"):
        fake_board(tmp_path, 'frame("C", b"partial")')


def test_run_serial_names_a_corrupt_frame(tmp_path):
    with pytest.raises(qemu.QemuError, match="failed its checksum") as e:
        fake_board(tmp_path, 'frame("C", b"ok "); out.write(b"MFC\\x01\\x00\\x00\\x00x\\x00\\x00"); out.flush(); '
                             'time.sleep(30)')
    assert e.value.stdout == "ok "


def test_run_serial_kills_a_silent_board_on_time(tmp_path):
    t0 = time.monotonic()
    with pytest.raises(qemu.QemuTimeoutError, match="sent no exit frame within timeout_s=1"):
        fake_board(tmp_path, 'frame("C", b"waiting"); time.sleep(60)', timeout_s=1)
    assert time.monotonic() - t0 < 10
