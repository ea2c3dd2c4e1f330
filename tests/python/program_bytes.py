"""A program file's bytes edited as a writer bug or a deliberate edit would: the CRC recomputed, so
that only the loader's own checks stand between the edit and a run (header layout:
runtime/include/mcuflow/runtime/format.h, docs/program_format.md)."""

from __future__ import annotations

import struct
import zlib

FILE_BYTES_OFFSET = 8   # Header.file_bytes
CRC_OFFSET = 12         # Header.structure_crc32: bytes [16, constants_offset)
CHECKSUM_START = 16     # kChecksumStart
CONSTANTS_OFFSET = 48   # Header.constants_offset
DATA_CRC_OFFSET = 88    # Header.data_crc32: bytes [constants_offset, file_bytes)


def with_crc(data: bytes | bytearray) -> bytes:
    """`data` with both checksums recomputed over the file size and constants offset its header
    states (where those lie inside it; else the loader refuses it anyway)."""
    v = bytearray(data)
    if len(v) < DATA_CRC_OFFSET + 4:
        return bytes(v)
    file_bytes = struct.unpack_from("<I", v, FILE_BYTES_OFFSET)[0]
    constants = constants_offset(v)
    if file_bytes <= len(v) and CHECKSUM_START <= constants <= file_bytes:
        struct.pack_into("<I", v, DATA_CRC_OFFSET, zlib.crc32(bytes(v[constants:file_bytes])))
        struct.pack_into("<I", v, CRC_OFFSET, zlib.crc32(bytes(v[CHECKSUM_START:constants])))
    return bytes(v)


def flipped(data: bytes, bit: int) -> bytes:
    """`data` with one bit flipped and the CRC recomputed."""
    v = bytearray(data)
    v[bit // 8] ^= 1 << (bit % 8)
    return with_crc(v)


def constants_offset(data: bytes | bytearray) -> int:
    return struct.unpack_from("<I", data, CONSTANTS_OFFSET)[0]
