"""mcuflow size and mcuflow bench on the emulated boards.

size: its totals must equal what arm-none-eabi-size reports (flash = text + data, static RAM =
data + bss) on every board, its components must come from the linker map (no unexplained
bytes), the arena must be counted once, and the heap must be empty.
bench: instruction counts under QEMU are deterministic, the JSON carries the whole record, the
per-op profile adds up to the inference count and the application path computes the host's
answer.
"""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import bench, boards, cli, crossbuild, device, firmware_sources, measure  # noqa: E402
from fwutil import DEV_BOARDS, requires_cross  # noqa: E402
from models import DSCNN, init_bn_stats  # noqa: E402
from html_check import check_histogram, check_timeline, marks, parse_report  # noqa: E402

pytestmark = requires_cross


def small_dscnn():
    """DS-CNN with 16 channels: fits qemu-m0's 16 KiB of RAM."""
    return init_bn_stats(DSCNN(channels=16), seed=0).eval()


def arm_none_eabi_size(elf: Path) -> dict:
    out = subprocess.run([crossbuild.tool_path("size"), "-B", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    text, data, bss = (int(v) for v in out.splitlines()[1].split()[:3])
    return {"text": text, "data": data, "bss": bss}


@pytest.mark.parametrize("board_name", DEV_BOARDS)
def test_size_reconciles_with_arm_none_eabi_size(board_name, tmp_path):
    board = boards.get_board(board_name)
    model = small_dscnn()
    x = model.example_input(seed=1, batch=16)
    program = mcuflow.compile(torch.export.export(model, model.example_input(seed=0)), target=board.core,
                              calibration=[t.numpy() for t in x])
    fw = device.build(program, board_name, tmp_path / "fw")
    report = measure.size_report(fw.elf)
    size = arm_none_eabi_size(fw.elf)

    flash = report["flash"]
    assert flash["total"] == size["text"] + size["data"]
    assert sum(c["bytes"] for c in flash["components"]) == flash["total"]
    groups = {c["group"]: c for c in flash["components"]}
    # every byte comes from an input section the map names; only alignment fill is left over
    assert not [k for k in groups["padding"]["items"] if k.startswith("unlisted")]
    assert groups["padding"]["bytes"] < flash["total"] // 100
    assert groups["program"]["bytes"] == len(program.device_image)  # the program without its metadata
    assert set(flash["kernels"]) == set(device.used_kernels(program))
    assert groups["runtime_core"]["bytes"] > 0 and groups["startup_board"]["bytes"] > 0

    ram = report["ram"]
    assert ram["static_total"] == size["data"] + size["bss"]
    counted_once = (ram["data"] + ram["bss"] + sum(ram["arena"].values()) + ram["stack_reserved"]
                    + ram["heap_reserved"] + sum(ram["other"].values()))
    assert counted_once == ram["static_total"]
    assert ram["arena"] == {board.arena_region: max(program.arena_bytes, 16)}
    assert ram["stack_reserved"] == board.default_stack_size
    assert 0 < ram["stack_high_water"] < ram["stack_reserved"]
    assert ram["heap_reserved"] == 0 and ram["heap_used"] == 0
    assert report["record"]["board"] == board_name
    assert report["record"]["program_sha256"] == hashlib.sha256(program.data).hexdigest()


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """DS-CNN-16 exported, compiled for cortex-m55 by the CLI (so the model hash is recorded)."""
    work = tmp_path_factory.mktemp("bench")
    model = small_dscnn()
    torch.export.save(torch.export.export(model, model.example_input(seed=0)), work / "model.pt2")
    np.savez(work / "calib.npz", *[t.numpy() for t in model.example_input(seed=1, batch=16)])
    assert cli.main(["compile", str(work / "model.pt2"), "--calibration", str(work / "calib.npz"),
                     "--target", "cortex-m55", "-o", str(work / "model.mfp")]) == 0
    x = model.example_input(seed=7)[0].numpy()
    np.save(work / "x.npy", x)
    return work


BENCH_ARGS = ["--board", "qemu-m55", "--warmup", "1", "--runs", "5"]


def bench_json(work: Path, capsys) -> dict:
    assert cli.main(["bench", str(work / "model.mfp"), *BENCH_ARGS, "--input", str(work / "x.npy"), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_bench_html_plots_the_numbers_of_its_json(compiled, capsys):
    html = compiled / "bench.html"
    assert cli.main(["bench", str(compiled / "model.mfp"), *BENCH_ARGS, "--json", "--html", str(html)]) == 0
    captured = capsys.readouterr()
    r = json.loads(captured.out)  # the progress lines went to stderr
    assert "mcuflow bench: running 1 warm-up and 5 measured inferences on qemu-m55" in captured.err.splitlines()
    parser = parse_report(html.read_text())
    assert list(parser.sections) == ["op_latency", "latency_histogram", "memory_timeline", "footprint"]
    bars = marks(parser, "op_latency")
    assert [(int(b["index"]), b["kernel"], int(b["value"])) for b in bars] == \
        [(p["index"], p["kernel"], p["instructions"]) for p in r["profile"]["ops"]]
    check_histogram(parser, "latency_histogram", r["regions"]["inference"]["observations"])
    check_timeline(parser, mcuflow.Program.load(compiled / "model.mfp"))
    memory = r["memory"]
    used = {m["label"]: int(m["used"]) for m in marks(parser, "footprint")}
    assert used == {"flash (text + data)": memory["flash_bytes"], "static RAM (data + bss)": memory["static_ram_bytes"],
                    "stack high water": memory["stack_high_water"]}
    size = measure.size_report(r["firmware"]["elf"], run=False)  # what `mcuflow size` says of the same ELF
    assert (memory["flash_bytes"], memory["static_ram_bytes"]) == (size["flash"]["total"], size["ram"]["static_total"])


def test_two_bench_runs_print_identical_medians(compiled, capsys):
    outputs = []
    for _ in range(2):
        assert cli.main(["bench", str(compiled / "model.mfp"), *BENCH_ARGS]) == 0
        outputs.append(capsys.readouterr().out)
    medians = [re.findall(r"^(inference|application) +(\d+)", out, re.M) for out in outputs]
    assert len(medians[0]) == 2 and medians[0] == medians[1]
    assert outputs[0] == outputs[1]  # every figure, not only the medians


def test_bench_json_carries_the_record_and_every_observation(compiled, capsys):
    r = bench_json(compiled, capsys)
    rec = r["record"]
    program = mcuflow.Program.load(compiled / "model.mfp")
    assert rec["mcuflow_version"] == mcuflow.__version__
    assert re.fullmatch(r"[0-9a-f]{40}", rec["mcuflow_commit"])
    assert rec["compiler"].startswith("arm-none-eabi-gcc") and "-mcpu=cortex-m55" in rec["compiler_flags"]["cpu"]
    assert rec["compiler_flags"]["opt_level"] == "-Os"
    assert (rec["target"], rec["board"]) == ("cortex-m55", "qemu-m55")
    assert rec["model_sha256"] == hashlib.sha256((compiled / "model.pt2").read_bytes()).hexdigest()
    assert rec["calibration_sha256"] == hashlib.sha256((compiled / "calib.npz").read_bytes()).hexdigest()
    assert rec["program_sha256"] == hashlib.sha256((compiled / "model.mfp").read_bytes()).hexdigest()
    assert [op["kernel"] for op in rec["ops"]] == [op["kernel"] for op in program.metadata["ops"]]
    assert all(op["tier"] in firmware_sources.TIERS for op in rec["ops"])

    assert r["unit"] == "instructions" and "QEMU" in r["unit_description"]
    regions = r["regions"]
    assert len(regions["init"]["observations"]) == len(regions["cold_inference"]["observations"]) == 1
    assert len(regions["warmup"]["observations"]) == 1
    assert len(regions["reset_state"]["observations"]) == 1 and "without states" in regions["reset_state"]["contains"]
    for name in ("inference", "application"):
        s = regions[name]
        assert len(s["observations"]) == s["runs"] == 5
        assert s["min"] <= s["median"] <= s["p90"] <= s["p99"] <= s["max"]
        assert s["min"] == min(s["observations"]) and s["max"] == max(s["observations"])
        assert s["contains"]
    # the same input every run: counted instructions do not vary
    assert len(set(regions["inference"]["observations"] + regions["cold_inference"]["observations"])) == 1
    assert 0 < r["memory"]["stack_high_water"] < r["memory"]["stack_reserved"]

    # the application path (float input quantization + inference + dequantization + argmax)
    # answers what the host runtime answers
    host = program.run(np.load(compiled / "x.npy"))[0]
    assert r["argmax"] == int(np.argmax(host.reshape(-1)))
    assert regions["application"]["median"] > regions["inference"]["median"]


def test_per_op_profile_adds_up_to_the_inference_count(compiled, capsys):
    r = bench_json(compiled, capsys)
    profile = r["profile"]
    first, end = r["regions"]["inference"]["ops"]
    inference_ops = [p for p in profile["ops"] if p["region"] == "inference"]
    assert [p["index"] for p in inference_ops] == list(range(first, end))
    assert all(p["instructions"] > 0 for p in profile["ops"])
    assert abs(sum(p["share"] for p in profile["ops"]) - 1.0) < 1e-9
    # timing the ops one by one drops only the executor loop's few instructions per op
    gap = r["regions"]["inference"]["median"] - profile["inference_ops_total"]
    assert 0 <= gap <= 10 * len(inference_ops)


def test_init_phases_add_up_to_the_exact_init(compiled, capsys):
    r = bench_json(compiled, capsys)
    # a later wake (Verify::kStructure) skips the data's CRC: fewer instructions than a first boot
    assert r["regions"]["wake_init"]["observations"][0] < r["regions"]["init"]["observations"][0]
    assert (r["regions"]["wake_init"]["phases"]["phases"]["checksum"]
            < r["regions"]["init"]["phases"]["phases"]["checksum"])
    for region in ("init", "wake_init"):
        check_phases_add_up(r, region)


def check_phases_add_up(r, region):
    init = r["regions"][region]["observations"][0]
    phases = r["regions"][region]["phases"]
    assert [p for p, _ in bench.INIT_PHASES] == list(phases["phases"])
    # the phases are the marked load + bind: each mark adds mark_cost to the phase before it, and
    # its own instructions between its two counter reads to none
    counted = sum(phases["phases"].values())
    assert init < phases["total"] and counted < phases["total"] < counted + 100 * phases["marks"]
    assert 0 < phases["mark_cost"] < 100 and phases["marks"] > len(r["profile"]["ops"])
    assert abs(counted - phases["marks"] * phases["mark_cost"] - init) <= init // 100
    # a program holds weights: the CRC, the tensor and op checks all take instructions
    for name in ("checksum", "tensors", "op_checks", "dataflow", "bind_checks"):
        assert phases["phases"][name] > 0, name
    ops = phases["ops"]
    assert [o["index"] for o in ops] == list(range(len(r["profile"]["ops"]) + 1))  # + the outputs' dataflow
    for name in bench._OP_PHASES:
        assert sum(o[name] for o in ops) == phases["phases"][name], name


@pytest.mark.parametrize("target, board, memory", [("cortex-m4", "qemu-m4", None),
                                                    # ISRAM first: activations and copied weights
                                                    ("cortex-m33", "qemu-m33", "qemu-m33")])
def test_painted_arena_high_water_equals_the_plan(target, board, memory):
    """The plan is exact: one run on the board writes up to the end of the highest tensor the
    plan places in each region, and not a byte beyond it (the harness paints the regions)."""
    model = small_dscnn()
    x = model.example_input(seed=1, batch=16)
    program = mcuflow.compile(torch.export.export(model, model.example_input(seed=0)), target=target,
                              calibration=[t.numpy() for t in x], memory=memory)
    tops = bench.planned_arena_tops(program)
    assert all(0 < top <= size < top + 16 for top, size in zip(tops, program.region_bytes))
    if memory:
        assert any(t["storage"] == "copied" for t in program._host.tensors)
    r = bench.run_bench(program, board, warmup=0, runs=1)
    assert r["memory"]["arena_reached"] == r["memory"]["arena_planned"] == tops


def test_painted_arena_high_water_counts_the_states():
    """States are placed in the arena's region (bind writes their initial values): where one
    ends highest, the plan's top is its end, and one run on the board reaches exactly it."""
    from mcuflow import zoo
    m = zoo.get("ds_tcn_stream", seed=0)
    program = mcuflow.compile(m.export(), target="cortex-m4", calibration=m.calibration(50), io="int8")
    tops = bench.planned_arena_tops(program)
    assert tops[0] == max(t["copy_offset"] + t["bytes"] for t in program._host.tensors if t["storage"] == "state")
    r = bench.run_bench(program, "qemu-m4", warmup=0, runs=1)
    assert r["memory"]["arena_reached"] == r["memory"]["arena_planned"] == tops


def test_size_and_bench_reject_bad_input_with_one_line(tmp_path, capsys):
    not_elf = tmp_path / "x.elf"
    not_elf.write_bytes(b"not an elf")
    assert cli.main(["size", str(not_elf)]) == 1
    assert cli.main(["bench", str(not_elf), "--board", "qemu-m55"]) == 1
    assert cli.main(["size", str(tmp_path / "missing.elf")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("mcuflow: error: ") for line in err)
