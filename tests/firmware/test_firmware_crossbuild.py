"""crossbuild error reporting, per-file optimisation, and the CMake toolchain file."""

from __future__ import annotations

import json
import subprocess

import pytest

from fwutil import FIRMWARE, FW_TESTS, boards, crossbuild, qemu, requires_cmake, requires_cross

pytestmark = requires_cross


def test_compile_error_raises_firmware_error_with_stderr(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int main(void) { return undeclared_thing; }\n")
    with pytest.raises(crossbuild.FirmwareError) as ei:
        crossbuild.build_firmware("qemu-m4", [bad], tmp_path / "out")
    e = ei.value
    assert "undeclared_thing" in e.stderr
    assert "error" in e.stderr
    assert "bad.c" in str(e)
    assert e.board == "qemu-m4"


def test_ram_overflow_is_reported_in_kib(tmp_path):
    src = tmp_path / "big.c"
    src.write_text(
        "#include <stdint.h>\n"
        "static volatile uint8_t big[20 * 1024];\n"
        "int main(void) { big[0] = 1; return big[100]; }\n")
    with pytest.raises(crossbuild.FirmwareError) as ei:
        crossbuild.build_firmware("qemu-m0", [src], tmp_path / "out")
    msg = str(ei.value)
    # 20 KiB array + 2 KiB stack + a little .data/.bss on a 16 KiB board.
    assert "needs 23 KiB of RAM, board has 16 KiB" in msg, msg
    assert "overflowed" in ei.value.stderr


def test_link_error_is_a_firmware_error(tmp_path):
    src = tmp_path / "undef.c"
    src.write_text("extern int nowhere(void);\nint main(void) { return nowhere(); }\n")
    with pytest.raises(crossbuild.FirmwareError) as ei:
        crossbuild.build_firmware("qemu-m3", [src], tmp_path / "out")
    assert "nowhere" in ei.value.stderr
    assert "linking" in ei.value.message


def test_heap_use_does_not_link(tmp_path):
    src = tmp_path / "heap.c"
    src.write_text("#include <stdlib.h>\nint main(void) { return malloc(10) != 0; }\n")
    with pytest.raises(crossbuild.FirmwareError):
        crossbuild.build_firmware("qemu-m4", [src], tmp_path / "out")


def test_o3_sources_defines_and_stack_size(tmp_path):
    kernel = tmp_path / "kernel.c"
    kernel.write_text(
        "#include <stdint.h>\n"
        "int32_t dot(const int8_t *a, const int8_t *b, int n) {\n"
        "  int32_t s = 0; for (int i = 0; i < n; ++i) s += a[i] * b[i]; return s; }\n")
    app = tmp_path / "app.c"
    app.write_text(
        "#include <stdint.h>\n#include \"mcuflow/board.h\"\n"
        "int32_t dot(const int8_t *a, const int8_t *b, int n);\n"
        "static int8_t a[64], b[64];\n"
        "int main(void) { for (int i = 0; i < 64; ++i) { a[i] = (int8_t)i; b[i] = 2; }\n"
        "  return dot(a, b, 64) == 4032 ? APP_CODE : 1; }\n")
    fb = crossbuild.build_firmware("qemu-m55", [app], tmp_path / "out", o3_sources=[kernel],
                                   defines={"APP_CODE": 9}, stack_size=4096)
    info = json.loads(fb.build_info.read_text())
    opts = {s["path"].rsplit("/", 1)[-1]: s["opt"] for s in info["sources"]}
    assert opts["kernel.c"] == "-O3" and opts["app.c"] == "-Os"
    assert opts["startup.c"] == "-Os"
    assert "-DAPP_CODE=9" in info["flags"]["defines"]
    assert info["stack_size"] == 4096 and info["sections"][".stack"]["size"] == 4096
    assert info["mcpu"] == "cortex-m55"
    rc, out = qemu.run_elf(fb.elf, "qemu-m55", timeout_s=30, cwd=tmp_path)
    assert rc == 9, out


def test_unknown_board_for_build(tmp_path):
    with pytest.raises(boards.UnknownBoardError):
        crossbuild.build_firmware("not-a-board", [FW_TESTS / "calib.c"], tmp_path)


@requires_cmake
@pytest.mark.parametrize("board", ["qemu-m0", "qemu-m55"])
def test_cmake_toolchain_file_builds_runnable_firmware(board, tmp_path):
    build = tmp_path / "build"
    cfg = subprocess.run(
        ["cmake", "-S", str(FIRMWARE), "-B", str(build),
         f"-DCMAKE_TOOLCHAIN_FILE={FIRMWARE / 'cmake' / 'arm-none-eabi.cmake'}",
         f"-DMCUFLOW_BOARD={board}"], capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    bld = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True)
    assert bld.returncode == 0, bld.stdout + bld.stderr
    for f in ("selftest.elf", "selftest.map", "selftest.bin", "calib.elf"):
        assert (build / f).is_file()
    (tmp_path / "selftest_in.bin").write_bytes(b"cmake")
    rc, out = qemu.run_elf(build / "selftest.elf", board, timeout_s=60, cwd=tmp_path)
    assert rc == 42, out
    assert (tmp_path / "selftest_out.bin").read_bytes() == bytes(x ^ 0x5A for x in b"ekamc")
