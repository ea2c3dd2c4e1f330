"""Compile options are one object checked in one place: the compiler's check_options refuses a
bad option with the same line whether it comes through mcuflow.compile's CompileOptions or
straight into _core.compile (which any C++ caller of compile_graph gets too)."""

import pytest

from mcuflow import InputError, _core
from mcuflow.options import CompileOptions

BAD = [
    (dict(patches=65), "patches must be a whole number from 1 to 64, got 65"),
    (dict(patches=0), "patches must be a whole number from 1 to 64, got 0"),
    (dict(stream_input=True), "stream_input fetches the input rows of patch bands: it needs patches > 1"),
    (dict(observer="mse", precision="fp32"), "observer 'mse' applies to int8 compilation only"),
    (dict(observer="percentile", percentile=120), "percentile must be a number above 50 and at most 100, got 120"),
    (dict(precision="int4"), "unknown precision 'int4' (int8, int16, fp32 or mixed)"),
    (dict(target="cortex-m99"), "cortex-m99"),
]


def relu_graph():
    builder = _core.GraphBuilder()
    x = builder.add_input("x", [1, 4])
    (y,) = builder.add_op("relu", [x], {}, "model.py:1", [[1, 4]])
    builder.set_outputs([y])
    return builder


@pytest.mark.parametrize("options, message", BAD)
def test_one_check_for_the_python_api_and_the_compiler(options, message):
    with pytest.raises(InputError) as from_python:
        CompileOptions(**options)
    assert message in str(from_python.value)
    o = {**dict(target="cortex-m55", precision="int8", observer="minmax", percentile=99.99, patches=1,
                stream_input=False), **options}
    with pytest.raises(_core.CompileError) as from_compiler:
        _core.compile(relu_graph(), o["target"], [], o["precision"], "float32", {}, "float", True, True, [], False,
                      o["patches"], o["stream_input"], observer=o["observer"], percentile=float(o["percentile"]))
    assert str(from_compiler.value) == str(from_python.value)


def test_a_checked_object_carries_what_the_compiler_is_given():
    o = CompileOptions(observer="percentile", percentile=99, memory="qemu-m55", patches=2, stream_input=True)
    assert o.percentile == 99.0 and isinstance(o.percentile, float)
    assert [name for name, _, _ in o.regions] == ["DTCM", "SRAM"]
    assert CompileOptions().percentile == 99.99 and CompileOptions().regions == []
    with pytest.raises(InputError, match="percentile applies to observer 'percentile' only"):
        CompileOptions(percentile=99)
