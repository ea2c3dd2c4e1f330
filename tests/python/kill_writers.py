"""Kills mcuflow's writers with SIGKILL at random moments and keeps what the target held after each kill.

    python kill_writers.py KIND TARGET SNAPSHOTS ROUNDS SEED

KIND is ``file`` (outputs.write_file: compile -o, run -o, bench JSON, zoo export) or ``record``
(validate.RecordWriter, whose commit is outputs.commit_dir, as firmware -o's). The target first
gets version (0, 0) written whole. Each round r forks a child that writes versions (r, 1),
(r, 2), ... without end; the parent kills it (kill -9: no handler, no cleanup) after a random
delay of up to a few write cycles, then copies the target to SNAPSHOTS/<r> and lists in
SNAPSHOTS/<r>.left what the kill left beside it. The test judges the snapshots; ``content``
gives the bytes of every version, so it can tell a whole one from a partial one.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np

from mcuflow import outputs

V = importlib.import_module("mcuflow.validate")  # `mcuflow.validate` is the function


def content(r: int, k: int) -> bytes:
    """Version (r, k): a header naming it, then 64 KiB to 1 MiB of bytes drawn from it, so a
    kill mid-write has a wide window to land in and a cut anywhere changes the bytes."""
    rng = random.Random(r * 1_000_003 + k)
    return f"version {r} {k}\n".encode() + rng.randbytes(rng.randrange(64 << 10, 1 << 20))


def write(kind: str, target: Path, r: int, k: int) -> None:
    data = content(r, k)
    if kind == "file":
        outputs.write_file(target, data)
        return
    record = V.RecordWriter(target)
    record.write_text("report.txt", f"version {r} {k}\n")
    values = record.array("payload", (len(data),), np.uint8)
    values[:] = np.frombuffer(data, np.uint8)
    values.flush()
    record.commit({"format": V.RECORD_FORMAT, "version": [r, k]})


def snapshot(target: Path, to: Path) -> None:
    if target.is_dir():
        shutil.copytree(target, to)
    elif target.exists():
        shutil.copyfile(target, to)
    left = sorted(p.name for p in target.parent.iterdir() if p.name != target.name)
    Path(f"{to}.left").write_text(json.dumps(left))


def main(kind: str, target: str, snapshots: str, rounds: str, seed: str) -> int:
    target, snapshots, rng = Path(target), Path(snapshots), random.Random(int(seed))
    write(kind, target, 0, 0)
    started = time.monotonic()
    write(kind, target, 0, 0)
    cycle = time.monotonic() - started  # one whole write, to spread the kills over a few of them
    snapshot(target, snapshots / "0")
    for r in range(1, int(rounds) + 1):
        pid = os.fork()
        if pid == 0:
            try:
                k = 1
                while True:
                    write(kind, target, r, k)
                    k += 1
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0, 3 * cycle))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        snapshot(target, snapshots / str(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
