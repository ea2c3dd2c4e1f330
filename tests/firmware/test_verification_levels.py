"""Verify::kStructure is memory safe whatever the prepared bytes it does not recompute hold
(docs/program_format.md, "Verification levels"): the prepared inputs of conv_s8_mve,
conv_s8_1x1_mve, dwconv_s8_mve and fc_s8_mve, and the walked ones of conv_s8_1x1_dsp and
dwconv_s8_3x3_dsp; the loader's memory-safety argument says their values are never an address, a
size or a loop bound.

On qemu-m55, DS-CNN (every one of the four MVE kernels) and a two-row linear program (fc_s8_mve's
scratch), and on qemu-m4 DS-CNN (both DSP kernels), with those bytes replaced by random or extreme
bytes, CRCs rewritten:
- the host and the board refuse each at Verify::kFull, with the same error, and accept it at kStructure;
- on the board each runs to completion (no fault, no error), its outputs differ from the
  original's (the kernels computed with the new bytes), and the programs harness's arena
  snapshots after every op show each op changing only bytes of its own output and scratch, the
  arena bytes no tensor occupies still holding the fill, and the program's bytes unchanged;
- the outputs are the same with the arena filled with 0x00 or 0xFF before bind: no kernel read a
  byte nothing wrote.
The DSP tier's other prepared tables (the general depthwise kernel's, the scalar tier's) are
recomputed at both levels.
"""

import struct
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
DSP_WALKED = ("conv_s8_1x1_dsp", "dwconv_s8_3x3_dsp")  # dsp::walk_matches: compared at kFull only


class TwoRowLinear(torch.nn.Module):
    """A linear layer over two rows: fc_s8_mve with its pair scratch."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.fc = torch.nn.Linear(40, 24)

    def forward(self, x):
        return torch.relu(self.fc(x))


def ds_cnn(target="cortex-m55"):
    m = zoo.get("ds_cnn", seed=0)
    program = mcuflow.compile(m.export(), target=target, calibration=[(x[None],) for x in m.calibration(8)])
    return program, m.evaluation(1)


def ds_cnn_dsp():
    """DS-CNN on the DSP tier: conv_s8_1x1_dsp's and dwconv_s8_3x3_dsp's walked prepared inputs."""
    return ds_cnn("cortex-m4")


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
    """The file byte ranges of every MVE prepared input, and of the DSP tier's walked ones."""
    host, base = program._host, constants_offset(program.device_image)
    names = [t["name"] for t in program.metadata["tensors"]]
    kernels = [op["kernel"] for op in program.metadata["ops"]]
    ranges = []
    for op, kernel in zip(host.ops, kernels):
        slots = [PREPARED_SLOT] if kernel in PREPARED_KERNELS else \
            [s for s, t in enumerate(op["inputs"]) if kernel in DSP_WALKED and names[t].endswith(".dsp_prepared")]
        for slot in slots:
            t = host.tensors[op["inputs"][slot]]
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


@pytest.mark.parametrize("board, make", [(BOARD, ds_cnn), (BOARD, two_row_linear), ("qemu-m4", ds_cnn_dsp)],
                         ids=["ds_cnn", "two_row_linear", "ds_cnn_dsp"])
def test_structure_level_runs_any_prepared_bytes_within_bounds(board, make):
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
    fw = device.cached_build(program, board, harness="programs")
    full = bitflip.run_programs(fw, bad, inputs, board, levels=[FULL] * len(bad))
    assert [r.status for r in full] == host_full

    original = bitflip.run_programs(fw, [image], inputs, board, levels=[STRUCTURE])[0]
    assert original.status == "ok"
    outputs = {}
    for fill in (0x00, 0xFF):
        runs = bitflip.run_programs(fw, bad, inputs, board, levels=[STRUCTURE] * len(bad), fill=fill)
        for k, (v, run) in enumerate(zip(bad, runs)):
            assert run.status == "ok", f"variant {k}: {run.status}"
            assert_writes_in_bounds(program, v, run, fill)
            assert run.outputs != original.outputs, f"variant {k}: the prepared bytes did not reach the kernels"
        outputs[fill] = [r.outputs for r in runs]
    assert outputs[0x00] == outputs[0xFF], "an output depends on arena bytes nothing wrote"


def test_prepared_inputs_off_a_16_byte_boundary_are_refused_at_both_levels():
    """The MVE kernels load their tables as words, which fault off a word boundary: each prepared
    input's offset moved by 1, 2, 4 or 8 bytes (its values unchanged: at kStructure nothing else
    stops it) is refused by host and board alike. (Before this check, the board faulted at kStructure.)"""
    program, x = ds_cnn()
    image = program.device_image
    host, kernels = program._host, [op["kernel"] for op in program.metadata["ops"]]
    tensors_offset = struct.unpack_from("<I", image, 28)[0]  # Header.tensors_offset
    moved = []
    for op, kernel in zip(host.ops, kernels):
        if kernel not in PREPARED_KERNELS:
            continue
        t = op["inputs"][PREPARED_SLOT]
        start, n = constants_offset(image) + host.tensors[t]["offset"], host.tensors[t]["bytes"]
        for shift in (1, 2, 4, 8):
            if start + shift + n > len(image):  # the last constant: the record alone moves
                n = len(image) - start - shift
            v = bytearray(image)
            v[start + shift:start + shift + n] = image[start:start + n]  # the values where the record now points
            offset_at = tensors_offset + 52 * t + 28  # TensorRecord.offset
            struct.pack_into("<I", v, offset_at, struct.unpack_from("<I", v, offset_at)[0] + shift)
            moved.append(with_crc(v))
    levels = [FULL] * len(moved) + [STRUCTURE] * len(moved)
    host_status = []
    for v, level in zip(moved * 2, levels):
        with pytest.raises(ValueError, match="invalid program: ") as e:
            _core.HostProgram(v, ("full", "structure")[level])
        host_status.append("rejected " + str(e.value).removeprefix("invalid program: ").split()[0])
    fw = device.cached_build(program, BOARD, harness="programs")
    runs = bitflip.run_programs(fw, moved * 2, physical(program, x), BOARD, levels=levels)
    assert [r.status for r in runs] == host_status


class PaddedChannels(torch.nn.Module):
    """Channel counts that leave padding lanes in every MVE block (20 = 16 + 4 depthwise, 6 = 4 + 2
    GEMM), and a linear layer of 5 outputs."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.conv = torch.nn.Conv2d(3, 20, 3)
        self.dw = torch.nn.Conv2d(20, 20, 3, groups=20)
        self.pw = torch.nn.Conv2d(20, 6, 1)
        self.fc = torch.nn.Linear(6 * 4 * 4, 5)

    def forward(self, x):
        x = torch.relu(self.pw(torch.relu(self.dw(torch.relu(self.conv(x))))))
        return self.fc(x.flatten(1))


def test_every_prepared_byte_is_checked_alike_by_host_and_board():
    """The board compares prepared inputs in MVE lanes, the host word by word
    (runtime/src/ops/mve/prepared_inputs_check.cpp): the program loads on both at Verify::kFull,
    and each single byte of each prepared input changed (low bit, then high bit) is refused by
    both with the same error, padding lanes and the depthwise weights and zero point row included."""
    model = PaddedChannels().eval()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(6))
    calibration = [torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(s)).numpy() for s in range(4)]
    program = mcuflow.compile(torch.export.export(model, (x,)), target="cortex-m55", calibration=calibration)
    kernels = {op["kernel"] for op in program.metadata["ops"]}
    assert set(PREPARED_KERNELS) <= kernels, kernels
    image = program.device_image
    variants, statuses = [image], ["ok"]
    for start, end in prepared_ranges(program):
        for at in range(start, end):
            for bit in (0x01, 0x80):
                v = bytearray(image)
                v[at] ^= bit
                variants.append(with_crc(v))
                with pytest.raises(ValueError, match="invalid program: ") as e:
                    _core.HostProgram(variants[-1], "full")
                statuses.append("rejected " + str(e.value).removeprefix("invalid program: ").split()[0])
    fw = device.cached_build(program, BOARD, harness="programs")
    board = []
    for start in range(0, len(variants), 1000):
        batch = variants[start:start + 1000]
        board += bitflip.run_programs(fw, batch, physical(program, x.numpy()), BOARD, levels=[FULL] * len(batch))
    assert [r.status for r in board] == statuses
