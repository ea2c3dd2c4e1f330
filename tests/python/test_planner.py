"""Memory planning on whole models (tests/python/models.py and mcuflow.zoo): every plan passes
the independent check of plan_check.py, every byte above the liveness lower bound is explained
in the plan report, and in-place execution and operator scheduling never change an output bit
(compared with the exported order and no in-place execution)."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import mcuflow
from mcuflow import zoo
from models import make_model
from plan_check import check_plan

MODELS = ["small_cnn", "ds_cnn", "resnet"]
# cortex-m0: reference kernels and scalar-tier kernels (which walk pixels as their references do),
# so every op the planner knows may run in place.
TARGET = "cortex-m0"

_cache = {}


def _inputs(model, seed, n):
    return [x.numpy() for x in model.example_input(seed=seed, batch=n)]


def compiled(name, **options):
    key = (name, tuple(sorted(options.items())))
    if key not in _cache:
        model = make_model(name)
        ep = torch.export.export(model, model.example_input(seed=0))
        calibration = [model.example_input(seed=s) for s in range(1, 9)]
        _cache[key] = (model, mcuflow.compile(ep, target=TARGET, calibration=calibration, **options))
    return _cache[key]


def assert_explained(program):
    plan = program.describe()["plan"]
    excess = program.arena_bytes - program.arena_lower_bound
    assert plan["arena"] == program.arena_bytes and plan["lower_bound"] == program.arena_lower_bound
    if excess == 0:
        assert plan["excess"] == []
    else:
        assert plan["excess"][0].startswith(f"{excess} bytes above the lower bound:"), plan["excess"]
        assert any(" are both live at " in line for line in plan["excess"]), plan["excess"]


@pytest.mark.parametrize("name", MODELS)
def test_plan_is_valid_and_every_byte_above_the_bound_is_explained(name):
    _, program = compiled(name)
    check_plan(program)
    assert_explained(program)
    plan = program.describe()["plan"]
    assert program.arena_lower_bound < plan["lower_bound_without_in_place"], "conv chains run in place"
    assert plan["in_place"], "the report lists the in-place ops"


@pytest.mark.parametrize("name", MODELS)
def test_in_place_and_scheduling_never_change_an_output_bit(name):
    model, program = compiled(name)
    _, plain = compiled(name, in_place=False, schedule=False)
    check_plan(plain)
    assert not any(t.get("in_place_of", -1) >= 0 for t in plain.describe()["tensors"])
    assert plain.arena_lower_bound == program.describe()["plan"]["lower_bound_without_in_place"]
    xs = _inputs(model, 3, 16)
    for a, b in zip(program.run(xs), plain.run(xs)):
        assert np.array_equal(a, b)


class TwoBranches(nn.Module):
    """x feeds a wide branch (one 32-channel map, pooled) and a narrow one (two 16-channel maps,
    pooled), then cat. In source order the wide map stays live while the narrow branch runs."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.wide = nn.Conv2d(8, 32, 3, padding=1)
        self.narrow1 = nn.Conv2d(8, 16, 1)
        self.narrow2 = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        a = F.relu(self.wide(x))
        b = F.relu(self.narrow2(F.relu(self.narrow1(x))))
        return torch.cat([F.max_pool2d(a, 2), F.max_pool2d(b, 2)], dim=1)


def test_scheduling_lowers_the_peak_of_a_branchy_model_bit_exactly():
    model = TwoBranches().eval()
    x = torch.randn(1, 8, 12, 12)
    ep = torch.export.export(model, (x,))
    calibration = [(torch.randn(1, 8, 12, 12),) for _ in range(8)]
    exported = mcuflow.compile(ep, target=TARGET, calibration=calibration, schedule=False, in_place=False)
    scheduled = mcuflow.compile(ep, target=TARGET, calibration=calibration, in_place=False)
    report = scheduled.describe()["schedule"]
    assert report["reordered"] and report["peak"] < report["exported_peak"]
    assert scheduled.arena_lower_bound == report["peak"] < exported.arena_lower_bound
    check_plan(scheduled)
    xs = [np.random.default_rng(1).standard_normal((6, 8, 12, 12)).astype(np.float32)]
    assert np.array_equal(scheduled.run(xs)[0], exported.run(xs)[0])


# Building the zoo's image models takes most of a minute each (their BatchNorm statistics come
# from forward passes): the whole zoo runs with MCUFLOW_PLANNER_ALL_ZOO=1 (bench/memory_plan.py
# measures it too).
ZOO = zoo.names() if os.environ.get("MCUFLOW_PLANNER_ALL_ZOO") else ["resnet8", "fc_autoencoder", "kws_transformer"]


@pytest.mark.parametrize("name", ZOO)
def test_zoo_model_plans(name):
    m = zoo.get(name)
    ep = m.export()
    calibration = m.calibration(8)
    program = mcuflow.compile(ep, target=TARGET, calibration=calibration)
    plain = mcuflow.compile(ep, target=TARGET, calibration=calibration, schedule=False, in_place=False)
    check_plan(program)
    assert_explained(program)
    assert program.arena_bytes <= plain.arena_bytes
    xs = [m.evaluation(2)]
    for a, b in zip(program.run(xs), plain.run(xs)):
        assert np.array_equal(a, b)


def test_inspect_prints_the_plan_and_its_reasons(tmp_path):
    _, program = compiled("ds_cnn")
    path = tmp_path / "ds_cnn.mfp"
    program.save(path)
    r = subprocess.run([sys.executable, "-m", "mcuflow.cli", "inspect", str(path)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    for fragment in (f"memory plan: {program.arena_bytes} bytes of activations, liveness lower bound "
                     f"{program.arena_lower_bound}", "without in-place execution the lower bound would be",
                     "placement:", "op order:", "in place: op 2 writes", "bytes below", "bytes above",
                     "in place over"):
        assert fragment in r.stdout, fragment


def _have_board_tools():
    from mcuflow import crossbuild, qemu
    return crossbuild.toolchain_available() and qemu.qemu_available()


@pytest.mark.skipif(not _have_board_tools(), reason="cross toolchain or qemu-system-arm not installed")
def test_ds_cnn_runs_on_the_16_kib_micro_bit(tmp_path, monkeypatch):
    """Two 25x5x64 activations alone are 16,000 bytes; in place, DS-CNN (64 channels) fits the
    micro:bit's 16 KiB with its stack and runtime, and computes the host's bytes."""
    from mcuflow import device

    monkeypatch.setenv("MCUFLOW_CACHE_DIR", str(tmp_path))
    model, program = compiled("ds_cnn")
    assert program.describe()["plan"]["lower_bound_without_in_place"] >= 16000
    xs = _inputs(model, 5, 4)
    on_board = device.run_on_board(program, xs, "qemu-m0", timeout=300)
    for b, h in zip(on_board, program.run(xs)):
        assert np.array_equal(b, h)


def test_board_memory_puts_activations_in_fast_memory_first():
    """qemu-m33: the 32 KiB internal SRAM (fast) comes before the 4 MiB SSRAM; code and
    constants sit in SSRAM, so the weights of the costliest layers fill the fast room left."""
    model, _ = compiled("resnet")
    program = compiled("resnet", memory="qemu-m33")[1]
    plan = program.describe()["plan"]
    assert [r["name"] for r in plan["regions"]] == ["ISRAM"] and plan["regions"][0]["fast"]
    assert plan["copied_weights"], "room left in ISRAM holds weights"
    densities = [c["macs_per_byte"] for c in plan["copied_weights"]]
    assert densities == sorted(densities, reverse=True)
    assert program.arena_bytes <= 32 * 1024
    check_plan(program)
    xs = _inputs(model, 4, 4)
    assert np.array_equal(program.run(xs)[0], compiled("resnet")[1].run(xs)[0])


MEMORY_MAP = {"regions": [{"name": "SRAM", "bytes": 1 << 20}, {"name": "DTCM", "bytes": 6 * 1024, "fast": True}],
              "weights_in_slow_memory": True}


def test_memory_map_spills_the_coldest_activations_and_runs_on_qemu_m55(tmp_path, monkeypatch):
    """A 6 KiB fast DTCM cannot hold ResNet's 8.3 KiB plan: the coldest tensors at its busiest
    op spill to SRAM, the weights go where room is left, and qemu-m55 computes the host's bytes
    with one arena buffer per region in the board's sections."""
    model, single = compiled("resnet")
    path = tmp_path / "map.json"
    path.write_text(__import__("json").dumps(MEMORY_MAP))
    _, program = compiled("resnet", memory=str(path))
    plan = program.describe()["plan"]
    assert [r["name"] for r in plan["regions"]] == ["DTCM", "SRAM"], "fast first"
    assert program.arena_bytes <= 6 * 1024 < single.arena_bytes
    assert plan["spilled"] and all(s["to"] == "SRAM" for s in plan["spilled"])
    assert sum(program.region_bytes) >= program.arena_lower_bound
    check_plan(program)
    xs = _inputs(model, 6, 4)
    on_host = program.run(xs)[0]
    assert np.array_equal(on_host, single.run(xs)[0])
    text = program.memory_plan()
    assert "region DTCM (fast)" in text and "spilled to SRAM" in text
    if _have_board_tools():
        from mcuflow import device

        monkeypatch.setenv("MCUFLOW_CACHE_DIR", str(tmp_path))
        assert np.array_equal(device.run_on_board(program, xs, "qemu-m55", timeout=300)[0], on_host)


@pytest.mark.parametrize("memory, message", [
    ({"regions": []}, "1 to 4 regions"),
    ({"regions": [{"name": "A", "bytes": 8}]}, "bytes must be a whole number"),
    ({"regions": [{"name": "A", "bytes": 64}, {"name": "A", "bytes": 64}]}, "unique"),
    ({"regions": [{"name": "A", "bytes": 64, "fast": "yes"}]}, "fast must be true or false"),
    ("qemu-m99", "unknown board"),
])
def test_bad_memory_maps_are_one_clear_error(memory, message):
    model = make_model("small_cnn")
    ep = torch.export.export(model, model.example_input(seed=0))
    with pytest.raises(mcuflow.errors.InputError, match=message):
        mcuflow.compile(ep, target=TARGET, calibration=[model.example_input(seed=1)], memory=memory)


def test_cli_memory_option(tmp_path):
    model = make_model("small_cnn")
    torch.export.save(torch.export.export(model, model.example_input(seed=0)), tmp_path / "m.pt2")
    np.savez(tmp_path / "calib.npz", x=np.concatenate([x.numpy() for x in model.example_input(seed=1, batch=8)]))
    (tmp_path / "bad.json").write_text("{not json")

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "mcuflow.cli", *map(str, args)], capture_output=True, text=True,
                              timeout=300)

    r = cli("compile", tmp_path / "m.pt2", "--calibration", tmp_path / "calib.npz", "--memory", tmp_path / "bad.json",
            "-o", tmp_path / "m.mfp")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "is not JSON" in r.stderr, r.stderr
    r = cli("compile", tmp_path / "m.pt2", "--calibration", tmp_path / "calib.npz", "--memory", "qemu-m55",
            "-o", tmp_path / "m.mfp")
    assert r.returncode == 0, r.stderr
    r = cli("inspect", tmp_path / "m.mfp")
    assert r.returncode == 0 and "DTCM" in r.stdout, r.stdout


@pytest.mark.skipif(not _have_board_tools(), reason="cross toolchain or qemu-system-arm not installed")
def test_a_program_larger_than_itcm_runs_from_sram_on_qemu_m55(tmp_path, monkeypatch):
    """qemu-m55's code memory (ITCM) is 512 KiB: a program with 480 KiB of weights goes to the
    2 MiB SRAM, QEMU loads it there with the ELF, the board computes the host's bytes and
    `mcuflow size` says where it went; a small program stays in ITCM. With memory="qemu-m55"
    the weights the SRAM-resident program streams are copied into DTCM."""
    from mcuflow import device, measure, memory_map
    from mcuflow.boards import get_board

    monkeypatch.setenv("MCUFLOW_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 480), nn.ReLU()).eval()
    xs = [torch.randn(1, 1024) for _ in range(4)]
    program = mcuflow.compile(torch.export.export(model, (xs[0],)), target="cortex-m55", calibration=xs[1:])
    board = get_board("qemu-m55")
    assert len(program.data) > board.region("ITCM").size - memory_map.CODE_RESERVE
    assert memory_map.program_region(program, board).name == "SRAM"
    assert memory_map.program_region(compiled("ds_cnn")[1], board).name == "ITCM"
    fw = device.cached_build(program, "qemu-m55")
    report, _ = measure.analyze(fw.elf, fw.map, board="qemu-m55")
    assert [c["region"] for c in report["flash"]["components"] if c["group"] == "program"] == ["SRAM"]
    x = xs[0].numpy()
    assert np.array_equal(device.run_on_board(program, [x], "qemu-m55", timeout=300)[0], program.run([x])[0])
    # Planned for the board's memory, the program in slow SRAM copies its weights into DTCM.
    planned = mcuflow.compile(torch.export.export(model, (xs[0],)), target="cortex-m55", calibration=xs[1:],
                              memory="qemu-m55")
    assert memory_map.program_region(planned, board).name == "SRAM"
    assert any(t["storage"] == "copied" for t in planned.describe()["tensors"])
    assert np.array_equal(device.run_on_board(planned, [x], "qemu-m55", timeout=300)[0], program.run([x])[0])
