"""The bit-flip campaign: every single-bit flip of a program's device image, CRC
recomputed, loaded by the host runtime; each variant the host accepts and whose host output
differs from the original's is run on an emulated board, many per boot (firmware/harness/
programs.cpp), and its outputs compared with the host's bit for bit.

    .venv/bin/python tests/firmware/bitflip.py [--board qemu-m55] [--sample N]   # N random bits (default all)

prints the counts: flips tried, accepted by the host, accepted and different, run on the board,
refused by the board (and why), disagreements (host and board both ran it, outputs differ).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mcuflow import _core, boards, device, qemu

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from program_bytes import flipped  # noqa: E402

PROGRAMS_PER_BOOT = 200
PROGRESS_EVERY = 10_000  # bits between progress lines


def ds_cnn_program(target: str = "cortex-m55"):
    """The zoo's DS-CNN, float32 I/O (so the quantize and dequantize ops are flipped too), and one
    evaluation sample."""
    import mcuflow
    from mcuflow import zoo

    m = zoo.get("ds_cnn", seed=0)
    program = mcuflow.compile(m.export(), target=target, calibration=[(x[None],) for x in m.calibration(16)])
    return program, m.evaluation(1)


def host_outputs(image: bytes, physical_inputs: list[np.ndarray], verify: str = "full"):
    """The host runtime's outputs of `image` loaded at `verify` as physical bytes, one per output,
    given the inputs' physical bytes (what the board reads), or None when it refuses to load or run it."""
    try:
        host = _core.HostProgram(image, verify)
        inputs = [_core.to_logical(p.reshape(spec["shape"]), spec["layout"]) for p, spec in zip(physical_inputs, host.inputs)]
        outputs = host.run([np.ascontiguousarray(x) for x in inputs], 1, 1)
    except (RuntimeError, ValueError):  # refused at load, an input of another size or dtype, a run error
        return None
    return [np.ascontiguousarray(_core.to_physical(np.asarray(o), spec["layout"])).tobytes()
            for o, spec in zip(outputs, host.outputs)]


@dataclass
class Campaign:
    tried: int = 0
    accepted: int = 0
    different: int = 0
    board_ran: int = 0
    board_refused: Counter = field(default_factory=Counter)
    disagreements: list = field(default_factory=list)  # (bit, reason)

    def summary(self) -> str:
        refused = ", ".join(f"{k} {v}" for k, v in sorted(self.board_refused.items())) or "none"
        return (f"flips tried {self.tried}, accepted by the host {self.accepted}, accepted and different "
                f"{self.different}, run on the board {self.board_ran}, refused by the board {sum(self.board_refused.values())}"
                f" ({refused}), disagreements {len(self.disagreements)}")


@dataclass
class BoardRun:
    """What the programs harness (firmware/harness/programs.cpp) reported for one program: its
    console line ("ok", "rejected <error>", "bind <error>", "run <error>"; None: no line), its
    outputs' bytes, and with a fill byte each arena buffer after each op (arenas[i][r]: buffer r
    after i ops) and the program's bytes after the run."""
    status: str | None
    outputs: list = field(default_factory=list)
    arenas: list = field(default_factory=list)
    program_after: bytes | None = None


def _existing(w: Path, name) -> list[bytes]:
    """The bytes of the files name(0), name(1), ... in `w`, up to the first missing one."""
    found = []
    while (w / name(len(found))).exists():
        found.append((w / name(len(found))).read_bytes())
    return found


def run_programs(fw, images: list[bytes], physical_inputs, board: str, levels: list[int] | None = None,
                 fill: int | None = None, timeout: float = 900.0) -> list[BoardRun]:
    """Loads and runs each of `images` in one boot of the programs harness, each at its level of
    `levels` (mcuflow::Verify: 0 kFull, 1 kStructure; None: kFull), on one input sample."""
    with tempfile.TemporaryDirectory(prefix="mcuflow-programs-") as work:
        w = Path(work)
        (w / "count.bin").write_bytes(np.uint32(len(images)).tobytes())
        if levels is not None:
            (w / "levels.bin").write_bytes(bytes(levels))
        if fill is not None:
            (w / "fill.bin").write_bytes(bytes([fill]))
        for k, image in enumerate(images):
            (w / f"prog_{k}_0.bin").write_bytes(image)
        for i, p in enumerate(physical_inputs):
            (w / f"in_0_{i}.bin").write_bytes(p.tobytes())
        result = qemu.run(fw.elf, board, timeout_s=timeout, cwd=w, icount=False)
        status = dict(re.findall(r"mcuflow: program (\d+) (.+)", device.named_errors(result.stdout)))
        runs = []
        for k in range(len(images)):
            run = BoardRun(status.get(str(k)), _existing(w, lambda j: f"out_{k}_{j}.bin"))
            while buffers := _existing(w, lambda r: f"arena{r}_{k}_{len(run.arenas)}.bin"):
                run.arenas.append(buffers)
            after = w / f"prog_{k}_1.bin"
            run.program_after = after.read_bytes() if after.exists() else None
            runs.append(run)
        return runs


def run_on_board(fw, variants: list[tuple[int, bytes, list[bytes]]], physical_inputs, board: str, campaign: Campaign,
                 timeout: float = 900.0) -> None:
    """Runs `variants` (bit, image, host output bytes) in one boot of the programs harness and
    records how the board's outputs compare with the host's."""
    runs = run_programs(fw, [image for _, image, _ in variants], physical_inputs, board, timeout=timeout)
    for (bit, _, expected), run in zip(variants, runs):
        if run.status is None:
            campaign.disagreements.append((bit, "no result"))
        elif run.status != "ok":
            campaign.board_refused[run.status] += 1
        else:
            campaign.board_ran += 1
            for j, e in enumerate(expected):
                if run.outputs[j] != e:
                    campaign.disagreements.append((bit, f"output {j} differs"))
                    break


def run_campaign(program, x: np.ndarray, board: str = "qemu-m55", bits=None, log=print) -> Campaign:
    """Flips `bits` (default every bit) of `program`'s device image; `x`: its one input sample."""
    image = program.device_image
    spec = program.inputs[0]
    physical_inputs = [np.ascontiguousarray(_core.to_physical(np.ascontiguousarray(x, dtype=spec["dtype"]),
                                                              spec["layout"])).reshape(-1)]
    original = host_outputs(image, physical_inputs)
    assert original is not None, "the original program must run on the host"
    fw = device.cached_build(program, board, harness="programs")
    campaign = Campaign()
    pending = []
    start = time.monotonic()
    for bit in (range(len(image) * 8) if bits is None else bits):
        campaign.tried += 1
        if campaign.tried % PROGRESS_EVERY == 0:
            log(f"[{time.monotonic() - start:.0f} s, bit {bit}] {campaign.summary()}")
        variant = flipped(image, int(bit))
        out = host_outputs(variant, physical_inputs)
        if out is None:
            continue
        campaign.accepted += 1
        if out == original:
            continue
        campaign.different += 1
        pending.append((int(bit), variant, out))
        if len(pending) == PROGRAMS_PER_BOOT:
            _board_batch(fw, pending, physical_inputs, board, campaign, log)
            pending = []
            log(f"[{time.monotonic() - start:.0f} s, bit {bit}] {campaign.summary()}")
    if pending:
        _board_batch(fw, pending, physical_inputs, board, campaign, log)
    return campaign


def _board_batch(fw, pending, physical_inputs, board, campaign, log) -> None:
    known = len(campaign.disagreements)
    run_on_board(fw, pending, physical_inputs, board, campaign)
    for bit, reason in campaign.disagreements[known:]:
        log(f"  disagreement: bit {bit} (byte {bit // 8}, bit {bit % 8}): {reason}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="qemu-m55")
    ap.add_argument("--sample", type=int, help="flip this many random bits instead of every bit")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    target = boards.get_board(args.board).core
    program, x = ds_cnn_program(target)
    n_bits = len(program.device_image) * 8
    bits = None if args.sample is None else sorted(np.random.default_rng(args.seed).choice(n_bits, args.sample, replace=False))
    print(f"DS-CNN for {target}: {len(program.device_image)} bytes ({n_bits} bits), board {args.board}", flush=True)
    c = run_campaign(program, x, args.board, bits, log=lambda s: print(s, flush=True))
    print(c.summary())
    for bit, reason in c.disagreements[:20]:
        print(f"  disagreement: bit {bit} (byte {bit // 8}): {reason}")
    return 1 if c.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
