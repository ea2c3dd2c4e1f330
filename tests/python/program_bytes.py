"""A program file's bytes edited as a writer bug or a deliberate edit would: the CRC recomputed, so
that only the loader's own checks stand between the edit and a run (header layout:
runtime/include/mcuflow/runtime/format.h, docs/program_format.md)."""

from __future__ import annotations

import struct
import zlib

FILE_BYTES_OFFSET = 8   # Header.file_bytes
CRC_OFFSET = 12         # Header.checksum
CHECKSUM_START = 16     # kChecksumStart: the CRC32 covers bytes [16, file_bytes)
CONSTANTS_OFFSET = 48   # Header.constants_offset


def with_crc(data: bytes | bytearray) -> bytes:
    """`data` with its CRC recomputed over the file size its header states (where that lies inside
    it; else the loader refuses it anyway)."""
    v = bytearray(data)
    file_bytes = struct.unpack_from("<I", v, FILE_BYTES_OFFSET)[0]
    if CHECKSUM_START <= file_bytes <= len(v):
        struct.pack_into("<I", v, CRC_OFFSET, zlib.crc32(bytes(v[CHECKSUM_START:file_bytes])))
    return bytes(v)


def flipped(data: bytes, bit: int) -> bytes:
    """`data` with one bit flipped and the CRC recomputed."""
    v = bytearray(data)
    v[bit // 8] ^= 1 << (bit % 8)
    return with_crc(v)


def constants_offset(data: bytes | bytearray) -> int:
    return struct.unpack_from("<I", data, CONSTANTS_OFFSET)[0]
