"""The digits demo (examples/digits) on the host runtime: training reaches its accuracy, INT8
stays within 3 points of float, and calibration uses training images only."""

import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_digits

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "digits"))

import demo  # noqa: E402
from train import accuracy, predict, train  # noqa: E402


@pytest.fixture(scope="module")
def trained():
    return train(seed=0)


def test_calibration_samples_come_from_the_training_split_only(trained):
    _, splits = trained
    positions = demo.calibration_indices(splits)
    dataset_indices = splits.train.indices[positions]
    assert len(np.unique(dataset_indices)) == demo.CALIBRATION_COUNT == 100
    assert not set(dataset_indices) & set(splits.held_out.indices)
    all_images = (load_digits().images / 16.0).astype(np.float32)
    np.testing.assert_array_equal(splits.train.images[positions, 0], all_images[dataset_indices])


def test_int8_host_accuracy_is_close_to_float(trained):
    model, splits = trained
    images, labels = splits.held_out.images, splits.held_out.labels
    float_accuracy = accuracy(predict(model, images), labels)
    program = demo.compile_program(model, splits, "int8")
    int8_accuracy = accuracy(program.run(images)[0], labels)
    assert float_accuracy >= 0.9
    assert int8_accuracy >= float_accuracy - 0.03
