"""A user's board file (examples/boards/imaginary_m7.json): an imaginary Cortex-M7 part with ITCM,
DTCM and two SRAMs, its memory map placed onto QEMU mps2-an500's RAM, given as `--board FILE.json`.

Its linker script is generated from the file, a small model runs bit-exact with the host, and the
arena lands in the region the file names: SRAM2 by default, the planned regions with --memory.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

import mcuflow
from mcuflow import boards, crossbuild, device, memory_map
from fwutil import REPO, assert_outputs_equal, requires_cross

pytestmark = requires_cross

BOARD_FILE = REPO / "examples" / "boards" / "imaginary_m7.json"


def nm(elf, symbol: str) -> int:
    out = subprocess.run([crossbuild.tool_path("nm"), str(elf)], capture_output=True, text=True, check=True).stdout
    return next(int(line.split()[0], 16) for line in out.splitlines() if line.split()[-1] == symbol)


def small_model(memory=None):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 4 * 4, 5)).eval()
    x = torch.randn(16, 2, 8, 8)
    program = mcuflow.compile(torch.export.export(model, (x[:1],)), target="cortex-m7",
                              calibration=x.numpy(), memory=memory)
    return program, torch.randn(6, 2, 8, 8).numpy()


def test_the_board_file_is_a_cortex_m7_board_on_the_an500():
    b = boards.board_named(str(BOARD_FILE))
    assert (b.name, b.core, b.tier, b.qemu_machine) == ("imaginary-m7", "cortex-m7", "dsp", "mps2-an500")
    assert [r.name for r in b.regions] == ["ITCM", "DTCM", "SRAM1", "SRAM2"]
    assert b.arena.name == "SRAM2" and b.support_source.endswith("firmware/boards/qemu-m7/board.c")


def test_a_small_model_runs_bit_exact_with_its_arena_in_the_file_s_region(tmp_path):
    program, x = small_model()
    fw = device.build(program, str(BOARD_FILE), tmp_path / "fw")
    text = (tmp_path / "fw" / "link.ld").read_text()
    assert "Generated from imaginary_m7.json" in text and "SRAM2 (rwx) : ORIGIN = 0x60000000, LENGTH = 1M" in text
    sram2 = boards.get_board("imaginary-m7").region("SRAM2")
    start = nm(fw.elf, "__mcuflow_arena_sram2_start__")
    end = nm(fw.elf, "__mcuflow_arena_sram2_end__")
    assert sram2.base <= start < end <= sram2.end and end - start >= program.region_bytes[0]
    assert nm(fw.elf, "__stack_top__") <= 0x20000000 + 128 * 1024  # the stack in DTCM
    assert nm(fw.elf, "Reset_Handler") < 512 * 1024  # code in ITCM
    assert json.loads(fw.build_info.read_text())["board_file"] == str(BOARD_FILE)
    assert_outputs_equal(device.run_on_board(program, x, str(BOARD_FILE)), program.run(x))
    # a later process finds the board through the build record: `mcuflow size` names its regions
    p = subprocess.run([sys.executable, "-m", "mcuflow.cli", "size", str(fw.elf), "--no-run", "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["record"]["board"] == "imaginary-m7" and list(report["ram"]["arena"]) == ["SRAM2"]


def test_a_plan_for_the_board_file_uses_its_regions_fastest_first():
    assert [name for name, _, _ in memory_map.memory_regions(str(BOARD_FILE))[0]] == ["DTCM", "SRAM1", "SRAM2"]
    program, x = small_model(memory=str(BOARD_FILE))
    assert [r["name"] for r in program.metadata["plan"]["regions"]] == ["DTCM"]
    assert_outputs_equal(device.run_on_board(program, x, str(BOARD_FILE)), program.run(x))


@pytest.mark.parametrize("change, message", [
    ({"arena_region": "ITCM"}, "\"arena_region\" must name a ram region, not 'ITCM'"),
    ({"core": "cortex-m77"}, "unknown core 'cortex-m77'"),
    ({"regions": "overlap"}, "regions DTCM (0x20000000-0x2001FFFF) and SRAM1 (0x20010000-0x2010FFFF) overlap"),
])
def test_the_cli_refuses_a_bad_board_file_in_one_line(tmp_path, change, message):
    d = json.loads(BOARD_FILE.read_text())
    if change.get("regions") == "overlap":
        d["regions"][2]["base"] = "0x20010000"
    else:
        d.update(change)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    program = tmp_path / "p.mfp"
    small_model()[0].save(program)
    for args in (["boards", str(bad)], ["firmware", str(program), "--board", str(bad), "-o", str(tmp_path / "fw")]):
        p = subprocess.run([sys.executable, "-m", "mcuflow.cli", *args], capture_output=True, text=True)
        assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr
        assert message in p.stderr and str(bad) in p.stderr
    assert not (tmp_path / "fw").exists()
