"""A program the verifier refuses is named where it fails: Program::load reports
the record as codes (op index and input slot, or tensor index; no strings on the device) and the
host names it from the program — the op's kernel and model source line, the tensor's name."""

import struct

import pytest
import torch

import mcuflow
from test_cli import assert_user_error, mcuflow as run_cli
from program_bytes import with_crc


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 6 * 6, 4)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


@pytest.fixture(scope="module")
def program():
    torch.manual_seed(0)
    model = ConvNet().eval()
    ep = torch.export.export(model, (torch.randn(1, 3, 6, 6),))
    return mcuflow.compile(ep, target="cortex-m55", calibration=[torch.randn(8, 3, 6, 6).numpy()])


def header(data: bytes, offset: int) -> int:
    return struct.unpack_from("<I", data, offset)[0]


def test_an_op_whose_params_are_refused_is_named_with_its_kernel_and_source_line(program, tmp_path):
    op = [o["kernel"] for o in program.metadata["ops"]].index("conv_s8_mve")
    data = bytearray(program.data)
    params_bytes_at = header(data, 32) + 28 * op + 24  # OpRecord.params_bytes
    struct.pack_into("<I", data, params_bytes_at, struct.unpack_from("<I", data, params_bytes_at)[0] + 4)
    source = program.metadata["ops"][op]["source"]
    assert "test_load_errors.py" in source
    expected = f"invalid program: op {op} conv_s8_mve ({source}): bad_params"
    with pytest.raises(mcuflow.InputError) as e:
        mcuflow.Program(with_crc(data))
    assert str(e.value) == expected
    (tmp_path / "bad.mfp").write_bytes(with_crc(data))
    assert_user_error(run_cli("inspect", str(tmp_path / "bad.mfp")), expected)


def test_a_read_of_bytes_nothing_wrote_names_the_op_and_its_input_slot(program):
    """The linear layer's input (a view of the conv output) moved past every tensor of the arena."""
    ops = program._host.ops
    fc = [o["kernel"] for o in program.metadata["ops"]].index("fc_s8_mve")
    view = ops[fc]["inputs"][0]
    data = bytearray(program.data)
    arena = header(data, 64)  # Header.arena_bytes
    struct.pack_into("<I", data, 64, arena + 1024)
    struct.pack_into("<I", data, header(data, 28) + 52 * view + 28, arena)  # TensorRecord.offset
    with pytest.raises(mcuflow.InputError, match=rf"^invalid program: op {fc} fc_s8_mve \(.*\), input 0: undefined_read$"):
        mcuflow.Program(with_crc(data))


def test_an_output_nothing_wrote_names_the_tensor(program):
    data = bytearray(program.data)
    io = header(data, 36)
    ops, kernels = program._host.ops, [o["kernel"] for o in program.metadata["ops"]]
    scratch = ops[kernels.index("conv_s8_mve")]["inputs"][6]
    struct.pack_into("<H", data, io + 2 * len(program.inputs), scratch)
    name = program.metadata["tensors"][scratch]["name"]
    with pytest.raises(mcuflow.InputError) as e:
        mcuflow.Program(with_crc(data))
    assert str(e.value) == f"invalid program: tensor {scratch} ({name}): undefined_read"


def test_a_program_without_metadata_still_names_the_ops_kernel(program):
    image = bytearray(program.device_image)
    op = [o["kernel"] for o in program.metadata["ops"]].index("conv_s8_mve")
    params_bytes_at = header(image, 32) + 28 * op + 24
    struct.pack_into("<I", image, params_bytes_at, 0)
    with pytest.raises(mcuflow.InputError) as e:
        mcuflow.Program(with_crc(image))
    assert str(e.value) == f"invalid program: op {op} conv_s8_mve: bad_params"


def test_the_verification_level_is_named_by_verify(program):
    """Verify::kStructure reads no weight: a changed weight byte (checksums left as they were) fails
    the data's CRC at "full" only; a changed record byte fails the structure's CRC at both."""
    data = bytearray(program.data)
    constants = header(data, 48)  # Header.constants_offset
    data[constants] ^= 1
    with pytest.raises(mcuflow.InputError, match="invalid program: bad_checksum$"):
        mcuflow.Program(bytes(data))
    assert mcuflow.Program(bytes(data), verify="structure").arena_bytes == program.arena_bytes
    data[constants - 1] ^= 1
    for level in ("full", "structure"):
        with pytest.raises(mcuflow.InputError, match="invalid program: bad_checksum$"):
            mcuflow.Program(bytes(data), verify=level)
    with pytest.raises(mcuflow.InputError, match="verify is 'full' or 'structure', got 'none'"):
        mcuflow.Program(program.data, verify="none")
