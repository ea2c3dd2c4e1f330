"""Program.run on a batch: one call into C++ that shares the samples among threads, each with
its own arena. Every sample's output must be the bytes the one-sample path computes."""

import threading

import numpy as np
import pytest
import torch

import mcuflow
from mcuflow.errors import InputError
from models import make_model

BATCH = 24


def compile_model(name, target, io="float32"):
    model = make_model(name)
    calibration = [tuple(t) for t in zip(*[x.split(1) for x in model.example_input(seed=1, batch=16)])]
    return model, mcuflow.compile(torch.export.export(model, model.example_input(seed=0)), target=target,
                                  calibration=calibration, io=io)


def batch_inputs(model, program, seed=7):
    xs = [x.numpy() for x in model.example_input(seed=seed, batch=BATCH)]
    if program.inputs[0]["dtype"] == np.int8:  # int8 I/O: any bytes are valid inputs
        rng = np.random.default_rng(seed)
        xs = [rng.integers(-128, 128, size=x.shape, dtype=np.int8) for x in xs]
    return xs


def one_by_one(program, xs):
    outputs = [program.run([x[b:b + 1] for x in xs], threads=1) for b in range(len(xs[0]))]
    return [np.concatenate(column) for column in zip(*outputs)]


# "reference" plans reference kernels in place (output over input); int8 I/O covers int8 arrays;
# "add" has two inputs.
@pytest.mark.parametrize("name, target, io", [("ds_cnn", "reference", "float32"), ("small_cnn", "cortex-m55", "int8"),
                                              ("add", "cortex-m4", "float32")])
def test_batch_equals_one_sample_at_a_time(name, target, io):
    model, program = compile_model(name, target, io)
    xs = batch_inputs(model, program)
    expected = one_by_one(program, xs)
    assert len({e.tobytes() for e in expected[0]}) > 1  # the samples differ: a mix-up would show
    for threads in (1, 2, 5, BATCH + 3):
        got = program.run(xs, threads=threads)
        assert [g.shape for g in got] == [e.shape for e in expected]
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.tobytes() == e.tobytes(), f"threads={threads}"


def test_concurrent_calls_on_one_program_do_not_share_arenas():
    model, program = compile_model("ds_cnn", "reference")
    xs = batch_inputs(model, program)
    expected = one_by_one(program, xs)[0]
    results = {}

    def run(k):
        results[k] = program.run([xs[0][::-1].copy()] if k % 2 else xs, threads=2)[0]

    workers = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for k, out in results.items():
        assert np.array_equal(out, expected[::-1] if k % 2 else expected), k


def test_bad_batches_are_input_errors():
    model, program = compile_model("small_cnn", "cortex-m4")
    x = batch_inputs(model, program)[0]
    x[13, 0, 2, 3] = np.nan
    with pytest.raises(InputError, match="an input of sample 13 contains NaN or Inf"):
        program.run([x], threads=2)
    for threads in (0, -1, 1.5, True, "2"):
        with pytest.raises(InputError, match="threads"):
            program.run([x[:1]], threads=threads)
    with pytest.raises(InputError, match="shape"):
        program.run([x[:, :, :7]])
