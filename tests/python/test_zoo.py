"""mcuflow.zoo: reference counts, export + compile of every model, determinism, checkpoints, CLI."""

import functools

import numpy as np
import pytest
import torch

import mcuflow
from mcuflow import cli, zoo
from mcuflow.errors import InputError

MLPERF_TINY = {  # published by MLPerf Tiny: (parameters after BN folding, MACs)
    "ds_cnn": (22_604, 2_656_768),
    "mobilenet_v1_025": (210_850, 7_489_664),
    "resnet8": (77_706, 12_501_632),
    "fc_autoencoder": (265_864, 264_192),
}
MODELS = ["ds_cnn", "mobilenet_v1_025", "resnet8", "fc_autoencoder", "mobilenet_v2_035"]
FLOAT_SAMPLES, CALIBRATION_SAMPLES, HELD_OUT_SAMPLES = 16, 64, 64


@functools.lru_cache(maxsize=None)
def seed0(name):
    return zoo.get(name)


@pytest.fixture(scope="module", params=MODELS)
def exported(request):
    model = seed0(request.param)
    return model, model.export()


def eager(model, x):
    with torch.no_grad():
        return model.module(torch.from_numpy(x)).numpy()


def test_registry_lists_the_zoo_and_rejects_unknown_names():
    assert set(MODELS) <= set(zoo.names())
    with pytest.raises(InputError, match="unknown zoo model 'resnet9'; known: .*resnet8"):
        zoo.get("resnet9")


@pytest.mark.parametrize("name", MODELS)
def test_counts_match_the_reference(name):
    model = seed0(name)
    if name in MLPERF_TINY:
        assert (model.reference_parameters, model.reference_macs) == MLPERF_TINY[name]
    assert model.counts() == (model.reference_parameters, model.reference_macs)


def test_counting_folds_batch_norm_and_skips_pooling():
    # conv without bias + BN: 2·3·3·3 weights + 2 folded biases; a BN after a pool stays 2·C.
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3, bias=False), torch.nn.BatchNorm2d(2), torch.nn.AvgPool2d(2),
                              torch.nn.BatchNorm2d(2), torch.nn.Flatten(), torch.nn.Linear(8, 5)).eval()
    params, macs = zoo.count_parameters_and_macs(net, (torch.zeros(1, 3, 6, 6),))
    assert params == 54 + 2 + 4 + 8 * 5 + 5
    assert macs == 2 * 4 * 4 * 27 + 8 * 5


def test_float_program_matches_eager_and_int8_agrees(exported):
    model, ep = exported
    x = model.evaluation(FLOAT_SAMPLES)
    reference = eager(model, x)
    program = mcuflow.compile(ep, target="cortex-m55", precision="fp32")
    error = np.abs(program.run(x)[0] - reference).max()
    # Reconstructions are log-mel dB values up to ~130: float32 rounding alone is ~1e-5 of that
    # (eager itself is 7e-4 from a float64 run), so that bound is relative to the output's size.
    bound = 1e-4 * (np.abs(reference).max() if model.spec.output == "reconstruction" else 1.0)
    assert error <= bound, f"{model.name}: eager vs float program max abs error {error:.3g} > {bound:.3g}"

    program = mcuflow.compile(ep, target="cortex-m55", calibration=model.calibration(CALIBRATION_SAMPLES))
    x = model.evaluation(HELD_OUT_SAMPLES)
    reference, out = eager(model, x), program.run(x)[0]
    if model.spec.output == "classes":
        agreement = float((out.argmax(-1) == reference.argmax(-1)).mean())
        classes_seen = len(np.unique(reference.argmax(-1)))
        print(f"{model.name}: int8 vs eager top-1 agreement {agreement:.3f} on {HELD_OUT_SAMPLES} held-out inputs "
              f"({classes_seen} classes predicted), max abs error {np.abs(out - reference).max():.4f}")
        assert classes_seen >= 2  # a model that always predicts one class would make agreement meaningless
        # Seeded random MobileNets lose ~1 dB of SNR per layer (trained ones much less), so their
        # int8 outputs sit ~5 dB from eager and 2-class agreement is ~0.8 (chance: 0.5).
        assert agreement >= 0.65
    else:
        score, score_int8 = ((reference - x) ** 2).mean(1), ((out - x) ** 2).mean(1)
        correlation = float(np.corrcoef(score, score_int8)[0, 1])
        print(f"{model.name}: int8 vs eager anomaly-score correlation {correlation:.3f} on {HELD_OUT_SAMPLES} inputs")
        assert correlation >= 0.7


def test_weights_and_data_are_deterministic_per_seed():
    a, b, c = zoo.get("resnet8", seed=3), zoo.get("resnet8", seed=3), zoo.get("resnet8", seed=4)
    for (key, va), vb, vc in zip(a.module.state_dict().items(), b.module.state_dict().values(),
                                 c.module.state_dict().values()):
        assert torch.equal(va, vb), key
    assert not torch.equal(a.module.stem[0].weight, c.module.stem[0].weight)
    assert np.array_equal(a.calibration(8), b.calibration(8))
    assert np.array_equal(a.calibration(8, seed=9), c.calibration(8, seed=9))  # data seed independent of weights
    assert not np.array_equal(a.calibration(8), c.calibration(8))
    assert not np.array_equal(a.calibration(8), a.evaluation(8))  # calibration and evaluation never share inputs
    assert a.calibration(4).shape == (4, 3, 32, 32) and a.calibration(4).dtype == np.float32


def test_batch_norm_statistics_are_realistic():
    model = seed0("ds_cnn")
    activations = []
    hooks = [m.register_forward_hook(lambda m, i, o: activations.append(o))
             for m in model.module.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    eager(model, model.evaluation(32))
    for h in hooks:
        h.remove()
    for y in activations:  # about unit variance per channel on unseen data, not PyTorch's defaults
        std = y.transpose(0, 1).flatten(1).std(1)
        assert 0.3 < float(std.median()) < 3.0


def test_checkpoint_loads_trained_weights(tmp_path):
    trained = zoo.get("ds_cnn", seed=5)
    path = tmp_path / "ds_cnn.pt"
    torch.save(trained.module.state_dict(), path)
    loaded = zoo.get("ds_cnn", checkpoint=path)
    x = loaded.evaluation(4)
    assert np.array_equal(eager(loaded, x), eager(trained, x))

    torch.save(seed0("resnet8").module.state_dict(), path)
    with pytest.raises(InputError, match=r"does not fit zoo model ds_cnn: missing: .*unexpected: "):
        zoo.get("ds_cnn", checkpoint=path)
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(InputError, match="cannot read checkpoint"):
        zoo.get("ds_cnn", checkpoint=path)


def test_cli_export_writes_a_compilable_model(tmp_path, capsys):
    pt2, calibration = tmp_path / "kws.pt2", tmp_path / "kws_calibration.npz"
    assert cli.main(["zoo", "export", "ds_cnn", "-o", str(pt2), "--samples", "8"]) == 0
    with np.load(calibration) as z:
        assert [z[k].shape for k in z.files] == [(8, 1, 49, 10)]
    mfp = tmp_path / "kws.mfp"
    assert cli.main(["compile", str(pt2), "--calibration", str(calibration), "--target", "cortex-m4",
                     "-o", str(mfp)]) == 0
    program = mcuflow.Program.load(mfp)
    model = seed0("ds_cnn")
    x = model.evaluation(2)
    assert np.abs(program.run(x)[0] - eager(model, x)).max() < 0.5  # int8 of the same weights
    capsys.readouterr()


@pytest.mark.parametrize("args, message", [
    (["zoo", "export", "resnet9", "-o", "{tmp}/x.pt2"], "unknown zoo model 'resnet9'"),
    (["zoo", "export", "ds_cnn", "-o", "{tmp}/x.pt2", "--checkpoint", "{tmp}/none.pt"], "does not exist"),
    (["zoo", "export", "ds_cnn", "-o", "{tmp}/missing/x.pt2"], "output directory"),
    (["zoo", "export", "ds_cnn", "-o", "{tmp}/x.pt2", "--calibration", "{tmp}/c.npy"], "must end in .npz"),
    (["zoo", "export", "ds_cnn", "-o", "{tmp}/x.pt2", "--samples", "0"], "--samples must be at least 1"),
])
def test_cli_bad_input_is_one_line_and_exit_1(tmp_path, capsys, args, message):
    assert cli.main([a.format(tmp=tmp_path) for a in args]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "x.pt2").exists()


def test_cli_list_shows_reference_counts(capsys):
    assert cli.main(["zoo", "list"]) == 0
    out = capsys.readouterr().out
    assert "ds_cnn" in out and "22,604" in out and "2,656,768" in out
