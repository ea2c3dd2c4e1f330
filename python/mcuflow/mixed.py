"""``precision="mixed"`` / ``weights="mixed"``: each layer's precision chosen against budgets.

A layer (``_core.precision_layers``: an op with an int16 kernel that writes activations of its
own spec, or whose weights an int4-weight kernel takes) steps up a ladder of choices, cheapest
first: A8W4 (int8 activations, int4 weights), A8W8, A16W8 (int16 activations, int8 weights); the
options name which rungs exist (precision "mixed" adds A16W8, weights "mixed" adds A8W4). The
pass starts with every layer on its lowest rung and measures, on the host runtime over the
calibration samples, the program's outputs against the float program's. Then one layer at a time
goes one rung up, alone, and the output SNR it gains is its sensitivity. The most sensitive layer
is promoted, its next rung measured, and so on until the accuracy budget (minimum output SNR in
dB, and/or top-1 agreement with float) is met; a promotion that breaks the RAM (arena bytes) or
flash (device image bytes) budget is undone and that layer stays. The compiler gets the result
as data (``_core.compile``'s ``layers``), and each layer's ops carry the choice and its
measurement in the program's metadata (``mcuflow inspect``). docs/quantization.md, "Mixed
precision".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .errors import BudgetError

# (activation bits, weight bits), cheapest first.
A8W4, A8W8, A16W8 = (8, 4), (8, 8), (16, 8)


def choice_name(choice: tuple[int, int]) -> str:
    """As the compiler names it (layer_precision_name): "A16W8"."""
    return f"A{choice[0]}W{choice[1]}"


@dataclass(frozen=True)
class Budgets:
    """What the chosen program must meet on the calibration data (None: no such budget)."""

    min_snr_db: float | None = None     # output SNR against the float program, dB
    min_agreement: float | None = None  # top-1 agreement with the float program, 0 to 1
    max_arena_bytes: int | None = None  # the planned arena (all regions)
    max_flash_bytes: int | None = None  # the device image (the program without metadata)


@dataclass
class Accuracy:
    snr_db: float
    agreement: float | None  # None: no output to take a top-1 of (a scalar output)

    def text(self) -> str:
        agreement = "" if self.agreement is None else f", top-1 agreement {100 * self.agreement:.1f}%"
        return f"SNR {self.snr_db:.2f} dB{agreement}"


def accuracy(outputs: Sequence[np.ndarray], reference: Sequence[np.ndarray]) -> Accuracy:
    """Output SNR over every output, and top-1 agreement of the first output along its last dim."""
    y = np.concatenate([np.ravel(o).astype(np.float64) for o in outputs])
    r = np.concatenate([np.ravel(o).astype(np.float64) for o in reference])
    error = float(np.sum((y - r) ** 2))
    signal = float(np.sum(r ** 2))
    snr = math.inf if error == 0 else -math.inf if signal == 0 else 10 * math.log10(signal / error)
    first, first_ref = np.asarray(outputs[0]), np.asarray(reference[0])
    agreement = None
    if first.ndim >= 1 and first.shape[-1] > 1:
        agreement = float(np.mean(first.reshape(-1, first.shape[-1]).argmax(1) ==
                                  first_ref.reshape(-1, first_ref.shape[-1]).argmax(1)))
    return Accuracy(snr, agreement)


def ladder(layer: dict, precision: str, weights: str) -> list[tuple[int, int]]:
    """A layer's choices, cheapest first, under the program's precision and weights options."""
    activations = [8, 16] if precision == "mixed" and layer["int16"] else [16] if precision == "int16" and layer["int16"] else [8]
    weight_bits = [4, 8] if weights == "mixed" and layer["int4"] else [4] if weights == "int4" and layer["int4"] else [8]
    return [c for c in (A8W4, A8W8, A16W8) if c[0] in activations and c[1] in weight_bits]


@dataclass
class Measured:
    """A candidate program's accuracy and the bytes it is over each memory budget ("arena", "flash")."""
    accuracy: Accuracy
    over: dict = field(default_factory=dict)


Layers = list[tuple[str, int, int, str]]  # _core.compile's layers: (layer, activation bits, weight bits, why)


def choose(layers: list[dict], precision: str, weights: str, budgets: Budgets,
           compile_layers: Callable[[Layers, str | None], object], float_program,
           samples: list) -> tuple[Layers, str]:
    """The cheapest per-layer choices meeting `budgets` (see the module doc), each with why, and
    the chosen program's measured accuracy as text;
    BudgetError, one line, when no choice does. `compile_layers(layers, summary)` compiles with
    the compiler's per-layer list (summary: None while choosing, then the chosen program's
    measured accuracy); `float_program` is the fp32 program of the same model."""
    batch = [np.concatenate([s[i] for s in samples]) for i in range(len(samples[0]))]
    reference = float_program.run(batch)
    rungs = {l["layer"]: ladder(l, precision, weights) for l in layers}
    names = [l["layer"] for l in layers]

    def chosen(level: dict[str, int], why: dict[str, str] | None = None) -> Layers:
        return [(n, *rungs[n][level[n]], (why or {}).get(n, "")) for n in names]

    def build(level: dict[str, int]) -> Measured:
        program = compile_layers(chosen(level), None)
        if program.stateful:
            program.reset_state()
        measured = Measured(accuracy(program.run(batch), reference))
        if budgets.max_arena_bytes is not None and sum(program.region_bytes) > budgets.max_arena_bytes:
            measured.over["arena"] = sum(program.region_bytes) - budgets.max_arena_bytes
        flash = len(program.device_image)
        if budgets.max_flash_bytes is not None and flash > budgets.max_flash_bytes:
            measured.over["flash"] = flash - budgets.max_flash_bytes
        return measured

    def accurate(a: Accuracy) -> bool:
        return ((budgets.min_snr_db is None or a.snr_db >= budgets.min_snr_db) and
                (budgets.min_agreement is None or (a.agreement is not None and a.agreement >= budgets.min_agreement)))

    def excess(m: Measured) -> int:
        return sum(m.over.values())

    level = {n: 0 for n in names}
    current = build(level)
    gains: dict[str, float] = {}   # layer -> its next rung alone: SNR gained (dB)
    shrinks: dict[str, int] = {}   # ... and bytes over the memory budgets saved
    blocked: dict[str, str] = {}   # layer -> why its next rung stays refused
    promoted: dict[str, list[str]] = {n: [] for n in names}

    def measure_step(n: str) -> None:
        if level[n] + 1 < len(rungs[n]):
            trial = build({**level, n: level[n] + 1})
            gains[n] = trial.accuracy.snr_db - current.accuracy.snr_db
            shrinks[n] = excess(current) - excess(trial)
            if trial.over and not current.over:
                blocked[n] = f"{choice_name(rungs[n][level[n] + 1])} {_over_text(trial.over)}"

    for n in names:
        measure_step(n)
    # Memory first (int4 weights' unpacking scratch makes the cheapest flash the largest arena),
    # then accuracy; each step the one that helps most, measured alone.
    while current.over or not accurate(current.accuracy):
        steps = [n for n in gains if n not in blocked and (shrinks[n] >= 0 or not current.over)]
        if not steps:
            break
        n = max(steps, key=(lambda k: (shrinks[k], gains[k])) if current.over else gains.get)
        previous = current
        level[n] += 1
        current = build(level)
        if current.over and not previous.over:  # alone it fitted; with the others it does not: undone
            blocked[n] = f"{choice_name(rungs[n][level[n]])} {_over_text(current.over)}"
            level[n] -= 1
            current = previous
            continue
        back = f", {shrinks[n]:,} bytes less over the memory budgets" if previous.over else ""
        promoted[n].append(f"up from {choice_name(rungs[n][level[n] - 1])} ({gains.pop(n):+.2f} dB{back})")
        shrinks.pop(n)
        # Over the memory budgets the arena's peak may move to another layer: every step re-measured.
        for k in names if current.over else [n]:
            measure_step(k)
    if current.over:
        raise BudgetError(f"no precision meets the memory budgets: the smallest program found "
                          f"({_levels_text(names, level, rungs)}) {_over_text(current.over)}")
    if not accurate(current.accuracy):
        raise BudgetError(_shortfall(budgets, current.accuracy, names, level, rungs, blocked, gains))

    why = {}
    for n in names:
        kept = [blocked[n]] if n in blocked else \
            [f"{choice_name(rungs[n][level[n] + 1])} not needed ({gains[n]:+.2f} dB)"] if n in gains else []
        notes = promoted[n] + kept
        why[n] = "; ".join(notes) if notes else "the only choice"
    return chosen(level, why), f"{current.accuracy.text()} on {len(samples)} calibration sample(s)"


def _levels_text(names, level, rungs) -> str:
    return ", ".join(f"{n} {choice_name(rungs[n][level[n]])}" for n in names)


def _over_text(over: dict) -> str:
    return ", ".join(f"exceeds the {what} budget by {excess:,} bytes" for what, excess in over.items())


def _shortfall(budgets: Budgets, reached: Accuracy, names, level, rungs, blocked, gains) -> str:
    """One line: the budget missed, by how much, and the layers that could not climb further."""
    missed = []
    if budgets.min_snr_db is not None and reached.snr_db < budgets.min_snr_db:
        missed.append(f"output SNR {reached.snr_db:.2f} dB, {budgets.min_snr_db - reached.snr_db:.2f} dB below "
                      f"the budget of {budgets.min_snr_db:g} dB")
    if budgets.min_agreement is not None and (reached.agreement or 0.0) < budgets.min_agreement:
        got = 0.0 if reached.agreement is None else reached.agreement
        missed.append(f"top-1 agreement {100 * got:.1f}%, {100 * (budgets.min_agreement - got):.1f} points below "
                      f"the budget of {100 * budgets.min_agreement:g}%")
    held = [f"{n} at {choice_name(rungs[n][level[n]])} (next: {gains[n]:+.2f} dB, but {blocked[n]})"
            for n in names if n in blocked]
    if held:
        layers = "layers held back by the memory budgets: " + "; ".join(held)
    else:
        layers = f"every layer is at its most precise choice ({_levels_text(names, level, rungs)})"
    return f"no precision meets the accuracy budget: {' and '.join(missed)} on the calibration data; {layers}"
