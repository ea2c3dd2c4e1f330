"""examples/qat, short: PTQ and QAT through PT2E compiled with their own scales, on the host
runtime and qemu-m55 — the board bit-exact with the host for both, int8 accuracy near float."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torchao.quantization.pt2e")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "qat"))

from fwutil import requires_cross  # noqa: E402
import qat  # noqa: E402

pytestmark = requires_cross

HELD_OUT = 60
ACCURACY_LOSS_ALLOWED = 0.05  # 3 of 60 images: int8 of a trained model near its float accuracy


def test_ptq_and_qat_run_bit_exact_on_the_board_near_float_accuracy():
    results = qat.run(epochs=1, held_out_count=HELD_OUT, board="qemu-m55")
    assert len(results["labels"]) == HELD_OUT
    for name, float_accuracy in (("ptq", results["float"]), ("qat", results["float fine-tuned"])):
        r = results[name]
        assert r.mismatches == 0, f"{name}: {r.mismatches} board outputs differ from the host runtime"
        assert r.board_accuracy == r.host_accuracy
        assert r.host_accuracy >= float_accuracy - ACCURACY_LOSS_ALLOWED, (name, r, float_accuracy)


def test_the_example_exits_1_without_its_tools(monkeypatch, capsys):
    monkeypatch.setattr(qat, "qemu_available", lambda: False)
    assert qat.main(["--epochs", "1"]) == 1
    assert "qemu-system-arm not found" in capsys.readouterr().err
