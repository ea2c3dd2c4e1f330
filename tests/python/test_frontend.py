"""Tests of the Python front end (mcuflow.frontend) and calibration normalization.

They use a recording builder with GraphBuilder's four methods, so they run without the C++
module. ``interpret`` re-executes what was recorded with torch.nn.functional and compares it
with the eager model: that checks every attribute the front end sends, not just op kinds.
"""

from __future__ import annotations

import inspect
import os
import re

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

import models
from mcuflow import _core, frontend
from mcuflow.calibration import normalize_calibration
from mcuflow.errors import CalibrationError, InputError, McuflowError, UnsupportedModelError
from mcuflow.frontend import SUPPORTED_KINDS, describe, is_supported_kind

MODELS_FILE = os.path.abspath(models.__file__)
THIS_FILE = os.path.abspath(__file__)
CONTRACT = os.path.join(os.path.dirname(THIS_FILE), "..", "..", "docs", "frontend_contract.md")


# --------------------------------------------------------------------------------------------
# helpers


class RecordingBuilder:
    """Same methods as mcuflow._core.GraphBuilder; records and sanity-checks every call."""

    def __init__(self):
        self.next_id = 0
        self.inputs: list[tuple[str, list[int], int]] = []
        self.constants: dict[int, tuple[str, np.ndarray]] = {}
        self.ops: list[dict] = []
        self.outputs: list[int] | None = None
        self.shapes: dict[int, list[int]] = {}

    def _new(self, shape) -> int:
        i = self.next_id
        self.next_id += 1
        self.shapes[i] = list(shape)
        return i

    def add_input(self, name, shape, dtype="float32"):
        assert isinstance(name, str) and all(type(d) is int for d in shape) and dtype in ("float32", "int32")
        i = self._new(shape)
        self.inputs.append((name, list(shape), i))
        return i

    def add_constant(self, name, array):
        assert isinstance(name, str)
        assert isinstance(array, np.ndarray) and array.dtype == np.float32 and array.flags.c_contiguous
        assert name not in {n for n, _ in self.constants.values()}, f"duplicate constant name {name}"
        i = self._new(array.shape)
        self.constants[i] = (name, array.copy())
        return i

    def add_op(self, kind, inputs, attrs, source, output_shapes):
        assert kind in SUPPORTED_KINDS, kind
        assert all(isinstance(t, int) and t in self.shapes for t in inputs), inputs
        for k, v in attrs.items():
            assert isinstance(k, str)
            assert isinstance(v, (int, float)) or (isinstance(v, list) and all(type(x) is int for x in v)), (k, v)
        assert isinstance(source, str) and source and "\n" not in source
        assert len(output_shapes) == 1 and all(type(d) is int for d in output_shapes[0])
        i = self._new(output_shapes[0])
        self.ops.append(dict(kind=kind, inputs=list(inputs), attrs=dict(attrs), source=source,
                             shape=list(output_shapes[0]), id=i))
        return [i]

    def set_outputs(self, ids):
        assert self.outputs is None
        self.outputs = list(ids)

    # views
    @property
    def kinds(self):
        return [op["kind"] for op in self.ops]

    def constant_names(self):
        return [n for n, _ in self.constants.values()]

    def constant(self, name):
        for n, a in self.constants.values():
            if n == name:
                return a
        raise KeyError(name)

    def ops_of(self, kind):
        return [op for op in self.ops if op["kind"] == kind]


def interpret(b: RecordingBuilder, inputs) -> list[torch.Tensor]:
    """Run the recorded graph in float32 with torch.nn.functional."""
    vals: dict[int, torch.Tensor] = {}
    for (name, shape, i), x in zip(b.inputs, inputs):
        assert list(x.shape) == shape
        vals[i] = x
    for i, (_, arr) in b.constants.items():
        vals[i] = torch.from_numpy(arr)
    for op in b.ops:
        k, a, xs = op["kind"], op["attrs"], [vals[i] for i in op["inputs"]]
        if k == "conv2d" and "padding_end" in a:  # asymmetric: pad explicitly
            (top, left), (bottom, right) = a["padding"], a["padding_end"]
            y = F.conv2d(F.pad(xs[0], (left, right, top, bottom)), xs[1], xs[2] if len(xs) > 2 else None,
                         a["stride"], 0, a["dilation"], a["groups"])
        elif k == "conv2d":
            y = F.conv2d(xs[0], xs[1], xs[2] if len(xs) > 2 else None, a["stride"], a["padding"], a["dilation"], a["groups"])
        elif k == "linear":
            y = F.linear(xs[0], xs[1], xs[2] if len(xs) > 2 else None)
        elif k == "batch_norm":
            y = F.batch_norm(xs[0], xs[3], xs[4], xs[1], xs[2], False, 0.0, a["eps"])
        elif k == "relu":
            y = F.relu(xs[0])
        elif k == "clamp":
            y = torch.clamp(xs[0], a["min"], a["max"])
        elif k == "add":
            y = xs[0] + a.get("alpha", 1) * xs[1]
        elif k == "mul":
            y = xs[0] * xs[1]
        elif k == "max_pool2d":
            y = F.max_pool2d(xs[0], a["kernel"], a["stride"], a["padding"], a["dilation"], bool(a["ceil_mode"]))
        elif k == "avg_pool2d":
            y = F.avg_pool2d(xs[0], a["kernel"], a["stride"], a["padding"], bool(a["ceil_mode"]),
                             bool(a["count_include_pad"]), a.get("divisor_override"))
        elif k == "mean":
            y = xs[0].mean(dim=a["dims"], keepdim=bool(a["keepdim"]))
        elif k == "adaptive_avg_pool2d":
            y = F.adaptive_avg_pool2d(xs[0], a["output_size"])
        elif k == "reshape":
            y = xs[0].reshape(a["shape"])
        elif k == "permute":
            y = xs[0].permute(a["perm"])
        elif k == "softmax":
            y = F.softmax(xs[0], dim=a["dim"])
        elif k == "cat":
            y = torch.cat(xs, dim=a["dim"])
        elif k == "identity":
            y = xs[0]
        elif k == "pad":
            y = F.pad(xs[0], a["pad"], value=a["value"])
        elif k in ("sigmoid", "tanh", "neg", "abs", "log"):
            y = getattr(torch, k)(xs[0])
        elif k in ("hardswish", "hardsigmoid", "silu"):
            y = getattr(F, k)(xs[0])
        elif k == "gelu":
            y = F.gelu(xs[0], approximate="tanh" if a["approximate"] else "none")
        elif k == "elu":
            y = F.elu(xs[0], a["alpha"])
        elif k == "leaky_relu":
            y = F.leaky_relu(xs[0], a["negative_slope"])
        elif k == "sub":
            y = xs[0] - xs[1]
        elif k in ("minimum", "maximum"):
            y = getattr(torch, k)(xs[0], xs[1])
        elif k in ("sum", "amax"):
            y = getattr(torch, k)(xs[0], dim=a["dims"], keepdim=bool(a["keepdim"]))
        elif k == "argmax":
            y = xs[0].argmax(dim=a["dim"], keepdim=bool(a["keepdim"]))
        elif k == "slice":
            index = [slice(None)] * xs[0].dim()
            index[a["dim"]] = slice(a["start"], a["end"], a["step"])
            y = xs[0][tuple(index)]
        elif k == "expand":
            y = xs[0].expand(a["shape"])
        elif k == "conv_transpose2d":
            y = F.conv_transpose2d(xs[0], xs[1], xs[2] if len(xs) > 2 else None, a["stride"], a["padding"],
                                   a["output_padding"], a["groups"], a["dilation"])
        elif k == "matmul":
            y = torch.matmul(xs[0], xs[1])
        elif k == "upsample_nearest2d":
            y = F.interpolate(xs[0], scale_factor=tuple(float(f) for f in a["scale"]), mode="nearest")
        elif k == "layer_norm":
            y = F.layer_norm(xs[0], [xs[0].shape[-1]], xs[1], xs[2], a["eps"])
        elif k == "prelu":
            y = F.prelu(xs[0], xs[1])
        elif k == "mish":
            y = F.mish(xs[0])
        elif k == "upsample_bilinear2d":
            scales = (a["scale_h"], a["scale_w"]) if a["scale_h"] else None
            y = F.interpolate(xs[0], size=None if scales else a["size"], scale_factor=scales, mode="bilinear",
                              align_corners=bool(a["align_corners"]))
        elif k == "group_norm":
            y = F.group_norm(xs[0], a["groups"], xs[1], xs[2], a["eps"])
        elif k in ("eq", "ne", "lt", "le", "gt", "ge"):
            y = getattr(torch, k)(xs[0], xs[1])
        elif k == "where":
            y = torch.where(xs[0].bool(), xs[1], xs[2])
        elif k == "embedding":
            y = F.embedding(xs[0], xs[1])
        else:
            raise AssertionError(k)
        assert list(y.shape) == op["shape"], (op, list(y.shape))
        vals[op["id"]] = y
    return [vals[i] for i in b.outputs]


def export(model, inputs=None, **kw):
    return torch.export.export(model, inputs if inputs is not None else model.example_input(), **kw)


def record(ep):
    b = RecordingBuilder()
    desc = describe(ep, b)
    return b, desc


def marker_line(marker: str, path: str = MODELS_FILE) -> int:
    """Line number of the one line of ``path`` that ends with the comment ``marker``."""
    with open(path) as f:
        hits = [i + 1 for i, line in enumerate(f) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def line_containing(func, text: str) -> int:
    lines, start = inspect.getsourcelines(func)
    hits = [start + i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def case_line(case: str) -> int:
    """The line of SingleOp.forward that implements ``case``."""
    return line_containing(models.SingleOp.forward, f'if c == "{case}":')


def src_ref(source: str) -> tuple[str, int]:
    m = re.match(r"^(.*?):(\d+)(?::|$)", source)
    assert m, source
    return os.path.abspath(m.group(1)), int(m.group(2))


def assert_one_line(msg: str):
    assert msg and "\n" not in msg and "\r" not in msg, repr(msg)


# --------------------------------------------------------------------------------------------
# vocabulary


def test_supported_kinds_match_contract():
    # The vocabulary is the compiler's op registry: an op registered without a row of the
    # contract's table, or a row without a registered op, fails here.
    with open(CONTRACT) as f:
        text = f.read()
    kinds = re.findall(r"^\| (\w+) \|", text, flags=re.M)
    kinds = [k for k in kinds if k != "kind"]
    assert len(kinds) == len(set(kinds)), "a kind has two rows"
    assert set(kinds) == set(_core.op_kinds())
    assert SUPPORTED_KINDS == tuple(_core.op_kinds())
    assert "input_rows" not in SUPPORTED_KINDS  # made by split_into_patches, never sent
    assert all(is_supported_kind(k) for k in kinds)
    assert not is_supported_kind("sin") and not is_supported_kind("aten.conv2d.default")


def test_error_hierarchy():
    for cls in (UnsupportedModelError, CalibrationError, InputError):
        assert issubclass(cls, McuflowError) and issubclass(cls, Exception)


# --------------------------------------------------------------------------------------------
# the three real models


def test_small_cnn():
    model = models.make_model("small_cnn")
    ex = model.example_input()
    b, desc = record(export(model, ex))
    assert b.kinds == ["conv2d", "batch_norm", "relu", "conv2d", "batch_norm", "relu", "max_pool2d", "reshape", "linear"]
    assert b.inputs == [("x", [1, 1, 8, 8], 0)]
    assert desc.inputs == [("x", [1, 1, 8, 8])]
    conv1, bn1, _, conv2 = b.ops[:4]
    assert conv1["attrs"] == {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 1}
    assert len(conv1["inputs"]) == 2  # bias=False
    assert conv1["shape"] == [1, 8, 8, 8] and conv2["shape"] == [1, 16, 8, 8]
    assert bn1["attrs"] == {"eps": 1e-5}
    assert b.ops_of("max_pool2d")[0]["attrs"] == {"kernel": [2, 2], "stride": [2, 2], "padding": [0, 0],
                                                  "dilation": [1, 1], "ceil_mode": 0}
    assert b.ops_of("reshape")[0]["attrs"] == {"shape": [1, 256]}
    assert b.ops[-1]["shape"] == [1, 10] and b.outputs == [b.ops[-1]["id"]]
    assert sorted(b.constant_names()) == sorted([
        "conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var",
        "conv2.weight", "bn2.weight", "bn2.bias", "bn2.running_mean", "bn2.running_var",
        "fc.weight", "fc.bias"])  # num_batches_tracked (int64, unused) is never sent
    sd = model.state_dict()
    for name in b.constant_names():
        np.testing.assert_array_equal(b.constant(name), sd[name].numpy())
    # sources: the model's own lines, not torch's
    fwd = models.SmallCNN.forward
    line1 = line_containing(fwd, "self.bn1(self.conv1(x))")
    for op in b.ops[:3]:
        assert src_ref(op["source"]) == (MODELS_FILE, line1)
        assert op["source"].endswith("x = F.relu(self.bn1(self.conv1(x)))")
    assert src_ref(b.ops[-1]["source"]) == (MODELS_FILE, line_containing(fwd, "return self.fc(x)"))
    torch.testing.assert_close(interpret(b, ex)[0], model(*ex), rtol=1e-5, atol=1e-5)


def test_ds_cnn_layout():
    model = models.make_model("ds_cnn")
    ex = model.example_input()
    assert ex[0].shape == (1, 1, 49, 10)
    b, _ = record(export(model, ex))
    convs = b.ops_of("conv2d")
    assert len(convs) == 9
    assert convs[0]["attrs"] == {"stride": [2, 2], "padding": [5, 1], "dilation": [1, 1], "groups": 1}
    assert convs[0]["shape"] == [1, 64, 25, 5] == [1, 64, *models.DSCNN.feature_hw]
    assert b.shapes[convs[0]["inputs"][1]] == [64, 1, 10, 4]
    dws, pws = convs[1::2], convs[2::2]
    for dw, pw in zip(dws, pws):
        assert dw["attrs"] == {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 64}
        assert b.shapes[dw["inputs"][1]] == [64, 1, 3, 3]
        assert pw["attrs"] == {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 1}
        assert b.shapes[pw["inputs"][1]] == [64, 64, 1, 1]
        assert dw["shape"] == pw["shape"] == [1, 64, 25, 5]
    assert b.kinds.count("batch_norm") == 9 and b.kinds.count("relu") == 9
    assert b.kinds.count("identity") == 2  # the two dropouts, in eval mode
    assert b.ops_of("adaptive_avg_pool2d")[0]["attrs"] == {"output_size": [1, 1]}
    assert b.kinds[-2:] == ["reshape", "linear"] and b.ops[-1]["shape"] == [1, 12]
    # ops inside DSBlock report DSBlock.forward's lines
    dw_line = line_containing(models.DSBlock.forward, "self.bn_dw(self.dw(x))")
    pw_line = line_containing(models.DSBlock.forward, "self.bn_pw(self.pw(x))")
    assert all(src_ref(op["source"]) == (MODELS_FILE, dw_line) for op in dws)
    assert all(src_ref(op["source"]) == (MODELS_FILE, pw_line) for op in pws)
    torch.testing.assert_close(interpret(b, ex)[0], model(*ex), rtol=1e-4, atol=1e-4)


def test_resnet_skip_adds():
    model = models.make_model("resnet")
    ex = model.example_input()
    b, _ = record(export(model, ex))
    adds = b.ops_of("add")
    assert len(adds) == 2
    by_id = {op["id"]: op for op in b.ops}
    add_line = line_containing(models.BasicBlock.forward, "out + self.shortcut(x)")
    for add in adds:
        assert add["attrs"] == {}
        assert src_ref(add["source"]) == (MODELS_FILE, add_line)
        assert all(i in by_id for i in add["inputs"])  # both operands are activations
    # block1: identity shortcut — the second operand is the stem's ReLU output
    assert by_id[adds[0]["inputs"][0]]["kind"] == "batch_norm"
    assert by_id[adds[0]["inputs"][1]]["kind"] == "relu"
    # block2: projection shortcut — 1×1 stride-2 conv + BN
    proj_bn = by_id[adds[1]["inputs"][1]]
    assert proj_bn["kind"] == "batch_norm"
    proj = by_id[proj_bn["inputs"][0]]
    assert proj["kind"] == "conv2d" and proj["attrs"]["stride"] == [2, 2] and proj["attrs"]["padding"] == [0, 0]
    assert b.shapes[proj["inputs"][1]] == [32, 16, 1, 1]
    # every add is followed by a relu of it
    for add in adds:
        assert any(op["kind"] == "relu" and op["inputs"] == [add["id"]] for op in b.ops)
    assert b.ops[-1]["shape"] == [1, 10]
    torch.testing.assert_close(interpret(b, ex)[0], model(*ex), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", list(models.MODELS))
def test_core_aten_graph_is_understood(name):
    """ep.run_decompositions(): convolution, _native_batch_norm_legit_no_training + getitem,
    addmm on permute(W), mean.dim for the global pool, dropout as clone."""
    model = models.make_model(name)
    ex = model.example_input()
    ep = export(model, ex)
    b1, _ = record(ep)
    b2, _ = record(ep.run_decompositions())
    expect = [("mean" if k == "adaptive_avg_pool2d" else k) for k in b1.kinds if k != "identity"]
    assert [k for k in b2.kinds if k != "identity"] == expect  # eval dropout: gone or a clone
    for op in b2.ops_of("mean"):
        assert op["attrs"] == {"dims": [2, 3], "keepdim": 1}
    # the linear weight is the original parameter again, not a transposed copy
    lin = b2.ops_of("linear")[0]
    assert b2.constants[lin["inputs"][1]][0] == "fc.weight"
    np.testing.assert_array_equal(b2.constants[lin["inputs"][1]][1], model.fc.weight.detach().numpy())
    torch.testing.assert_close(interpret(b2, ex)[0], model(*ex), rtol=1e-4, atol=1e-4)


def test_models_are_deterministic():
    for name in models.MODELS:
        a, b = models.make_model(name, seed=3), models.make_model(name, seed=3)
        for (k, v), (_, w) in zip(a.state_dict().items(), b.state_dict().items()):
            assert torch.equal(v, w), (name, k)
        assert torch.equal(a.example_input(seed=5)[0], b.example_input(seed=5)[0])
    c = models.make_model("small_cnn", seed=4)
    assert not torch.equal(c.conv1.weight, models.make_model("small_cnn", seed=3).conv1.weight)


def test_init_bn_stats_gives_realistic_ranges():
    model = models.make_model("ds_cnn")
    for bn in [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]:
        assert not torch.allclose(bn.running_var, torch.ones_like(bn.running_var))
        assert not torch.allclose(bn.weight, torch.ones_like(bn.weight))
        assert bn.momentum == 0.1 and not bn.training
    # normalized pre-activations have roughly unit scale (not blown up or collapsed)
    feats = {}
    model.blocks[3].bn_pw.register_forward_hook(lambda m, i, o: feats.setdefault("o", o))
    with torch.no_grad():
        model(*model.example_input(seed=9, batch=8))
    std = feats["o"].std().item()
    assert 0.3 < std < 3.0, std


# --------------------------------------------------------------------------------------------
# one model per op

# case -> [(kind, attrs, number of inputs)]
EXPECTED = {
    "conv2d": [("conv2d", {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 1}, 3)],
    "conv2d_strided": [("conv2d", {"stride": [2, 2], "padding": [1, 2], "dilation": [1, 1], "groups": 1}, 2)],
    "conv2d_dilated": [("conv2d", {"stride": [1, 1], "padding": [2, 2], "dilation": [2, 2], "groups": 1}, 3)],
    "conv2d_same": [("conv2d", {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 1}, 3)],
    "depthwise_conv2d": [("conv2d", {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 8}, 2)],
    "linear": [("linear", {}, 3)],
    "linear_nobias": [("linear", {}, 2)],
    "batch_norm": [("batch_norm", {"eps": 1e-3}, 5)],
    "batch_norm_noaffine": [("batch_norm", {"eps": 1e-5}, 5)],
    "relu": [("relu", {}, 1)],
    "relu_inplace": [("identity", {}, 1), ("relu", {}, 1)],
    "relu6": [("clamp", {"min": 0.0, "max": 6.0}, 1)],
    "hardtanh": [("clamp", {"min": -2.0, "max": 3.0}, 1)],
    "clamp": [("clamp", {"min": -0.5, "max": 0.75}, 1)],
    "clamp_min": [("clamp", {"min": 0.25, "max": frontend.FLOAT_MAX}, 1)],
    "clamp_max": [("clamp", {"min": -frontend.FLOAT_MAX, "max": 1.5}, 1)],
    "add": [("add", {}, 2)],
    "add_scalar": [("add", {}, 2)],
    "add_const": [("add", {}, 2)],
    "add_alpha": [("add", {"alpha": 2.0}, 2)],  # passed through; the compiler rejects alpha != 1
    "mul": [("mul", {}, 2)],
    "mul_scalar": [("mul", {}, 2)],
    "mul_const": [("mul", {}, 2)],
    "max_pool2d": [("max_pool2d", {"kernel": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1], "ceil_mode": 0}, 1)],
    "max_pool2d_pad": [("max_pool2d", {"kernel": [3, 3], "stride": [2, 2], "padding": [1, 1], "dilation": [1, 1], "ceil_mode": 1}, 1)],
    "avg_pool2d": [("avg_pool2d", {"kernel": [2, 2], "stride": [2, 2], "padding": [0, 0], "ceil_mode": 0, "count_include_pad": 1}, 1)],
    "avg_pool2d_pad": [("avg_pool2d", {"kernel": [3, 3], "stride": [1, 1], "padding": [1, 1], "ceil_mode": 0, "count_include_pad": 0}, 1)],
    "mean": [("mean", {"dims": [2, 3], "keepdim": 1}, 1)],
    "mean_last": [("mean", {"dims": [2], "keepdim": 0}, 1)],
    "adaptive_avg_pool2d": [("adaptive_avg_pool2d", {"output_size": [1, 1]}, 1)],
    "adaptive_avg_pool2d_2x2": [("adaptive_avg_pool2d", {"output_size": [2, 2]}, 1)],
    "reshape": [("reshape", {"shape": [1, 6, 4]}, 1)],
    "flatten": [("reshape", {"shape": [1, 24]}, 1)],
    "squeeze": [("reshape", {"shape": [1, 6, 1]}, 1), ("reshape", {"shape": [1, 6]}, 1)],
    "unsqueeze": [("reshape", {"shape": [1, 6, 1]}, 1)],
    "permute": [("permute", {"perm": [0, 2, 3, 1]}, 1)],
    "softmax": [("softmax", {"dim": 1}, 1)],
    "cat": [("cat", {"dim": 1}, 2)],
    "dropout": [("identity", {}, 1)],
    "clone": [("identity", {}, 1)],
    "detach": [("identity", {}, 1)],
    "pad": [("pad", {"pad": [1, 2, 0, 1], "value": 0.0}, 1)],
    "pad_value_crop": [("pad", {"pad": [2, -1], "value": 0.5}, 1)],
    "zero_pad2d": [("pad", {"pad": [1, 0, 2, 1], "value": 0.0}, 1)],
    "pad_conv": [("pad", {"pad": [0, 1, 1, 0], "value": 0.0}, 1), ("conv2d", {"stride": [2, 2], "padding": [0, 0], "dilation": [1, 1], "groups": 1}, 3)],
    "pad_avg_pool2d": [("pad", {"pad": [0, 1, 0, 1], "value": 0.0}, 1), ("avg_pool2d", {"kernel": [2, 2], "stride": [2, 2], "padding": [0, 0], "ceil_mode": 0, "count_include_pad": 1}, 1)],
    "avg_pool2d_include_pad": [("avg_pool2d", {"kernel": [3, 3], "stride": [2, 2], "padding": [1, 1], "ceil_mode": 0, "count_include_pad": 1}, 1)],
    "conv2d_same_even": [("conv2d", {"stride": [1, 1], "padding": [1, 0], "dilation": [1, 1], "groups": 1, "padding_end": [2, 1]}, 3)],
    "sigmoid": [("sigmoid", {}, 1)],
    "tanh": [("tanh", {}, 1)],
    "hardswish": [("hardswish", {}, 1)],
    "hardsigmoid": [("hardsigmoid", {}, 1)],
    "silu": [("silu", {}, 1)],
    "gelu": [("gelu", {"approximate": 0}, 1)],
    "gelu_tanh": [("gelu", {"approximate": 1}, 1)],
    "elu": [("elu", {"alpha": 0.7}, 1)],
    "leaky_relu": [("leaky_relu", {"negative_slope": 0.2}, 1)],
    "neg": [("neg", {}, 1)],
    "abs": [("abs", {}, 1)],
    "sub": [("sub", {}, 2)],
    "rsub": [("neg", {}, 1), ("add", {}, 2)],
    "minimum": [("minimum", {}, 2)],
    "maximum": [("maximum", {}, 2)],
    "sum": [("sum", {"dims": [1, 3], "keepdim": 0}, 1)],
    "sum_keepdim": [("sum", {"dims": [2], "keepdim": 1}, 1)],
    "mean_channels": [("mean", {"dims": [1], "keepdim": 0}, 1)],
    "amax": [("amax", {"dims": [2], "keepdim": 0}, 1)],
    "max_dim": [("amax", {"dims": [1], "keepdim": 0}, 1)],
    "argmax": [("argmax", {"dim": 1, "keepdim": 0}, 1)],
    "slice": [("slice", {"dim": 1, "start": 1, "end": 3, "step": 1}, 1), ("slice", {"dim": 2, "start": 0, "end": 5, "step": 2}, 1)],
    "select": [("slice", {"dim": 1, "start": 1, "end": 2, "step": 1}, 1), ("reshape", {"shape": [1, 4]}, 1)],
    "split": [("slice", {"dim": 1, "start": 0, "end": 1, "step": 1}, 1), ("slice", {"dim": 1, "start": 1, "end": 3, "step": 1}, 1)],
    "chunk": [("slice", {"dim": 2, "start": 0, "end": 3, "step": 1}, 1), ("slice", {"dim": 2, "start": 3, "end": 6, "step": 1}, 1)],
    "expand": [("expand", {"shape": [1, 3, 4]}, 1)],
    "conv_transpose2d": [("conv_transpose2d", {"stride": [2, 2], "padding": [1, 1], "output_padding": [1, 1], "dilation": [1, 1], "groups": 1}, 3)],
    "matmul": [("matmul", {}, 2)],
    "bmm": [("matmul", {}, 2)],
    "linear_3d": [("linear", {}, 3)],
    "upsample_nearest2d": [("upsample_nearest2d", {"scale": [2, 2]}, 1)],
    "layer_norm": [("layer_norm", {"eps": 1e-05}, 3)],
    "group_norm": [("group_norm", {"groups": 3, "eps": 1e-05}, 3)],
    "softmax_dim1": [("softmax", {"dim": 1}, 1)],
    "conv1d": [("reshape", {"shape": [1, 3, 1, 10]}, 1),
               ("conv2d", {"stride": [1, 1], "padding": [0, 1], "dilation": [1, 1], "groups": 1}, 3),
               ("reshape", {"shape": [1, 4, 10]}, 1)],
    "prelu": [("prelu", {}, 2)],
    "mish": [("mish", {}, 1)],
    "log": [("abs", {}, 1), ("add", {}, 2), ("log", {}, 1)],
    "upsample_bilinear2d": [("upsample_bilinear2d", {"size": [8, 6], "align_corners": 0, "scale_h": 2.0,
                                                     "scale_w": 2.0}, 1)],
    "where": [("gt", {}, 2), ("where", {}, 3)],
    "masked_fill": [("lt", {}, 2), ("where", {}, 3)],
    "eq_ne": [("eq", {}, 2), ("where", {}, 3), ("ne", {}, 2), ("where", {}, 3), ("mul", {}, 2)],
    "le_ge": [("le", {}, 2), ("where", {}, 3), ("ge", {}, 2), ("where", {}, 3), ("sub", {}, 2)],
    "embedding": [("embedding", {}, 2)],
}

# Core ATen decomposes these into comparisons, where and exp/log1p; the front end matches the
# decomposed graph back into the one op.
DECOMPOSED_AND_MATCHED = {"prelu", "mish"}


def test_every_case_has_expectations():
    assert set(EXPECTED) == set(models.SINGLE_OP_CASES)
    assert {k for case in EXPECTED.values() for k, _, _ in case} == set(SUPPORTED_KINDS)


@pytest.mark.parametrize("case", list(models.SINGLE_OP_CASES))
def test_single_op(case):
    model = models.make_model(case)
    ex = model.example_input()
    b, desc = record(export(model, ex))
    got = [(op["kind"], op["attrs"], len(op["inputs"])) for op in b.ops]
    assert got == EXPECTED[case]
    assert [n for n, _, _ in b.inputs] == ["x", "y"][: len(ex)]
    assert desc.input_ids == [i for _, _, i in b.inputs] and b.outputs == [b.ops[-1]["id"]]
    line = case_line(case)
    for op in b.ops:
        assert src_ref(op["source"]) == (MODELS_FILE, line), op["source"]
    torch.testing.assert_close(interpret(b, ex)[0], model(*ex), rtol=1e-5, atol=1e-5)
    # and the same after core-ATen decomposition
    b2, _ = record(export(model, ex).run_decompositions())
    if case in DECOMPOSED_AND_MATCHED:
        assert [op["kind"] for op in b2.ops] == [op["kind"] for op in b.ops]
    assert all(src_ref(op["source"]) == (MODELS_FILE, line) for op in b2.ops)
    torch.testing.assert_close(interpret(b2, ex)[0], model(*ex), rtol=1e-5, atol=1e-5)


def test_scalar_operands_become_one_element_constants():
    b, _ = record(export(models.make_model("add_scalar")))
    (name, arr), = b.constants.values()
    assert arr.shape == (1,) and arr.dtype == np.float32 and arr[0] == 0.5
    b, _ = record(export(models.make_model("batch_norm_noaffine")))
    assert sorted(b.constant_names()) == ["bn.bias", "bn.running_mean", "bn.running_var", "bn.weight"]
    np.testing.assert_array_equal(b.constant("bn.weight"), np.ones(4, np.float32))


class _Extras(nn.Module):
    """Things that are not contract ops but lower onto them, and constant sub-graphs."""

    def __init__(self):
        super().__init__()
        with models.seeded(1):
            self.w = nn.Parameter(torch.randn(3, 8))
            self.register_buffer("mean", torch.rand(1, 2, 1, 1))
            self.register_buffer("std", torch.rand(1, 2, 1, 1) + 0.5)
            self.register_buffer("scratch", torch.zeros(4, dtype=torch.int64), persistent=False)

    def forward(self, x):
        x = (x - self.mean) / self.std
        x = x - 0.25
        x = x / 4.0
        x = torch.zeros(1, 2, 2, 2) + x
        x = nn.functional.relu(x, inplace=True)
        y = x.flatten(1) @ self.w.t()
        y = F.linear(y, torch.ones(2, 3) * 0.5)
        return y.transpose(0, 1).contiguous().t()


def test_lowering_of_sub_div_matmul_and_constant_folding():
    model = _Extras().eval()
    ex = (torch.randn(1, 2, 2, 2),)
    for ep in (export(model, ex), export(model, ex).run_decompositions()):
        b, _ = record(ep)
        assert b.kinds == ["add", "mul", "add", "mul", "add", "relu", "reshape", "linear", "linear", "permute", "permute"]
        assert "w" in b.constant_names()  # x @ w.t() is linear(x, w) on the original parameter
        np.testing.assert_array_equal(b.constant("w"), model.w.detach().numpy())
        assert "scratch" not in b.constant_names()
        torch.testing.assert_close(interpret(b, ex)[0], model(*ex), rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------------
# errors


SUPPORTED_TAIL = " — supported: " + ", ".join(SUPPORTED_KINDS)


@pytest.mark.parametrize("case,aten", [("sin", "aten.sin.default"), ("topk", "aten.topk.default")])
def test_unsupported_ops_name_op_and_model_line(case, aten):
    model = models.make_model(case)
    ep = export(model)
    with pytest.raises(UnsupportedModelError) as ei:
        describe(ep, RecordingBuilder())
    msg = str(ei.value)
    assert_one_line(msg)
    line = marker_line(f"# unsupported: {case}")
    m = re.match(r"^unsupported op (\S+) at (.+?):(\d+): (.*) — supported: (.*)$", msg)
    assert m, msg
    assert m.group(1) == aten
    assert os.path.abspath(m.group(2)) == MODELS_FILE and os.path.basename(m.group(2)) == "models.py"
    assert int(m.group(3)) == line
    assert msg.endswith(SUPPORTED_TAIL)


def test_dynamic_shapes_rejected():
    model = models.make_model("small_cnn")
    ep = export(model, model.example_input(batch=2), dynamic_shapes=({0: Dim("batch")},))
    with pytest.raises(UnsupportedModelError) as ei:
        describe(ep, RecordingBuilder())
    msg = str(ei.value)
    assert_one_line(msg)
    line = line_containing(models.SmallCNN.forward, "self.bn1(self.conv1(x))")
    assert msg.startswith(f"dynamic shape at {os.path.relpath(MODELS_FILE)}:{line}:") or \
        msg.startswith(f"dynamic shape at {MODELS_FILE}:{line}:")
    assert "mcuflow needs static shapes; export without dynamic_shapes" in msg


def test_float64_model_rejected():
    model = models.make_model("small_cnn").double()
    ep = export(model, tuple(x.double() for x in model.example_input()))
    with pytest.raises(UnsupportedModelError) as ei:
        describe(ep, RecordingBuilder())
    msg = str(ei.value)
    assert_one_line(msg)
    line = line_containing(models.SmallCNN.forward, "self.bn1(self.conv1(x))")
    assert msg.startswith("unsupported dtype torch.float64 for input x at ")
    assert src_ref(msg.split(" at ", 1)[1]) == (MODELS_FILE, line)


class _Float64Buffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("gain", torch.ones(4, dtype=torch.float64))

    def forward(self, x):
        return x * self.gain  # float64 buffer here


def test_float64_parameter_rejected():
    ep = export(_Float64Buffer(), (torch.randn(1, 4),))
    with pytest.raises(UnsupportedModelError) as ei:
        describe(ep, RecordingBuilder())
    msg = str(ei.value)
    assert_one_line(msg)
    assert msg.startswith("unsupported dtype torch.float64 for gain at ")
    assert src_ref(msg.split(" at ", 1)[1]) == (THIS_FILE, marker_line("# float64 buffer here", THIS_FILE))


def test_training_mode_rejected():
    model = models.make_model("ds_cnn").train()
    ep = export(model, model.example_input(batch=2))
    with pytest.raises(UnsupportedModelError) as ei:
        describe(ep, RecordingBuilder())
    msg = str(ei.value)
    assert_one_line(msg)
    line = line_containing(models.DSCNN.forward, "self.bn1(self.conv1(x))")
    assert msg.startswith("batch_norm in training mode at ") and "call model.eval()" in msg
    assert src_ref(msg.split(" at ", 1)[1]) == (MODELS_FILE, line)


class _Mutates(nn.Module):
    def forward(self, x):
        return torch.relu_(x)  # mutates its input


class _Matmul(nn.Module):
    def forward(self, x):
        return x @ x[0]  # two activations of different ranks


class _ConvT(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose1d(2, 2, 2, stride=2)

    def forward(self, x):
        return self.up(x)  # transposed conv


def test_input_mutation_rejected():
    with pytest.raises(UnsupportedModelError) as ei:
        describe(export(_Mutates(), (torch.randn(1, 4),)), RecordingBuilder())
    msg = str(ei.value)
    assert_one_line(msg)
    assert msg.startswith("model modifies its input x in place at ")
    assert src_ref(msg.split(" at ", 1)[1]) == (THIS_FILE, marker_line("# mutates its input", THIS_FILE))


def test_unsupported_arguments_name_op_and_line():
    with pytest.raises(UnsupportedModelError) as ei:
        describe(export(_Matmul(), (torch.randn(2, 4),)), RecordingBuilder())
    msg = str(ei.value)
    assert_one_line(msg)
    assert msg.startswith("unsupported arguments for aten.matmul.default at ")
    assert src_ref(msg.split(" at ", 1)[1]) == (THIS_FILE, marker_line("# two activations of different ranks", THIS_FILE))

    ep = export(_ConvT().eval(), (torch.randn(1, 2, 3),))
    with pytest.raises(UnsupportedModelError) as ei:  # default graph: aten.conv_transpose1d.default
        describe(ep, RecordingBuilder())
    assert str(ei.value).startswith("unsupported op aten.conv_transpose1d.default at ")
    with pytest.raises(UnsupportedModelError) as ei:  # core ATen: convolution(transposed=True)
        describe(ep.run_decompositions(), RecordingBuilder())
    msg = str(ei.value)
    assert msg.startswith("unsupported arguments for aten.convolution.default at ") and "transposed" in msg
    assert src_ref(msg.split(" at ", 1)[1]) == (THIS_FILE, marker_line("# transposed conv", THIS_FILE))


def test_compiler_value_error_becomes_unsupported_model_error():
    class Rejecting(RecordingBuilder):
        def add_op(self, kind, inputs, attrs, source, output_shapes):
            if kind == "add" and "alpha" in attrs:
                raise ValueError(f"add at {source}: alpha must be 1")
            return super().add_op(kind, inputs, attrs, source, output_shapes)

    model = models.make_model("add_alpha")
    with pytest.raises(UnsupportedModelError) as ei:
        describe(export(model), Rejecting())
    msg = str(ei.value)
    assert_one_line(msg)
    line = case_line("add_alpha")
    assert msg.startswith("add at ") and msg.endswith("alpha must be 1")
    assert src_ref(msg[len("add at "):]) == (MODELS_FILE, line)


def test_describe_needs_an_exported_program():
    with pytest.raises(TypeError):
        describe(models.make_model("relu"), RecordingBuilder())


def test_node_source_picks_the_innermost_user_frame():
    torch_file = os.path.join(os.path.dirname(torch.__file__), "nn", "modules", "conv.py")
    lib_file = "/usr/lib/python3/dist-packages/somelib/layers.py"
    trace = (f'File "/home/u/proj/model.py", line 40, in forward\n    x = self.block(x)\n'
             f'  File "/home/u/proj/blocks.py", line 12, in forward\n    return self.conv(x)\n'
             f'  File "{lib_file}", line 7, in forward\n    return self.inner(x)\n'
             f'  File "{torch_file}", line 548, in forward\n    return self._conv_forward(input, self.weight, self.bias)\n')

    class FakeNode:
        name = "conv2d_3"
        meta = {"stack_trace": trace}

    src = frontend.node_source(FakeNode())
    assert src.endswith("blocks.py:12: return self.conv(x)")
    FakeNode.meta = {}
    assert frontend.node_source(FakeNode()) == "conv2d_3"
    FakeNode.meta = {"stack_trace": f'File "{lib_file}", line 7, in forward\n    return self.inner(x)\n'
                                    f'  File "{torch_file}", line 548, in forward\n    return f(x)\n'}
    assert frontend.node_source(FakeNode()) == f"{lib_file}:7: return self.inner(x)"


def test_zoo_model_ops_name_the_zoo_line_not_torch():
    """The zoo's models are model code: an nn.GroupNorm's op names the zoo's line that calls it."""
    from mcuflow import zoo
    b = RecordingBuilder()
    describe(zoo.get("group_norm_cnn").export(), b)
    norms = [op for op in b.ops if op["kind"] == "group_norm"]
    assert norms and all(os.path.basename(src_ref(op["source"])[0]) == "families.py" for op in norms), norms[0]["source"]


def test_user_inputs():
    model = models.make_model("add")
    assert frontend.user_inputs(export(model)) == [("x", (1, 4, 4, 4)), ("y", (1, 4, 4, 4))]


# --------------------------------------------------------------------------------------------
# calibration


SIG = [("x", (1, 1, 8, 8))]
SIG2 = [("x", (1, 3)), ("y", (1, 2, 2))]


def _rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _check_samples(samples, sig, n):
    assert isinstance(samples, list) and len(samples) == n
    for s in samples:
        assert isinstance(s, tuple) and len(s) == len(sig)
        for arr, (_, shape) in zip(s, sig):
            assert isinstance(arr, np.ndarray) and arr.dtype == np.float32
            assert arr.shape == shape and arr.flags.c_contiguous


def test_calibration_iterable_of_tuples_and_tensors():
    data = [(torch.randn(1, 1, 8, 8),) for _ in range(3)]
    out = normalize_calibration(data, SIG)
    _check_samples(out, SIG, 3)
    np.testing.assert_array_equal(out[1][0], data[1][0].numpy())
    # bare tensors / arrays for a single-input model; float64 and float16 are converted
    _check_samples(normalize_calibration([torch.randn(1, 1, 8, 8, dtype=torch.float64)] * 2, SIG), SIG, 2)
    _check_samples(normalize_calibration((_rand(1, 1, 8, 8, dtype=np.float16) for _ in range(4)), SIG), SIG, 4)
    # a sample without its batch dimension of 1
    _check_samples(normalize_calibration([_rand(1, 8, 8)], SIG), SIG, 1)
    # DataLoader-style batches are split into samples of the exported batch size
    out = normalize_calibration([(torch.randn(4, 1, 8, 8),), (torch.randn(2, 1, 8, 8),)], SIG)
    _check_samples(out, SIG, 6)
    # two inputs
    data2 = [(torch.randn(1, 3), _rand(1, 2, 2, seed=i)) for i in range(5)]
    _check_samples(normalize_calibration(data2, SIG2), SIG2, 5)


def test_calibration_dict_npz_and_single_array(tmp_path):
    x = _rand(10, 1, 8, 8)
    out = normalize_calibration({"x": x}, SIG)
    _check_samples(out, SIG, 10)
    np.testing.assert_array_equal(out[7][0], x[7:8])
    _check_samples(normalize_calibration(x, SIG), SIG, 10)
    _check_samples(normalize_calibration(torch.from_numpy(x), SIG), SIG, 10)
    _check_samples(normalize_calibration(_rand(10, 1, 1, 8, 8), SIG), SIG, 10)  # [N, *exported shape]
    # by name when the keys are the input names (order does not matter) ...
    xs, ys = _rand(6, 3, seed=1), _rand(6, 2, 2, seed=2)
    out = normalize_calibration({"y": ys, "x": xs}, SIG2)
    _check_samples(out, SIG2, 6)
    np.testing.assert_array_equal(out[2][1], ys[2:3])
    # ... in input order only when the arrays carry no names (np.savez(path, x, y))
    out = normalize_calibration({"arr_0": xs, "arr_1": ys}, SIG2)
    np.testing.assert_array_equal(out[2][0], xs[2:3])
    msg = _calib_error({"a": xs, "b": ys}, SIG2)
    assert msg.endswith("no array named x, y; a, b name no input"), msg
    # npz, as a path and as a loaded file
    path = tmp_path / "calib.npz"
    np.savez(path, x=xs, y=ys)
    _check_samples(normalize_calibration(str(path), SIG2), SIG2, 6)
    with np.load(path) as npz:
        _check_samples(normalize_calibration(npz, SIG2), SIG2, 6)
    # exported batch size 2: split into pairs
    sig_b2 = [("x", (2, 3))]
    out = normalize_calibration({"x": _rand(8, 3)}, sig_b2)
    _check_samples(out, sig_b2, 4)


def test_calibration_accepts_exported_program():
    model = models.make_model("small_cnn")
    ep = export(model)
    samples = normalize_calibration([model.example_input(seed=i) for i in range(3)], ep)
    _check_samples(samples, SIG, 3)


def _calib_error(data, sig=SIG) -> str:
    with pytest.raises(CalibrationError) as ei:
        normalize_calibration(data, sig)
    msg = str(ei.value)
    assert_one_line(msg)
    return msg


def test_calibration_errors():
    assert "empty" in _calib_error([])
    assert "empty" in _calib_error(iter(()))
    assert "empty" in _calib_error({"x": np.zeros((0, 1, 8, 8), np.float32)})
    assert "missing" in _calib_error(None)
    # wrong number of inputs
    msg = _calib_error([(torch.randn(1, 1, 8, 8), torch.tensor([3]))])
    assert msg == "calibration sample 0 has 2 inputs, the model takes 1 (x)"
    msg = _calib_error([(torch.randn(1, 3),)], SIG2)
    assert msg == "calibration sample 0 has 1 input, the model takes 2 (x, y)"
    msg = _calib_error({"x": _rand(4, 1, 8, 8), "labels": np.zeros(4, np.float32)})
    assert msg.startswith("calibration data has 2 arrays (x, labels), the model takes 1 input (x)")
    assert "2 inputs" in _calib_error(_rand(4, 3), SIG2)
    # wrong shape: expected vs got
    good = [torch.randn(1, 1, 8, 8)] * 3
    msg = _calib_error(good + [torch.randn(1, 1, 8, 9)])
    assert msg.startswith("calibration input x (sample 3): expected shape [1, 1, 8, 8]") and msg.endswith("got [1, 1, 8, 9]")
    msg = _calib_error({"x": _rand(5, 3)}, [("x", (2, 3))])
    assert "input x" in msg and "expected shape [2, 3]" in msg and "got [5, 3]" in msg
    msg = _calib_error({"x": _rand(6, 3), "y": _rand(5, 2, 2)}, SIG2)
    assert "different numbers of samples" in msg and "x has 6" in msg and "y has 5" in msg
    # non-float dtype
    msg = _calib_error(good[:1] + [torch.ones(1, 1, 8, 8, dtype=torch.int64)])
    assert msg.startswith("calibration input x (sample 1): non-float dtype int64")
    assert "non-float dtype uint8" in _calib_error({"x": np.zeros((3, 1, 8, 8), np.uint8)})
    assert "non-float dtype bool" in _calib_error([np.zeros((1, 1, 8, 8), bool)])
    # NaN / Inf: which input and which sample
    bad = [_rand(1, 1, 8, 8, seed=i) for i in range(4)]
    bad[2][0, 0, 3, 3] = np.nan
    assert _calib_error(bad) == "calibration input x (sample 2) contains NaN"
    arr = _rand(5, 2, 2)
    arr[4, 1, 1] = np.inf
    assert _calib_error({"x": _rand(5, 3), "y": arr}, SIG2) == "calibration input y (sample 4) contains Inf"
    big = np.full((1, 1, 8, 8), 1e300)  # float64 beyond float32's range
    assert _calib_error([big]) == "calibration input x (sample 0) contains Inf"
    # not data at all
    assert "not supported" in _calib_error(12345)
    assert "expected a tensor" in _calib_error([object()])
