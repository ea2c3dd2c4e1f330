"""A program too big for its board gets an error that names what sets the size and what would
shrink it, from the arena's peak tensors and the largest constants."""

import re

import pytest
import torch

import mcuflow
from mcuflow import device, fit
from mcuflow.boards import board_named
from mcuflow.errors import DeviceError


def _conv_program(**options):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU()).eval()
    x = torch.randn(1, 3, 64, 64)
    return mcuflow.compile(torch.export.export(model, (x,)), calibration=[(x,)], target="cortex-m0", **options)


def _wide_linear_program(**options):
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 16)).eval()
    x = torch.randn(4, 512)
    return mcuflow.compile(torch.export.export(model, (x[:1],)), calibration=[(x[i:i + 1],) for i in range(4)],
                           target="cortex-m0", **options)


def _tensor_bytes(program, name):
    return next(t["bytes"] for t in program.describe()["tensors"] if t["name"] == name)


def test_ram_error_names_the_peak_tensors_and_the_overage():
    program = _conv_program(io="int8")
    with pytest.raises(DeviceError) as e:
        device.check_board(program, "qemu-m0")
    msg = str(e.value)
    need = int(re.search(r"arena (\d+) bytes \+ stack (\d+) bytes", msg).group(1)) + \
        int(re.search(r"stack (\d+) bytes", msg).group(1))
    over = int(re.search(r"over by (\d+) bytes", msg).group(1))
    assert over == need - 16 * 1024
    peak = program.describe()["plan"]["peak_tensors"]
    largest = max(peak, key=lambda n: _tensor_bytes(program, n))
    assert f"{largest} ({_tensor_bytes(program, largest)} B)" in msg
    assert "patches=2" in msg  # the peak is at the first convolution, which bands can split


def test_ram_advice_offers_bands_only_where_the_compiler_bands():
    def advice(kind):
        d = {"ops": [{"kind": kind}], "tensors": [{"name": "x", "bytes": 4096, "dtype": "int8"}],
             "plan": {"peak_tensors": ["x"], "peak_op": 0}, "precision": "int8", "inputs": [], "outputs": [],
             "arena_bytes": 4096, "arena_lower_bound": 4096}
        return fit.ram_advice(d, 1024)

    assert "patches=2" in advice("conv2d")
    assert "patches=2" not in advice("max_pool2d")  # split_into_patches bands convolutions only


def test_ram_error_of_float_io_suggests_int8_io():
    program = _conv_program()
    with pytest.raises(DeviceError, match=r"io='int8'.* make relu_1\.float a quarter of its size"):
        device.check_board(program, "qemu-m0")


def test_flash_warning_names_the_largest_constants_and_int4():
    program = _wide_linear_program()
    d = program.describe()
    warning = next(w for w in d["warnings"] if "fit no cortex-m0 board" in w)
    largest = max((t for t in d["tensors"] if t["storage"] == "constant"), key=lambda t: t["bytes"])
    assert f"the largest: {largest['name']} {largest['bytes']} B, read by op " in warning
    assert "weights='int4'" in warning


def test_int4_program_does_not_suggest_int4_again():
    from mcuflow.fit import flash_advice

    advice = flash_advice(_wide_linear_program(weights="int4").describe(), over=1000)
    assert "over by 1000 bytes" in advice
    assert "weights='int4' stores" not in advice


def test_linker_overflow_gets_the_advice_of_its_region():
    program = _wide_linear_program()
    stderr = "ld: region `FLASH' overflowed by 1234 bytes\nld: region `RAM' overflowed by 56 bytes\n"
    advice = device._overflow_advice(program, stderr, board_named("qemu-m0"))
    flash_line, ram_line = [line for line in advice.splitlines() if line.strip().startswith(("FLASH", "RAM"))]
    assert "FLASH: over by 1234 bytes; the program is" in flash_line
    assert "RAM: over by 56 bytes; the arena's peak is at op" in ram_line
