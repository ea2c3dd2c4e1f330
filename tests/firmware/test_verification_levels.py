"""Verify::kStructure is memory safe whatever the MVE prepared bytes hold (docs/program_format.md,
"Verification levels"): the one recomputation it skips is of the prepared inputs of conv_s8_mve,
conv_s8_1x1_mve, dwconv_s8_mve and fc_s8_mve, and the loader's memory-safety argument says their
values are never an address, a size or a loop bound.

On qemu-m55, DS-CNN (every one of the four kernels) and a two-row linear program (fc_s8_mve's
scratch) with their prepared bytes replaced by random or extreme bytes, CRCs rewritten:
- the host and the board refuse each at Verify::kFull, with the same error, and accept it at kStructure;
- on the board each runs to completion (no fault, no error), its outputs differ from the
  original's (the kernels computed with the new bytes), and the programs harness's arena
  snapshots after every op show each op changing only bytes of its own output and scratch, the
  arena bytes no tensor occupies still holding the fill, and the program's bytes unchanged;
- the outputs are the same with the arena filled with 0x00 or 0xFF before bind: no kernel read a
  byte nothing wrote.
The DSP tier's kStructure skips no check (its prepared tables feed C++ shifts and sums and are
recomputed at both levels): qemu-m4 has nothing value-only to skip.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcuflow  # noqa: E402
from mcuflow import _core, device, zoo  # noqa: E402
import bitflip  # noqa: E402
from fwutil import requires_cross  # noqa: E402
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

BOARD = "qemu-m55"
FULL, STRUCTURE = 0, 1  # mcuflow::Verify
PREPARED_KERNELS = ("conv_s8_mve", "conv_s8_1x1_mve", "dwconv_s8_mve", "fc_s8_mve")
PREPARED_SLOT = 5  # kMvePreparedSlot (kernels_mve.h): after input, weights, bias, multipliers, shifts


class TwoRowLinear(torch.nn.Module):
    """A linear layer over two rows: fc_s8_mve with its pair scratch."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.fc = torch.nn.Linear(40, 24)

    def forward(self, x):
        return torch.relu(self.fc(x))


def ds_cnn():
    m = zoo.get("ds_cnn", seed=0)
    program = mcuflow.compile(m.export(), target="cortex-m55", calibration=[(x[None],) for x in m.calibration(8)])
    return program, m.evaluation(1)


def two_row_linear():
    model = TwoRowLinear().eval()
    x = torch.randn(2, 40, generator=torch.Generator().manual_seed(4))
    calibration = [torch.randn(2, 40, generator=torch.Generator().manual_seed(s)).numpy() for s in range(8)]
    program = mcuflow.compile(torch.export.export(model, (x,)), target="cortex-m55", calibration=calibration)
    return program, x.numpy()


def physical(program, x):
    spec = program.inputs[0]
    return [np.ascontiguousarray(_core.to_physical(np.ascontiguousarray(x, dtype=spec["dtype"]), spec["layout"])).reshape(-1)]


def prepared_ranges(program):
    """The file byte ranges of every MVE prepared input."""
    host, base = program._host, constants_offset(program.device_image)
    kernels = [op["kernel"] for op in program.metadata["ops"]]
    ranges = []
    for op, kernel in zip(host.ops, kernels):
        if kernel in PREPARED_KERNELS:
            t = host.tensors[op["inputs"][PREPARED_SLOT]]
            assert t["storage"] in ("constant", "copied")
            ranges.append((base + t["offset"], base + t["offset"] + t["bytes"]))
    assert ranges
    return ranges


def with_prepared(image: bytes, ranges, make) -> bytes:
    v = bytearray(image)
    for start, end in ranges:
        v[start:end] = make(end - start)
    return with_crc(v)


def variants(image: bytes, ranges) -> list[bytes]:
    """Random prepared bytes (three seeds) and four constant fills (the extremes of int8 and int32 fields)."""
    rng = np.random.default_rng(22)
    random = [with_prepared(image, ranges, lambda n: rng.integers(0, 256, n, dtype=np.uint8).tobytes()) for _ in range(3)]
    return random + [with_prepared(image, ranges, lambda n, b=b: bytes([b]) * n) for b in (0x00, 0x7F, 0x80, 0xFF)]


def ram_range(t):
    start = t["offset"] if t["storage"] == "arena" else t["copy_offset"]
    return t["region"], start, start + t["bytes"]


def in_ram(t):
    return t["storage"] in ("arena", "copied", "state")


def assert_writes_in_bounds(program, image: bytes, run: bitflip.BoardRun, fill: int):
    host = _core.HostProgram(image, "structure")
    ops = host.ops
    assert len(run.arenas) == len(ops) + 1, "an arena snapshot before each op and after the last"
    occupied = [np.zeros(len(b), bool) for b in run.arenas[0]]
    for t in host.tensors:
        if in_ram(t):
            r, start, end = ram_range(t)
            occupied[r][start:end] = True
    for r, buffer in enumerate(run.arenas[-1]):
        free = np.frombuffer(buffer, np.uint8)[~occupied[r]]
        assert np.all(free == fill), f"region {r}: a byte no tensor occupies changed"
    for i, op in enumerate(ops):
        writable = [np.zeros(len(b), bool) for b in run.arenas[i]]
        slots = op["outputs"] + ([op["inputs"][op["scratch_slot"]]] if op["scratch_slot"] else [])
        for t in slots:
            r, start, end = ram_range(host.tensors[t])
            writable[r][start:end] = True
        for r, (before, after) in enumerate(zip(run.arenas[i], run.arenas[i + 1])):
            changed = np.frombuffer(before, np.uint8) != np.frombuffer(after, np.uint8)
            stray = np.flatnonzero(changed & ~writable[r])
            assert stray.size == 0, f"op {i} ({program.metadata['ops'][i]['kernel']}) wrote region {r} bytes {stray[:8]}"
    assert run.program_after == image, "the run wrote into the program"


@pytest.mark.parametrize("make", [ds_cnn, two_row_linear], ids=["ds_cnn", "two_row_linear"])
def test_structure_level_runs_any_mve_prepared_bytes_within_bounds(make):
    program, x = make()
    image = program.device_image  # what the firmware embeds: the variants are as long
    inputs = physical(program, x)
    bad = variants(image, prepared_ranges(program))
    # Host and board: refused at kFull with the same error, accepted at kStructure.
    host_full = []
    for v in bad:
        with pytest.raises(ValueError, match="invalid program: ") as e:
            _core.HostProgram(v, "full")
        host_full.append("rejected " + str(e.value).removeprefix("invalid program: ").split()[0])
        _core.HostProgram(v, "structure")
    fw = device.cached_build(program, BOARD, harness="programs")
    full = bitflip.run_programs(fw, bad, inputs, BOARD, levels=[FULL] * len(bad))
    assert [r.status for r in full] == host_full

    original = bitflip.run_programs(fw, [image], inputs, BOARD, levels=[STRUCTURE])[0]
    assert original.status == "ok"
    outputs = {}
    for fill in (0x00, 0xFF):
        runs = bitflip.run_programs(fw, bad, inputs, BOARD, levels=[STRUCTURE] * len(bad), fill=fill)
        for k, (v, run) in enumerate(zip(bad, runs)):
            assert run.status == "ok", f"variant {k}: {run.status}"
            assert_writes_in_bounds(program, v, run, fill)
            assert run.outputs != original.outputs, f"variant {k}: the prepared bytes did not reach the kernels"
        outputs[fill] = [r.outputs for r in runs]
    assert outputs[0x00] == outputs[0xFF], "an output depends on arena bytes nothing wrote"
