"""UF2 images: a firmware ELF's loadable bytes as the 512-byte blocks a USB mass-storage boot
loader takes (Microsoft's UF2 format; the RP2350 boot ROM's rules are its datasheet's 5.5.2).

Each block holds 256 bytes of payload at a 256-byte aligned flash address, its number and the
block count, and the family id of the chip it is for (flag "family id present"): the RP2350 boot
ROM takes only blocks whose family id it accepts (``rp2350-arm-s`` for a Secure Arm image) and
whose payload is 256 bytes. Pages the ELF leaves partly empty are padded with zeros.

Standard library only.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Dict, List, Tuple

__all__ = ["FAMILY_IDS", "BLOCK_SIZE", "PAYLOAD_SIZE", "UF2Error", "load_segments", "encode", "decode",
           "write_uf2"]

MAGIC_START0 = 0x0A324655  # "UF2\n"
MAGIC_START1 = 0x9E5D5157
MAGIC_END = 0x0AB16F30
FLAG_FAMILY_ID_PRESENT = 0x00002000
BLOCK_SIZE = 512
PAYLOAD_SIZE = 256  # the RP2350 boot ROM takes no other
DATA_FIELD = 476  # bytes 32..507 of a block: the payload, then zeros
FAMILY_IDS = {"rp2350-arm-s": 0xE48BFF59}  # RP2350 datasheet, table of standard UF2 family ids
# Flash a UF2 may target, per family (RP2350 datasheet 5.5.2: a flash image, 0x10000000-0x12000000)
FLASH_WINDOWS = {"rp2350-arm-s": (0x10000000, 0x12000000)}
_HEADER = struct.Struct("<8I")
PT_LOAD = 1


class UF2Error(ValueError):
    """An image that cannot be a UF2 for its family, or a file that is not a valid UF2."""


def load_segments(elf) -> List[Tuple[int, bytes]]:
    """The ELF's loadable bytes as (physical address, bytes): PT_LOAD segments with file contents."""
    data = Path(elf).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise UF2Error(f"{elf} is not a 32-bit little-endian ELF file")
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    segments = []
    for i in range(phnum):
        p_type, offset, _vaddr, paddr, filesz = struct.unpack_from("<5I", data, phoff + i * phentsize)
        if p_type == PT_LOAD and filesz:
            segments.append((paddr, data[offset:offset + filesz]))
    return sorted(segments)


def encode(segments: List[Tuple[int, bytes]], family: str) -> bytes:
    """The UF2 of these bytes for `family` (a name of FAMILY_IDS)."""
    if family not in FAMILY_IDS:
        raise UF2Error(f"unknown UF2 family {family!r}; known: {', '.join(FAMILY_IDS)}")
    low, high = FLASH_WINDOWS[family]
    pages: Dict[int, bytearray] = {}
    for addr, chunk in segments:
        if not (low <= addr and addr + len(chunk) <= high):
            raise UF2Error(f"bytes at 0x{addr:08X}-0x{addr + len(chunk) - 1:08X} lie outside the {family} flash "
                           f"window 0x{low:08X}-0x{high - 1:08X}")
        for i, byte in enumerate(chunk):
            page = (addr + i) & ~(PAYLOAD_SIZE - 1)
            pages.setdefault(page, bytearray(PAYLOAD_SIZE))[addr + i - page] = byte
    if not pages:
        raise UF2Error("the image has no loadable bytes")
    blocks = []
    for number, page in enumerate(sorted(pages)):
        header = _HEADER.pack(MAGIC_START0, MAGIC_START1, FLAG_FAMILY_ID_PRESENT, page, PAYLOAD_SIZE, number,
                              len(pages), FAMILY_IDS[family])
        blocks.append(header + bytes(pages[page]) + bytes(DATA_FIELD - PAYLOAD_SIZE) + struct.pack("<I", MAGIC_END))
    return b"".join(blocks)


def decode(data: bytes) -> Tuple[int, Dict[int, bytes]]:
    """A UF2's family id and its payloads by target address, every block's fields checked."""
    if not data or len(data) % BLOCK_SIZE:
        raise UF2Error(f"a UF2 is whole {BLOCK_SIZE}-byte blocks, not {len(data)} bytes")
    count = len(data) // BLOCK_SIZE
    family, payloads = None, {}
    for number in range(count):
        block = data[number * BLOCK_SIZE:(number + 1) * BLOCK_SIZE]
        m0, m1, flags, addr, size, block_no, blocks, fam = _HEADER.unpack_from(block)
        end, = struct.unpack_from("<I", block, BLOCK_SIZE - 4)
        where = f"UF2 block {number}"
        if (m0, m1, end) != (MAGIC_START0, MAGIC_START1, MAGIC_END):
            raise UF2Error(f"{where}: wrong magic numbers")
        if not flags & FLAG_FAMILY_ID_PRESENT or (family is not None and fam != family):
            raise UF2Error(f"{where}: no family id, or not the first block's")
        if (block_no, blocks) != (number, count) or size != PAYLOAD_SIZE or addr % PAYLOAD_SIZE or addr in payloads:
            raise UF2Error(f"{where}: number {block_no}/{blocks}, {size}-byte payload at 0x{addr:08X}")
        family = fam
        payloads[addr] = block[32:32 + size]
    return family, payloads


def write_uf2(elf, out, family: str) -> Path:
    """Writes the UF2 of `elf`'s loadable bytes to `out`."""
    out = Path(out)
    out.write_bytes(encode(load_segments(elf), family))
    return out
