"""The CMake integration a user follows (docs/integration.md): examples/cmake_firmware configured
and built with cmake for qemu-m4, run under QEMU, must give the host runtime's answer; and
`mcuflow size` must account for a CMake-built ELF (static library members, CMake object names)."""

import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import _core, device, firmware_sources, measure, qemu  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
from fwutil import REPO, requires_cmake, requires_cross  # noqa: E402
from models import DSCNN, init_bn_stats  # noqa: E402

pytestmark = [requires_cross, requires_cmake]

BOARD = "qemu-m4"


def pattern_inputs(program):
    """What examples/cmake_firmware/main.cpp writes into input buffers, in PyTorch layout:
    physical element k is (k % 7 - 3), times 0.25 for float32."""
    inputs = []
    for spec in program.inputs:
        n = int(np.prod(spec["physical_shape"]))
        values = (np.arange(n) % 7 - 3).astype(np.float32)
        physical = (values * np.float32(0.25)) if np.dtype(spec["dtype"]) == np.float32 else values.astype(np.int8)
        # to_logical takes physical bytes carrying the logical shape (as mcuflow.device does)
        inputs.append(_core.to_logical(physical.astype(spec["dtype"]).reshape(spec["shape"]), spec["layout"]))
    return inputs


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    work = tmp_path_factory.mktemp("cmake_example")
    model = init_bn_stats(DSCNN(channels=16), seed=0).eval()
    program = mcuflow.compile(torch.export.export(model, model.example_input(seed=0)), target="cortex-m4",
                              calibration=[t.numpy() for t in model.example_input(seed=1, batch=16)])
    program.save(work / "model.mfp")
    build = work / "build"
    for cmd in (["cmake", "-S", str(REPO / "examples" / "cmake_firmware"), "-B", str(build),
                 f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'firmware' / 'cmake' / 'arm-none-eabi.cmake'}",
                 f"-DMCUFLOW_BOARD={BOARD}", f"-DMCUFLOW_MODEL={work / 'model.mfp'}"],
                ["cmake", "--build", str(build), "--parallel"]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return program, build / "app.elf"


def test_cmake_example_runs_the_program_like_the_host(example):
    program, elf = example
    code, stdout = qemu.run_elf(elf, BOARD, timeout_s=60)
    assert code == 0, stdout
    m = re.search(r"example: argmax 0x([0-9a-f]{8}) crc32 0x([0-9a-f]{8})", stdout)
    assert m, stdout
    host = np.ascontiguousarray(program.run(pattern_inputs(program))[0])
    assert int(m.group(1), 16) == int(np.argmax(host.reshape(-1)))
    assert int(m.group(2), 16) == zlib.crc32(host.tobytes())  # every output byte, bit for bit


def test_cmake_runtime_links_only_the_programs_kernels_and_size_accounts_for_it(example):
    program, elf = example
    report, embedded = measure.analyze(elf, board=BOARD)
    assert embedded.data == program.data
    groups = {c["group"]: c for c in report["flash"]["components"]}
    assert set(report["flash"]["kernels"]) == {op["kernel"] for op in program.metadata["ops"]}
    assert groups["runtime_core"]["bytes"] > 0 and groups["kernel_table"]["bytes"] > 0
    assert groups["program"]["bytes"] == len(program.data)
    assert report["ram"]["arena"] == {"RAM": program.arena_bytes}


def test_cmake_reads_the_kernels_from_the_op_records_of_a_program_without_metadata(example, tmp_path):
    """A device image (Program.device_image: no metadata) configures the runtime with the kernels
    its op records name, as `mcuflow firmware` links them."""
    program, _ = example
    stripped = tmp_path / "stripped.mfp"
    stripped.write_bytes(program.device_image)
    build = tmp_path / "build"
    p = subprocess.run(["cmake", "-S", str(REPO / "examples" / "cmake_firmware"), "-B", str(build),
                        f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'firmware' / 'cmake' / 'arm-none-eabi.cmake'}",
                        f"-DMCUFLOW_BOARD={BOARD}", f"-DMCUFLOW_MODEL={stripped}"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    table = (build / "mcuflow_mcuflow" / "kernel_table.cpp").read_text()
    linked = set(re.findall(r"&mcuflow::ops::kernel_entry_(\w+),", table))
    assert linked == set(program.kernels) and len(linked) >= 3
    # One generator: the table and the sources are the ones `mcuflow firmware` builds for the board.
    generated = device.generate_sources(program, tmp_path / "firmware", get_board(BOARD))
    assert table == (tmp_path / "firmware" / "kernel_table.cpp").read_text() and generated[1].name == "kernel_table.cpp"
    lists = (build / "mcuflow_mcuflow" / "mcuflow_sources.cmake").read_text()
    kernels = {Path(s).name for s in re.findall(r'"([^"]+)"', lists.split("set(MCUFLOW_KERNEL_SOURCES")[1])}
    assert kernels == {p.name for p in firmware_sources.kernel_sources(REPO, device.used_kernels(program))}
    runtime = {Path(s) for s in re.findall(r'"([^"]+)"', lists.split("set(MCUFLOW_RUNTIME_SOURCES")[1]
                                                                 .split("set(MCUFLOW_KERNEL_SOURCES")[0])}
    tiers = firmware_sources.kernel_tiers(program.kernels)
    assert runtime == set(firmware_sources.runtime_sources(REPO, tiers)) | {build / "mcuflow_mcuflow" / "kernel_table.cpp"}


def test_cmake_names_a_kernel_without_a_source(tmp_path):
    build = tmp_path / "build"
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(t C CXX)\n"
        f'include("{REPO}/firmware/cmake/mcuflow_runtime.cmake")\n'
        "mcuflow_add_runtime(rt KERNELS conv_s8 conv_s8_nosuchtier)\n")
    p = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(build),
                        f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'firmware' / 'cmake' / 'arm-none-eabi.cmake'}"],
                       capture_output=True, text=True)
    assert p.returncode != 0
    assert "mcuflow_add_runtime(rt): unknown kernel 'conv_s8_nosuchtier'" in p.stderr, p.stderr[-2000:]


def test_the_generator_reads_the_kernel_ids_the_runtime_is_built_with():
    assert firmware_sources.kernel_ids(REPO) == _core.kernel_ids()


def test_tier_adapters_come_with_the_scalar_checks_they_share():
    # softmax_s8_dsp's check (check_softmax_s8_exp_table) is defined among the scalar adapters
    assert firmware_sources.kernel_tiers(["softmax_s8_dsp"]) == ["reference", "scalar", "dsp"]
    assert firmware_sources.kernel_tiers(["conv_s8_mve", "fc_s8"]) == ["reference", "scalar", "mve"]
    assert firmware_sources.kernel_tiers(["conv_s8", "fc_s8"]) == ["reference"]
