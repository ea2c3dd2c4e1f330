"""The Raspberry Pi Pico 2 image (board pico2, RP2350): `mcuflow firmware --board pico2` writes a
firmware.uf2 whose blocks follow the UF2 format and the RP2350 boot ROM's rules (datasheet 5.5.2),
which decodes back to the ELF's bytes, starts at flash 0x10000000 with the vector table, and holds
the minimum Arm IMAGE_DEF block (datasheet 5.9.5.1) in its first 4 KiB. No emulator runs it."""

from __future__ import annotations

import random
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

import mcuflow
from mcuflow import boards, crossbuild, uf2

RP2350_ARM_S = 0xE48BFF59  # datasheet table 455
FLASH = 0x10000000
SRAM, SRAM_END = 0x20000000, 0x20082000  # main RAM, datasheet 5.5.2

requires_cross = pytest.mark.skipif(not crossbuild.toolchain_available(), reason="arm-none-eabi-gcc not installed")


def test_blocks_carry_the_format_s_fields_and_decode_back():
    rng = random.Random(0)
    segments = [(FLASH, bytes(rng.randrange(256) for _ in range(1000))),
                (FLASH + 0x1404, bytes(rng.randrange(256) for _ in range(300)))]
    data = uf2.encode(segments, "rp2350-arm-s")
    pages = [FLASH, FLASH + 0x100, FLASH + 0x200, FLASH + 0x300, FLASH + 0x1400, FLASH + 0x1500]
    assert len(data) == 512 * len(pages)
    for number, page in enumerate(pages):
        block = data[512 * number:512 * (number + 1)]
        assert struct.unpack_from("<8I", block) == (0x0A324655, 0x9E5D5157, 0x00002000, page, 256, number,
                                                    len(pages), RP2350_ARM_S)
        assert struct.unpack_from("<I", block, 508) == (0x0AB16F30,) and block[288:508] == bytes(220)
    family, payloads = uf2.decode(data)
    assert family == RP2350_ARM_S and sorted(payloads) == pages
    image = bytearray(0x1600)
    for addr, payload in payloads.items():
        image[addr - FLASH:addr - FLASH + 256] = payload
    for addr, chunk in segments:
        assert image[addr - FLASH:addr - FLASH + len(chunk)] == chunk
    assert image[1000:0x1404] == bytes(0x1404 - 1000)  # the gap, padded with zeros


@pytest.mark.parametrize("segments, family, message", [
    ([(0x20000000, b"1234")], "rp2350-arm-s", "outside the rp2350-arm-s flash window 0x10000000-0x11FFFFFF"),
    ([(0x11FFFFFC, b"12345678")], "rp2350-arm-s", "outside"),
    ([(FLASH, b"1234")], "rp2040", "unknown UF2 family 'rp2040'"),
    ([], "rp2350-arm-s", "no loadable bytes"),
])
def test_an_image_that_cannot_be_a_uf2_is_one_clear_error(segments, family, message):
    with pytest.raises(uf2.UF2Error, match=message):
        uf2.encode(segments, family)


@pytest.mark.parametrize("corrupt, message", [
    (lambda d: d[:-1], "whole 512-byte blocks"),
    (lambda d: d[:508] + b"XXXX" + d[512:], "wrong magic"),
    (lambda d: d[:8] + bytes(4) + d[12:], "no family id"),
    (lambda d: d[:20] + struct.pack("<I", 7) + d[24:], "number 7/2"),
])
def test_decode_refuses_a_damaged_uf2(corrupt, message):
    data = uf2.encode([(FLASH, bytes(300))], "rp2350-arm-s")
    with pytest.raises(uf2.UF2Error, match=message):
        uf2.decode(corrupt(data))


@pytest.fixture(scope="module")
def firmware(tmp_path_factory):
    """`mcuflow firmware --board pico2` of a small model."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3)).eval()
    x = torch.randn(8, 1, 8, 8)
    tmp = tmp_path_factory.mktemp("pico2")
    mcuflow.compile(torch.export.export(model, (x[:1],)), target="cortex-m33", calibration=x.numpy()).save(tmp / "m.mfp")
    p = subprocess.run([sys.executable, "-m", "mcuflow.cli", "firmware", str(tmp / "m.mfp"), "--board", "pico2",
                        "-o", str(tmp / "fw")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "firmware.uf2" in p.stdout
    return tmp / "fw"


@requires_cross
def test_the_uf2_is_the_elf_s_bytes_from_flash_0x10000000(firmware):
    family, payloads = uf2.decode((firmware / "firmware.uf2").read_bytes())
    assert family == RP2350_ARM_S and min(payloads) == FLASH
    assert sorted(payloads) == list(range(FLASH, FLASH + 256 * len(payloads), 256))  # contiguous pages
    image = b"".join(payloads[a] for a in sorted(payloads))
    binary = (firmware / "firmware.bin").read_bytes()  # objcopy's view of the ELF, from its lowest address
    assert image[:len(binary)] == binary and image[len(binary):] == bytes(len(image) - len(binary))
    for addr, chunk in uf2.load_segments(firmware / "firmware.elf"):
        assert FLASH <= addr and image[addr - FLASH:addr - FLASH + len(chunk)] == chunk


def _symbol(elf, name):
    out = subprocess.run([crossbuild.tool_path("nm"), str(elf)], capture_output=True, text=True, check=True).stdout
    return next(int(line.split()[0], 16) for line in out.splitlines() if line.split()[-1] == name)


@requires_cross
def test_the_vector_table_opens_the_image(firmware):
    image = (firmware / "firmware.bin").read_bytes()
    initial_sp, reset = struct.unpack_from("<II", image, 0)
    assert SRAM < initial_sp <= SRAM_END and initial_sp % 8 == 0
    assert reset & 1 == 1  # Thumb
    assert FLASH <= reset & ~1 < FLASH + boards.get_board("pico2").region("FLASH").size
    assert reset & ~1 == _symbol(firmware / "firmware.elf", "Reset_Handler")


@requires_cross
def test_the_image_def_block_is_the_datasheet_s_in_the_first_4_kib(firmware):
    image = (firmware / "firmware.bin").read_bytes()
    words = struct.unpack_from("<1024I", image)
    starts = [i for i, w in enumerate(words) if w == 0xFFFFDED3]  # PICOBIN_BLOCK_MARKER_START
    assert len(starts) == 1
    start = starts[0]
    header, item, last, link, end = words[start:start + 5]
    assert end == 0xAB123579  # PICOBIN_BLOCK_MARKER_END
    assert (item & 0xFF, (item >> 8) & 0xFF) == (0x42, 1)  # IMAGE_TYPE item (1-byte size), 1 word
    flags = item >> 16
    assert flags & 0xF == 1  # IMAGE_TYPE_EXE
    assert (flags >> 4) & 0x3 == 2  # EXE_SECURITY_S
    assert (flags >> 8) & 0x7 == 0  # EXE_CPU_ARM
    assert (flags >> 12) & 0x7 == 1  # EXE_CHIP_RP2350
    assert flags & 0x80C0 == 0  # reserved bits, TBYB clear
    assert (last & 0xFF, (last >> 8) & 0xFFFF, last >> 24) == (0xFF, 1, 0)  # LAST item: 1 word of items
    assert link == 0  # a loop of this block alone
    assert (start + 5) * 4 <= 4096


@requires_cross
def test_no_semihosting_in_the_pico2_image(firmware):
    syms = subprocess.run([crossbuild.tool_path("nm"), str(firmware / "firmware.elf")], capture_output=True,
                          text=True, check=True).stdout
    assert "semihost" not in syms and "mcuflow_uart_write_byte" in syms


def test_no_emulator_runs_pico2_one_clear_line(tmp_path):
    program = mcuflow.compile(torch.export.export(nn.Sequential(nn.Linear(4, 2)).eval(), (torch.randn(1, 4),)),
                              target="cortex-m33", calibration=np.random.default_rng(0).normal(size=(8, 4)).astype("f"))
    program.save(tmp_path / "m.mfp")
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    p = subprocess.run([sys.executable, "-m", "mcuflow.cli", "run", str(tmp_path / "m.mfp"), "--input",
                        str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npz"), "--board", "pico2"],
                       capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr
    assert "board pico2 has no emulator" in p.stderr
