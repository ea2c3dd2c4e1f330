"""Per-layer precision (precision / weights "mixed") on the host.

* The compiler's per-layer list (``_core.compile(layers=...)``): the named layer runs on an int16
  kernel (or int4-weight one) and the others stay int8, with requantizations where widths meet;
  each layer's ops carry their note; a layer that is no op's, or a width its op has no kernel for,
  is one CompileError line.
* The sensitivity pass (``mcuflow.compile(precision="mixed", ...)``): the chosen program meets
  the accuracy budget, measured here against the float program on the calibration data; an arena
  budget is met by promoting int4 layers whose unpacking scratch sets the peak; a budget no
  choice meets is one BudgetError line naming the layers and the shortfall, and a one-line CLI
  error with a non-zero exit.
* ``mcuflow inspect`` shows each layer's choice and why; bad budget options are one line.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

import mcuflow
from mcuflow import _core, cli
from mcuflow.errors import BudgetError, InputError
from mcuflow.mixed import accuracy

TARGET = "cortex-m55"


class Net(nn.Module):
    """Three weighted layers of different sensitivity: a wide-range first conv, a second conv, a linear."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)
        with torch.no_grad():
            self.conv1.weight[0] *= 20  # one channel dominates the range its output's int8 spec covers

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(x.mean(dim=(2, 3)))


@pytest.fixture(scope="module")
def model():
    net = Net().eval()
    x = np.random.default_rng(0).standard_normal((32, 1, 8, 8)).astype(np.float32)
    return torch.export.export(net, (torch.from_numpy(x[:1]),)), x


def snr_on(program, reference, x) -> float:
    return accuracy(program.run(x), reference.run(x)).snr_db


def test_layers_are_the_weighted_ops(model):
    ep, _ = model
    from mcuflow.frontend import describe
    builder = _core.GraphBuilder()
    describe(ep, builder)
    layers = _core.precision_layers(builder)
    assert [l["kind"] for l in layers] == ["conv2d", "conv2d", "linear"]
    assert all(l["int16"] and l["int4"] for l in layers)


def compile_layers(ep, x, layers, weights="int8"):
    from mcuflow.frontend import describe
    builder = _core.GraphBuilder()
    describe(ep, builder)
    names = [l["layer"] for l in _core.precision_layers(builder)]
    chosen = [(names[i], a, w, f"note {i}") for i, a, w in layers]
    return names, mcuflow.Program(_core.compile(builder, TARGET, [[s[None]] for s in x], "int8", "float32", observer="minmax",
                                                weights=weights, layers=chosen))


def test_one_layer_int16_the_others_int8(model):
    ep, x = model
    names, program = compile_layers(ep, x, [(1, 16, 8)])
    assert program.precision == "mixed"
    kernels = program.kernels
    assert sum("s16" in k and "requantize" not in k for k in kernels) == 1, kernels
    assert any(k.startswith("requantize_s8_s16") for k in kernels) and any(k.startswith("requantize_s16_s8") for k in kernels)
    notes = [(op["kind"], op.get("precision")) for op in program.metadata["ops"] if op.get("precision")]
    assert notes == [("conv2d", "A16W8: note 1")]
    # The int16 layer's error is smaller than in the all-int8 program: the choice took effect.
    _, int8 = compile_layers(ep, x, [])
    ref = mcuflow.compile(ep, TARGET, precision="fp32")
    assert snr_on(program, ref, x) != snr_on(int8, ref, x)


def test_one_layer_int4(model):
    ep, x = model
    _, program = compile_layers(ep, x, [(2, 8, 4)])
    assert [k for k in program.kernels if "w4" in k] == ["fc_s8_w4_mve"]
    weights = [op.get("weights") for op in program.metadata["ops"] if op.get("weights")]
    assert weights == ["int8: chosen for this layer", "int8: chosen for this layer", "int4"]


@pytest.mark.parametrize("layers, message", [
    ([("nonesuch", 8, 8, "")], "layer 'nonesuch' is no op whose precision can be chosen (the layers: "),
    ([(0, 16, 4, "")], "int16 activations take int8 weights"),
    ([(0, 12, 8, "")], "activations are int8 or int16 and weights int8 or int4"),
    ([(0, 16, 8, ""), (0, 8, 8, "")], "is chosen twice"),
])
def test_bad_layer_choices_are_one_line(model, layers, message):
    ep, x = model
    from mcuflow.frontend import describe
    builder = _core.GraphBuilder()
    describe(ep, builder)
    names = [l["layer"] for l in _core.precision_layers(builder)]
    chosen = [(names[n] if isinstance(n, int) else n, a, w, why) for n, a, w, why in layers]
    with pytest.raises(_core.CompileError) as e:
        _core.compile(builder, TARGET, [[s[None]] for s in x], "int8", "float32", observer="minmax", layers=chosen)
    assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_mixed_meets_the_snr_budget_between_int8_and_int16(model):
    ep, x = model
    ref = mcuflow.compile(ep, TARGET, precision="fp32")
    int8 = mcuflow.compile(ep, TARGET, x, observer="minmax")
    int16 = mcuflow.compile(ep, TARGET, x, precision="int16")
    low, high = snr_on(int8, ref, x), snr_on(int16, ref, x)
    assert high > low + 1
    budget = (low + high) / 2
    program = mcuflow.compile(ep, TARGET, x, precision="mixed", min_snr_db=budget)
    assert snr_on(program, ref, x) >= budget
    choices = [op["precision"].split(":")[0] for op in program.metadata["ops"] if op.get("precision")]
    assert len(choices) == 3 and "A16W8" in choices, choices
    assert program.arena_bytes <= int16.arena_bytes


def test_mixed_weights_meet_the_arena_budget(model):
    ep, x = model
    int8 = mcuflow.compile(ep, TARGET, x)
    int4 = mcuflow.compile(ep, TARGET, x, weights="int4")
    assert int4.arena_bytes > 1.25 * int8.arena_bytes  # the int4 kernels' unpacking scratch
    budget = int(1.25 * int8.arena_bytes)
    program = mcuflow.compile(ep, TARGET, x, weights="mixed", min_agreement=0.0, max_arena_bytes=budget)
    assert program.arena_bytes <= budget
    weights = [op.get("weights") for op in program.metadata["ops"] if op.get("weights")]
    assert "int4" in weights and any(w.startswith("int8") for w in weights), weights
    assert len(program.device_image) < len(int8.device_image)


def test_a_budget_no_choice_meets_is_one_line(model):
    ep, x = model
    with pytest.raises(BudgetError) as e:
        mcuflow.compile(ep, TARGET, x, precision="mixed", min_snr_db=200)
    message = str(e.value)
    assert "\n" not in message and "dB below the budget of 200 dB" in message, message
    assert "every layer is at its most precise choice" in message and "A16W8" in message, message
    with pytest.raises(BudgetError, match="exceeds the arena budget by"):
        mcuflow.compile(ep, TARGET, x, weights="mixed", min_agreement=0.0, max_arena_bytes=16)


@pytest.mark.parametrize("options, message", [
    (dict(precision="mixed"), "give min_snr_db or min_agreement"),
    (dict(min_snr_db=30), "min_snr_db is a budget of the per-layer choice: it needs precision or weights 'mixed'"),
    (dict(precision="mixed", weights="int4", min_snr_db=30), "precision 'mixed' takes weights 'int8' or 'mixed'"),
    (dict(precision="mixed", min_agreement=1.5), "min_agreement must be a number from 0 to 1, got 1.5"),
    (dict(weights="mixed", min_snr_db=3, max_arena_bytes=-1), "max_arena_bytes must be a whole number of at least 0"),
])
def test_bad_budget_options_are_one_line(options, message):
    with pytest.raises(InputError) as e:
        mcuflow.options.CompileOptions(**options)
    assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_cli_mixed_and_inspect(model, tmp_path, capsys):
    ep, x = model
    path = tmp_path / "m.pt2"
    torch.export.save(ep, str(path))
    np.savez(tmp_path / "c.npz", x)
    out = tmp_path / "m.mfp"
    assert cli.main(["compile", str(path), "--calibration", str(tmp_path / "c.npz"), "--precision", "mixed",
                     "--min-snr-db", "200", "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("mcuflow: error: no precision meets the accuracy budget"), err
    assert not out.exists()
    assert cli.main(["compile", str(path), "--calibration", str(tmp_path / "c.npz"), "--weights", "mixed",
                     "--min-agreement", "0", "--max-arena-bytes", "1_000_000", "-o", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["inspect", str(out)]) == 0
    text = capsys.readouterr().out
    assert "layer precisions (chosen program: SNR" in text
    assert text.count("      precision: A8W4: ") == 3, text  # no accuracy asked for: every layer at its cheapest
    assert "A8W8 not needed (" in text

