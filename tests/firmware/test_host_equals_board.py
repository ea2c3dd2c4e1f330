"""Host and board agree on every program both accept, and refuse the same inputs.

- A NaN or Inf input is refused by the runtime on the board exactly as on the host: one rule in
  Session::run, one message (`mcuflow run --board` prints the host's line).
- A dequantize whose output partly overlaps its input (a bit flip the campaign found) is refused by both
  verifiers with bad_aliasing, while the planner's own in-place placements still run.
- The bit-flip campaign (bitflip.py), sampled: flipped DS-CNN programs that the host accepts and
  whose output changes run on qemu-m55 with the host's outputs, bit for bit. The full campaign
  (every bit) runs by hand: `.venv/bin/python tests/firmware/bitflip.py` (docs/validation.md).
"""

import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcuflow  # noqa: E402
from mcuflow import cli, device  # noqa: E402
from mcuflow.boards import get_board  # noqa: E402
import bitflip  # noqa: E402
from fwutil import requires_cross  # noqa: E402
from models import make_model  # noqa: E402
from program_bytes import constants_offset, with_crc  # noqa: E402

pytestmark = requires_cross

_programs = {}


def small_cnn_program(board):
    """small_cnn (float32 I/O) for the board's core."""
    target = get_board(board).core
    if target not in _programs:
        model = make_model("small_cnn")
        ep = torch.export.export(model, model.example_input(seed=0))
        calibration = [x.numpy() for x in model.example_input(seed=1, batch=16)]
        _programs[target] = (model, mcuflow.compile(ep, target=target, calibration=calibration))
    return _programs[target]


@pytest.mark.parametrize("board", ["qemu-m55", "qemu-m3"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs_are_refused_on_the_board_as_on_the_host(board, bad):
    model, program = small_cnn_program(board)
    x = model.example_input(seed=2, batch=3)[0].numpy()
    x[2, 0, 1, 1] = bad
    with pytest.raises(mcuflow.InputError) as host:
        program.run([x])
    with pytest.raises(mcuflow.InputError) as on_board:
        device.run_on_board(program, [x], board)
    assert str(host.value) == str(on_board.value) == "an input of sample 2 contains NaN or Inf"
    # The samples before it ran and are finite on both.
    assert np.array_equal(program.run([x[:2]])[0], device.run_on_board(program, [x[:2]], board)[0])


def test_cli_run_on_a_board_prints_the_hosts_line_for_a_nan_input(tmp_path, capsys):
    model, program = small_cnn_program("qemu-m55")
    program.save(tmp_path / "m.mfp")
    x = model.example_input(seed=3, batch=1)[0].numpy()
    x[0, 0, 0, 0] = np.nan
    np.save(tmp_path / "x.npy", x)
    lines = []
    for board in ("host", "qemu-m55"):
        code = cli.main(["run", str(tmp_path / "m.mfp"), "--input", str(tmp_path / "x.npy"), "-o",
                         str(tmp_path / f"y_{board}.npz"), "--board", board])
        err = capsys.readouterr().err.strip()
        assert code == 1 and len(err.splitlines()) == 1, err
        lines.append(err)
    assert lines[0] == lines[1] == "mcuflow: error: an input of sample 0 contains NaN or Inf"


def test_a_dequantize_overlapping_its_input_is_refused_by_host_and_board(tmp_path):
    """The bit-flip campaign's case: dequantize's output moved 16 bytes up, onto the end of its own input
    (reference on the host, the MVE kernel on the board: they computed different floats)."""
    model, program = small_cnn_program("qemu-m55")
    image = bytearray(program.data)
    tensors_offset = struct.unpack_from("<I", image, 28)[0]  # Header.tensors_offset (format.h)
    op = [op["kernel"] for op in program.metadata["ops"]].index("dequantize_s8_f32_mve")
    (src,), (out,) = program._host.ops[op]["inputs"], program._host.ops[op]["outputs"]
    tensor, n = program._host.tensors[out], program._host.tensors[src]["bytes"]
    assert tensor["storage"] == "arena"
    offset_at = tensors_offset + out * 52 + 28  # TensorRecord (52 bytes): offset after 4 bytes and 6 dims
    assert struct.unpack_from("<I", image, offset_at)[0] == tensor["offset"]
    # Past the place where each float is written after the input bytes under it were read (the
    # output ending where the input ends), and still on the input.
    start = program._host.tensors[src]["offset"]
    placed = [o for o in range((start - 3 * n) // 4 * 4 + 4, start + n, 4) if 0 <= o <= program.arena_bytes - 4 * n]
    assert placed, "no room in the arena for an overlapping placement"
    struct.pack_into("<I", image, offset_at, placed[0])
    altered = with_crc(image)
    # Host and board name the op, its kernel and its model source line alike.
    named = rf"op {op} dequantize_s8_f32_mve( \(.*\))?: bad_aliasing"  # the model's line, where it has one
    with pytest.raises(mcuflow.InputError, match=f"invalid program: {named}$"):
        mcuflow.Program(altered)
    for_board = mcuflow.Program(program.data)
    for_board.data = altered
    fw = device.build(for_board, "qemu-m55", tmp_path / "fw")
    with pytest.raises(device.DeviceError, match=rf"runtime error bad_aliasing.*program rejected: {named}$"):
        device.run_elf_on_inputs(fw, for_board, [[model.example_input(seed=4)[0].numpy()]], "qemu-m55")


def test_the_ds_cnn_output_index_flipped_onto_a_scratch_is_refused_by_host_and_board():
    """The campaign's disagreement (bit 28,627 of the format-2 image, 33,171 now that tensor
    records are 52 bytes): one bit of the output index names a tier kernel's scratch instead of
    the dequantize output. The board returned what conv_s8_1x1_mve left there, the host what its
    arena held: both now refuse it, as a read of bytes no op output wrote last."""
    program, x = bitflip.ds_cnn_program("cortex-m55")
    image = program.device_image
    io_offset, (inputs,) = struct.unpack_from("<I", image, 36)[0], struct.unpack_from("<H", image, 24)  # Header
    entry = io_offset + 2 * inputs  # the first output's tensor index
    output = struct.unpack_from("<H", image, entry)[0]
    kernels = [op["kernel"] for op in program.metadata["ops"]]
    scratches = {op["inputs"][6] for op, k in zip(program._host.ops, kernels) if k in ("conv_s8_mve", "conv_s8_1x1_mve")}
    flips = [b for b in range(16) if output ^ (1 << b) in scratches]
    assert flips, "no single bit of the output index names a scratch"
    bit = entry * 8 + flips[0]
    variant = bitflip.flipped(image, bit)
    with pytest.raises(mcuflow.InputError, match="undefined_read"):
        mcuflow.Program(variant)
    spec = program.inputs[0]
    physical = [np.ascontiguousarray(bitflip._core.to_physical(np.ascontiguousarray(x, dtype=spec["dtype"]),
                                                               spec["layout"])).reshape(-1)]
    c = bitflip.Campaign()
    fw = device.cached_build(program, "qemu-m55", harness="programs")
    bitflip.run_on_board(fw, [(bit, variant, [])], physical, "qemu-m55", c)
    assert dict(c.board_refused) == {"rejected undefined_read": 1}, c.summary()


SAMPLED_BITS = int(os.environ.get("MCUFLOW_BITFLIP_BITS", "2000"))


def test_sampled_bit_flips_of_ds_cnn_agree_on_host_and_qemu_m55():
    """Most of the image is weights and prepared tables, whose flips the load-time table checks
    refuse: the sample takes three quarters of its bits from the records and params before the
    constants (about 2 % of those flips change the output and run on the board)."""
    program, x = bitflip.ds_cnn_program("cortex-m55")
    image = program.device_image
    constants = constants_offset(image)
    rng = np.random.default_rng(23)
    records = rng.choice(constants * 8, SAMPLED_BITS * 3 // 4, replace=False)
    weights = rng.choice(np.arange(constants * 8, len(image) * 8), SAMPLED_BITS // 4, replace=False)
    c = bitflip.run_campaign(program, x, "qemu-m55", sorted(np.concatenate([records, weights])), log=lambda s: None)
    print(c.summary())
    assert c.disagreements == []
    assert c.board_ran >= 10, c.summary()  # the flips reached the board


def host_status(image: bytes, level: str, physical_inputs) -> tuple[str, list[bytes] | None]:
    """What the programs harness would print for `image` at `level`, from the host runtime, and its outputs."""
    try:
        host = bitflip._core.HostProgram(image, level)
    except ValueError as e:
        return "rejected " + str(e).removeprefix("invalid program: ").split()[0], None
    outputs = bitflip.host_outputs(image, physical_inputs, level)
    return ("ok", outputs) if outputs is not None else (f"host run failed ({len(host.ops)} ops)", None)


def test_sampled_bit_flips_of_ds_cnn_are_refused_alike_by_host_and_qemu_m55_at_both_levels():
    """Every sampled flip, at Verify::kFull and Verify::kStructure, on host and board: the same
    refusal (error name) or both run it; what kFull accepts kStructure accepts, and runs with the
    host's outputs bit for bit. (What only kStructure accepts may differ: a flipped weight, or a
    param only the MVE prepared bytes depend on, such as an input offset, feeds the host's
    reference and not the prepared bytes the board's kernel reads: docs/program_format.md.)"""
    program, x = bitflip.ds_cnn_program("cortex-m55")
    image = program.device_image
    constants = constants_offset(image)
    rng = np.random.default_rng(29)
    bits = np.concatenate([rng.choice(constants * 8, 300, replace=False),
                           rng.choice(np.arange(constants * 8, len(image) * 8), 100, replace=False)])
    spec = program.inputs[0]
    physical = [np.ascontiguousarray(bitflip._core.to_physical(np.ascontiguousarray(x, dtype=spec["dtype"]),
                                                               spec["layout"])).reshape(-1)]
    cases = [(int(bit), level, bitflip.flipped(image, int(bit))) for bit in bits for level in (0, 1)]
    fw = device.cached_build(program, "qemu-m55", harness="programs")
    board = []
    for start in range(0, len(cases), bitflip.PROGRAMS_PER_BOOT):
        batch = cases[start:start + bitflip.PROGRAMS_PER_BOOT]
        board += bitflip.run_programs(fw, [v for _, _, v in batch], physical, "qemu-m55", levels=[lv for _, lv, _ in batch])
    seen = {0: set(), 1: set()}
    full_accepts = set()
    for (bit, level, variant), run in zip(cases, board):
        status, outputs = host_status(variant, ("full", "structure")[level], physical)
        assert run.status == status, f"bit {bit} at level {level}"
        seen[level].add(status.split()[0])
        if level == 0 and status == "ok":
            full_accepts.add(bit)
        if bit in full_accepts:
            assert status == "ok" and run.outputs == outputs, f"bit {bit} at level {level}: {status}, outputs differ"
    assert seen[0] == seen[1] == {"ok", "rejected"}, seen  # each level both accepted and refused flips
