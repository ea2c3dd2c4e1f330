"""Quantization-aware training into mcuflow: PyTorch's PT2E flow with mcuflow's quantizer, post-training
(prepare_pt2e -> calibrate -> convert_pt2e) against quantization-aware (prepare_qat_pt2e -> fine-tune with
fake quantization -> convert_pt2e), both compiled by mcuflow with the scales PyTorch chose and run on the
host runtime and the emulated board, over the held-out split of the 8x8 digits.

    .venv/bin/python examples/qat/qat.py [--epochs N] [--held-out N] [--board qemu-m55 | --no-board]

Prints float / PTQ / QAT held-out accuracy on host and board and the host-vs-board mismatches. Exits 1
when a board output differs from the host runtime's, or when the Arm toolchain or QEMU is missing.
"""

from __future__ import annotations

import argparse
import copy
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e

import mcuflow
from mcuflow.crossbuild import toolchain_available
from mcuflow.device import cached_build, run_elf_on_inputs
from mcuflow.qemu import qemu_available
from mcuflow.quantizer import MCUFlowQuantizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "digits"))
from train import Split, accuracy, predict, train  # noqa: E402

TARGET = "cortex-m55"
CALIBRATION_COUNT = 64
QAT_LEARNING_RATE = 1e-4
QAT_BATCH_SIZE = 32
SEED = 0


@dataclass
class Result:
    host_accuracy: float
    board_accuracy: float | None
    mismatches: int | None


def batch_one(images: np.ndarray) -> tuple[torch.Tensor]:
    return (torch.from_numpy(images[:1]),)


def post_training(model: nn.Module, train_split: Split) -> torch.fx.GraphModule:
    """PTQ: observers calibrated on training images, then converted."""
    prepared = prepare_pt2e(torch.export.export(model.eval(), batch_one(train_split.images)).module(),
                            MCUFlowQuantizer())
    calibration = np.random.default_rng(SEED).choice(len(train_split.labels), CALIBRATION_COUNT, replace=False)
    with torch.no_grad():
        for i in calibration:
            prepared(torch.from_numpy(train_split.images[i:i + 1]))
    return convert_pt2e(prepared)


def quantization_aware(model: nn.Module, train_split: Split, epochs: int) -> torch.fx.GraphModule:
    """QAT: the float model's weights fine-tuned through fake quantization (conv + batch norm trained
    folded, as mcuflow folds them), then converted."""
    batch = torch.export.Dim("batch", min=1, max=4096)  # an example of 2 rows: export specializes a size of 1
    exported = torch.export.export(model.train(), (torch.from_numpy(train_split.images[:2]),),
                                   dynamic_shapes=({0: batch},))
    prepared = prepare_qat_pt2e(exported.module(), MCUFlowQuantizer(is_qat=True))
    fine_tune(prepared, train_split, epochs)
    move_exported_model_to_eval(prepared)
    return convert_pt2e(prepared)


def fine_tune(model: nn.Module, train_split: Split, epochs: int) -> None:
    """The QAT schedule; also run on the float model alone, so that the gain of the extra epochs is
    told apart from the gain of training through the quantization."""
    images, labels = torch.from_numpy(train_split.images), torch.from_numpy(train_split.labels)
    optimizer = torch.optim.Adam(model.parameters(), lr=QAT_LEARNING_RATE)
    shuffle = torch.Generator().manual_seed(SEED)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for rows in torch.randperm(len(labels), generator=shuffle).split(QAT_BATCH_SIZE):
            optimizer.zero_grad()
            loss_fn(model(images[rows]), labels[rows]).backward()
            optimizer.step()


def evaluate(quantized: torch.fx.GraphModule, held_out: Split, board: str | None) -> Result:
    """Compiles the converted model with its own scales (no calibration data) and runs it."""
    program = mcuflow.compile(torch.export.export(quantized, batch_one(held_out.images)), target=TARGET)
    host_logits = program.run(held_out.images)[0]
    if board is None:
        return Result(accuracy(host_logits, held_out.labels), None, None)
    samples = [[held_out.images[i:i + 1]] for i in range(len(held_out.labels))]
    outputs, _ = run_elf_on_inputs(cached_build(program, board), program, samples, board, timeout=600.0)
    board_logits = np.concatenate([out[0] for out in outputs])
    return Result(accuracy(host_logits, held_out.labels), accuracy(board_logits, held_out.labels),
                  int(np.any(board_logits != host_logits, axis=1).sum()))


def run(epochs: int, held_out_count: int | None, board: str | None) -> dict:
    """Held-out accuracies: float and float fine-tuned with QAT's schedule (numbers), PTQ and QAT
    (Results)."""
    torch.manual_seed(SEED)
    model, splits = train(seed=SEED)
    held_out = splits.held_out
    if held_out_count is not None:
        held_out = Split(held_out.images[:held_out_count], held_out.labels[:held_out_count],
                         held_out.indices[:held_out_count])
    float_accuracy = accuracy(predict(model, held_out.images), held_out.labels)
    ptq = evaluate(post_training(copy.deepcopy(model), splits.train), held_out, board)
    qat = evaluate(quantization_aware(copy.deepcopy(model), splits.train, epochs), held_out, board)
    fine_tuned = copy.deepcopy(model).train()
    fine_tune(fine_tuned, splits.train, epochs)
    fine_tuned_accuracy = accuracy(predict(fine_tuned.eval(), held_out.images), held_out.labels)
    return {"labels": held_out.labels, "float": float_accuracy, "float fine-tuned": fine_tuned_accuracy, "ptq": ptq, "qat": qat}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3, help="QAT fine-tuning epochs (default 3)")
    parser.add_argument("--held-out", type=int, default=None, help="use the first N held-out images")
    parser.add_argument("--board", default="qemu-m55")
    parser.add_argument("--no-board", action="store_true", help="host runtime only")
    args = parser.parse_args(argv)
    board = None if args.no_board else args.board
    if board and not (toolchain_available() and qemu_available()):
        print("qat: arm-none-eabi-gcc or qemu-system-arm not found; run `make deps` or pass --no-board",
              file=sys.stderr)
        return 1
    results = run(args.epochs, args.held_out, board)
    ptq, qat = results["ptq"], results["qat"]
    print(f"digits 8x8, {len(results['labels'])} held-out images, target {TARGET}; held-out accuracy:")
    rows = [("float (eager PyTorch)", f"{results['float']:.4f}"),
            (f"float fine-tuned {args.epochs} epochs, as QAT", f"{results['float fine-tuned']:.4f}")]
    for name, r in (("PTQ int8", ptq), (f"QAT int8 ({args.epochs} epochs)", qat)):
        cells = f"{r.host_accuracy:.4f} host"
        if board:
            cells += f", {r.board_accuracy:.4f} {board}, host != board: {r.mismatches}"
        rows.append((name, cells))
    width = max(len(label) for label, _ in rows)
    print("\n".join(f"  {label:<{width}}  {cells}" for label, cells in rows))
    if board and (ptq.mismatches or qat.mismatches):
        print("qat: FAILED: board outputs differ from the host runtime", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
