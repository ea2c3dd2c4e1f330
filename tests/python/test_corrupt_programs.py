"""Every bit of a program flipped with its CRC recomputed (a writer bug or a deliberate edit), read
by the tools as `mcuflow inspect` and `mcuflow run` read it: each variant is a clean InputError
or a program that describes and runs — never another exception.

A small CNN's program: every bit outside the constants (header, records, I/O table, params,
metadata) and every 8th bit of the constants (their flips reach only the kernels' arithmetic and
the load-time table checks, which the C++ suites fuzz); the run is skipped where the flip lies in
the metadata, which the runtime never reads. Every bit: MCUFLOW_EVERY_BIT=1.
"""

from __future__ import annotations

import json
import os
import struct
import traceback

import numpy as np
import pytest
import torch

import mcuflow
from program_bytes import flipped, with_crc

CHUNKS = 4           # spread over the xdist workers
CONSTANT_BIT_STRIDE = 1 if os.environ.get("MCUFLOW_EVERY_BIT") else 8


class TinyCNN(torch.nn.Module):
    """Conv (a tier kernel with its scratch and prepared table on cortex-m55), ReLU, max pool,
    flatten, linear: every record kind and metadata section in a program of about 2 KB."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 2 * 2, 3)

    def forward(self, x):
        return self.fc(torch.flatten(torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2), 1))


@pytest.fixture(scope="module")
def small_program():
    rng = np.random.default_rng(0)
    samples = [rng.random((1, 1, 4, 4), dtype=np.float32) for _ in range(8)]
    program = mcuflow.compile(torch.export.export(TinyCNN().eval(), (torch.from_numpy(samples[0]),)),
                              calibration=[(torch.from_numpy(x),) for x in samples])
    return program, [rng.random((2, 1, 4, 4), dtype=np.float32)]


def metadata_offset(data: bytes) -> int:
    return struct.unpack_from("<I", data, 56)[0]  # Header.metadata_offset


def bits_to_flip(data: bytes) -> list[int]:
    constants_offset, constants_bytes, metadata_offset = struct.unpack_from("<III", data, 48)
    constants = range(8 * constants_offset, 8 * (constants_offset + constants_bytes))
    return [b for b in range(8 * len(data)) if b not in constants or b % CONSTANT_BIT_STRIDE == 0]


def use_as_the_tools_do(data: bytes, xs) -> str:
    """'clean' (one InputError), or 'ok' once inspect's reads and (given inputs) a run succeeded."""
    try:
        p = mcuflow.Program(data)
        p.inputs, p.outputs, p.kernels, p.warnings(), p.fallbacks(), p.tensor_names()
        p.summary()
        p.memory_plan()
        json.dumps(p.describe(), default=str)
        if xs is not None:
            p.run(xs)
    except mcuflow.InputError:
        return "clean"
    return "ok"


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_flipped_bit_is_a_clean_error_or_a_working_program(small_program, chunk):
    program, xs = small_program
    data = program.data
    metadata_start = metadata_offset(data)
    outcomes, failures = {"clean": 0, "ok": 0}, []
    for bit in bits_to_flip(data)[chunk::CHUNKS]:
        variant = flipped(data, bit)
        try:
            outcomes[use_as_the_tools_do(variant, xs if bit < 8 * metadata_start else None)] += 1
        except Exception as e:  # noqa: BLE001 — exactly what must never happen
            failures.append(f"bit {bit}: {type(e).__name__}: {e} at {traceback.extract_tb(e.__traceback__)[-1].name}")
    assert not failures, f"{len(failures)} flips raised: " + "; ".join(failures[:5])
    assert outcomes["clean"] > 0 and outcomes["ok"] > 0  # both sides reached


def test_corrupt_metadata_is_one_line_naming_the_section(small_program):
    program, _ = small_program
    data = program.data
    not_json = flipped(data, 8 * metadata_offset(data) + 2)  # its first byte, '{', becomes a '\x7f'
    with pytest.raises(mcuflow.InputError, match="metadata section"):
        mcuflow.Program(not_json)
    renamed = data.replace(b'"shape":', b'"shapf":', 1)
    with pytest.raises(mcuflow.InputError, match=r"metadata section: metadata.tensors\[0\] lacks 'shape'"):
        mcuflow.Program(with_crc(renamed))


def test_a_program_output_in_an_internal_layout_is_refused(small_program):
    """A flat-NHWC output (an internal layout the host cannot turn into PyTorch's order) was
    accepted and failed in run with a compiler error."""
    program, _ = small_program
    data = bytearray(program.data)
    tensors_offset = struct.unpack_from("<I", data, 28)[0]  # Header.tensors_offset
    output = program.outputs[0]["tensor"]
    data[tensors_offset + 52 * output + 3] = 2  # TensorRecord.layout = kFlatNhwc
    with pytest.raises(mcuflow.InputError, match="output 0 .* layout flat_nhwc"):
        mcuflow.Program(with_crc(bytes(data)))
