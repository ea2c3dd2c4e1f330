"""The STM32F405 as it is (board stm32f405, QEMU netduinoplus2): its own memory map, console and
host files over USART1 (firmware/common/uart_io.c), no semihosting anywhere in the image.

The digits demo model and DS-CNN (planned across SRAM1 and SRAM2) run bit-exact with the host;
the image is a flashable .bin starting at the flash base; `mcuflow size` and `mcuflow bench`
report it like the other boards. Each program's firmware is built once (module fixtures).
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import mcuflow
from mcuflow import bench, boards, crossbuild, device, measure, memory_map, qemu, zoo
from fwutil import REPO, assert_outputs_equal, parse_calib, requires_cmake, requires_cross

pytestmark = requires_cross

BOARD = "stm32f405"
B = boards.get_board(BOARD)
MCUFLOW_EXIT_HARDFAULT = 0xF1


def tool(name: str, *args) -> str:
    return subprocess.run([crossbuild.tool_path(name), *map(str, args)], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture(scope="module")
def digits():
    """The demo's digits CNN (examples/digits), compiled for the chip's core."""
    sys.path.insert(0, str(REPO / "examples" / "digits"))
    from train import train

    model, splits = train(seed=0)
    ep = torch.export.export(model, (torch.from_numpy(splits.train.images[:1]),))
    program = mcuflow.compile(ep, target=B.core, calibration=splits.train.images[:100])
    return program, splits.held_out.images[:40]


@pytest.fixture(scope="module")
def ds_cnn():
    """DS-CNN from the zoo, int8, its RAM planned into the chip's regions."""
    model = zoo.get("ds_cnn", seed=0)
    program = mcuflow.compile(model.export(), target=B.core, calibration=model.calibration(32), memory=BOARD)
    return program, model.evaluation(3)


@pytest.fixture(scope="module")
def ds_cnn_firmware(ds_cnn):
    return device.cached_build(ds_cnn[0], BOARD)


def test_digits_run_bit_exact_with_the_host(digits):
    program, images = digits
    on_board = device.run_on_board(program, images, BOARD)
    on_host = program.run(images)
    assert_outputs_equal(on_board, on_host)


def test_ds_cnn_planned_for_the_chip_runs_bit_exact(ds_cnn, ds_cnn_firmware):
    program, inputs = ds_cnn
    # the plan may use both SRAMs; DS-CNN's 20 KB of activations fit SRAM1, which comes first
    assert [name for name, _, _ in memory_map.memory_regions(BOARD)[0]] == ["SRAM1", "SRAM2"]
    names = [r["name"] for r in program.metadata["plan"]["regions"]]
    assert names == ["SRAM1"]
    outputs, counts = device.run_elf_on_inputs(ds_cnn_firmware, program, [[x[None]] for x in inputs], BOARD)
    host = program.run(inputs)[0]
    np.testing.assert_array_equal(np.concatenate([o[0] for o in outputs]), host)
    assert len(counts) == len(inputs) and min(counts) > 1_000_000  # 2.7 M MACs at < 1 MAC per instruction
    # the arena buffers sit in the regions the plan names
    symbols = tool("nm", ds_cnn_firmware.elf)
    for i, name in enumerate(names):
        addr = int(re.search(rf"^([0-9a-f]+) \w _ZN12_GLOBAL__N_19g_region{i}E", symbols, re.M).group(1), 16)
        region = B.region(name)
        assert region.base <= addr and addr + program.region_bytes[i] <= region.end


def test_the_image_has_no_semihosting(ds_cnn_firmware):
    elf = ds_cnn_firmware.elf
    code = tool("objdump", "-d", elf)
    assert "mcuflow_uart_write_byte" in code  # the console goes to the UART instead
    # BKPT 0xAB (Thumb) and SVC 0xAB are the semihosting traps; no instruction may be one
    assert not re.search(r"\b(bkpt|svc)\s+(0x00ab|0xab|171)\b", code, re.I)
    halfwords = re.findall(r"^\s*[0-9a-f]+:\s+([0-9a-f]{4})\s+(\S+)", code, re.M)
    assert halfwords and not [op for hw, op in halfwords if hw in ("beab", "dfab")]
    assert not re.search(r"semihost|rdimon|_sys_open|SYS_WRITE", tool("nm", elf), re.I)


def test_the_bin_is_a_flash_image_with_its_vector_table_at_the_flash_base(ds_cnn_firmware):
    fw = ds_cnn_firmware
    flash, sram1 = B.region("FLASH"), B.region("SRAM1")
    segments = re.findall(r"^\s*LOAD\s+0x[0-9a-f]+ 0x([0-9a-f]+) 0x([0-9a-f]+) 0x([0-9a-f]+)",
                          tool("readelf", "-lW", fw.elf), re.M)
    loaded = [(int(paddr, 16), int(size, 16)) for _, paddr, size in segments if int(size, 16)]
    assert min(p for p, _ in loaded) == flash.base
    assert all(flash.base <= p and p + n <= flash.end for p, n in loaded)  # .data loads from flash too
    image = fw.bin.read_bytes()
    assert len(image) == max(p + n for p, n in loaded) - flash.base
    stack_top, reset = struct.unpack_from("<II", image)
    symbols = dict((name, int(addr, 16)) for addr, name in re.findall(r"^([0-9a-f]+) \w (\S+)$",
                                                                      tool("nm", fw.elf), re.M))
    assert stack_top == symbols["__stack_top__"] and sram1.base < stack_top <= sram1.end
    assert reset == symbols["Reset_Handler"] | 1 and flash.base <= reset < flash.end


def test_size_reports_flash_ram_and_stack(ds_cnn, ds_cnn_firmware):
    program, _ = ds_cnn
    report = measure.size_report(ds_cnn_firmware.elf)
    flash, ram = report["flash"], report["ram"]
    groups = {c["group"]: c for c in flash["components"]}
    assert groups["program"]["bytes"] == len(program.device_image)
    assert groups["program"]["region"] == "FLASH"
    assert ram["arena"] == {"SRAM1": program.region_bytes[0]}
    assert ram["stack_reserved"] == B.default_stack_size
    assert 0 < ram["stack_high_water"] < ram["stack_reserved"]
    assert report["record"]["board"] == BOARD


def test_bench_counts_are_deterministic(ds_cnn):
    program, inputs = ds_cnn
    r = bench.run_bench(program, BOARD, warmup=0, runs=2, inputs=[inputs[:1]])
    observations = r["regions"]["inference"]["observations"] + r["regions"]["cold_inference"]["observations"]
    assert len(set(observations)) == 1 and observations[0] > 0
    assert r["profile"]["inference_ops_total"] > 0
    assert r["argmax"] == int(np.argmax(program.run(inputs[:1])[0]))


def test_timer_input_clock_is_measured(firmware, tmp_path):
    # With PSC = 0 the count is TIM2's input clock: 7 instructions per loop iteration at
    # 2^shift ns each give ticks = 7 * n * 2^shift * f / 1e9 (+ a constant).
    fb = firmware.get("calib", BOARD, defines={"MCUFLOW_TIM_PRESCALER": 0})
    rc, out = qemu.run_elf(fb.elf, BOARD, timeout_s=60, cwd=tmp_path)
    assert rc == 0, out
    rows = dict(parse_calib(out)[2])
    ticks_per_iteration = (rows[100000] - rows[10000]) / 90000
    clock_hz = ticks_per_iteration / (7 * B.ns_per_instruction) * 1e9
    assert clock_hz == B.timer_clock_hz
    assert B.tick_hz == B.timer_clock_hz // 32  # PSC = 31 in board.c


@pytest.mark.parametrize("address, faults", [(0x10000000, True), (0x1000FFFC, True),  # the CCM
                                             (0x2001FFFC, False), (0x2001C000, False)])  # SRAM2
def test_qemu_models_sram_but_not_the_ccm(firmware, tmp_path, address, faults):
    # Why the board leaves the CCM out: under QEMU 7.2 a store there takes a fault.
    fb = firmware.get("fault", BOARD, defines={"FAULT_KIND": 4, "FAULT_ADDRESS": f"0x{address:08X}u"})
    rc, out = qemu.run_elf(fb.elf, BOARD, timeout_s=30, cwd=tmp_path)
    assert "fault test start" in out
    assert (rc, "mcuflow: HardFault" in out) == ((MCUFLOW_EXIT_HARDFAULT, True) if faults else (0, False)), out


def test_a_hang_is_killed_with_a_clear_error(firmware, tmp_path):
    fb = firmware.get("fault", BOARD, defines={"FAULT_KIND": 3})
    t0 = time.monotonic()
    with pytest.raises(qemu.QemuTimeoutError, match="sent no exit frame within timeout_s=2") as e:
        qemu.run_elf(fb.elf, BOARD, timeout_s=2, cwd=tmp_path)
    assert time.monotonic() - t0 < 20
    assert "fault test start" in e.value.stdout


def test_a_missing_input_file_is_one_clear_error(digits, tmp_path):
    program, images = digits
    fw = device.cached_build(program, BOARD)
    (tmp_path / "batch.bin").write_bytes(np.uint32(1).tobytes())  # but no in_0_0.bin
    with pytest.raises(device.DeviceError, match=r"code 2 \(input/output file error\): mcuflow: cannot read in_0_0.bin"):
        device.run_harness(fw.elf, BOARD, tmp_path, timeout=60)


@requires_cmake
def test_a_cmake_build_generates_the_linker_script_from_the_board_file(tmp_path):
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", REPO / "firmware", "-B", build, f"-DMCUFLOW_BOARD={BOARD}",
                 f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'firmware' / 'cmake' / 'arm-none-eabi.cmake'}"],
                ["cmake", "--build", build, "--target", "calib"]):
        p = subprocess.run(list(map(str, cmd)), capture_output=True, text=True)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "Generated from board.json" in (build / "mcuflow_board_stm32f405" / "link.ld").read_text()
    rc, out = qemu.run_elf(build / "calib.elf", BOARD, timeout_s=60, cwd=tmp_path)
    body, empty, rows, _ = parse_calib(out)
    assert rc == 0 and {d - body * n for n, d in rows} == {empty}, out
