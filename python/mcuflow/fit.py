"""What sets a program's RAM and flash, for the errors that say it does not fit a board.

A "needs 37 KiB of RAM, board has 16 KiB" alone leaves the user guessing; these lines name the
tensors or weights that set the peak, by how much the program is over, and the options that
shrink exactly that part. They read only the program's metadata (``Program.describe()``).
"""

from __future__ import annotations

__all__ = ["ram_advice", "flash_advice"]

# Ops whose peak the compiler can lower by running them in horizontal bands (the patches option):
# the chain of convolutions (depthwise ones too) from the first input and the quantize of that
# input (compiler/src/passes/split_into_patches.cpp, conv_chain); no pool is banded.
_BANDED_KINDS = {"conv2d", "quantize_input"}


def _op_name(d: dict, index: int) -> str:
    op = d["ops"][index]
    where = f" at {op['source']}" if op.get("source") else ""
    return f"op {index} ({op['kind']}{where})"


def ram_advice(d: dict, over: int) -> str:
    """Why the arena is what it is when it is ``over`` bytes too big: the tensors live at its peak
    and what would shrink them."""
    plan = d.get("plan") or {}
    by_name = {t["name"]: t for t in d["tensors"]}
    peak = [by_name[n] for n in plan.get("peak_tensors", []) if n in by_name]
    if not peak:
        return f"the arena ({d['arena_bytes']} bytes) is {over} bytes too big"
    peak.sort(key=lambda t: -t["bytes"])
    live = ", ".join(f"{t['name']} ({t['bytes']} B)" for t in peak)
    lines = [f"over by {over} bytes; the arena's peak is at {_op_name(d, plan['peak_op'])}, where {live} are live"]
    ways = []
    if d["precision"] != "int16" and d["ops"][plan["peak_op"]]["kind"] in _BANDED_KINDS:
        ways.append("run the early convolutions in bands (patches=2 or more; mcuflow compile --patches N)")
    largest = peak[0]
    io_names = {t["name"] for t in d["inputs"] + d["outputs"]}
    if largest["dtype"] == "float32" and d["precision"] != "fp32" and largest["name"] in io_names:
        ways.append(f"int8 inputs and outputs (io='int8'; mcuflow compile --io int8) make {largest['name']} "
                    "a quarter of its size")
    ways.append(f"a smaller input or fewer channels where {largest['name']} is made")
    if d["arena_bytes"] > d["arena_lower_bound"]:
        lines.append(f"the plan is {d['arena_bytes'] - d['arena_lower_bound']} bytes above its liveness bound "
                     "(mcuflow inspect shows why)")
    lines.append("to fit: " + "; or ".join(ways))
    return "\n  ".join(lines)


def _owner(d: dict, index: int) -> str:
    """The op that reads constant ``index``, as 'op N (kind)'."""
    for i, op in enumerate(d["ops"]):
        if index in op.get("inputs", []):
            return f"op {i} ({op['kind']}, kernel {op['kernel']})"
    return "no op"


def flash_advice(d: dict, over: int, top: int = 3) -> str:
    """Which constants make the program ``over`` bytes too big for its code memory, and what
    would shrink them."""
    constants = sorted(((i, t) for i, t in enumerate(d["tensors"]) if t["storage"] == "constant"),
                       key=lambda it: -it[1]["bytes"])
    listed = "; ".join(f"{t['name']} {t['bytes']} B, read by {_owner(d, i)}" for i, t in constants[:top])
    lines = [f"over by {over} bytes; the program is {d['program_bytes']} bytes, {d['constant_bytes']} of them "
             f"constants, the largest: {listed}"]
    ways = []
    asked_int4 = any(op.get("weights") for op in d["ops"])  # set on every weighted op when int4 was asked
    if d["precision"] == "fp32":
        ways.append("precision='int8' stores each weight in one byte instead of four")
    elif d["precision"] == "int8" and not asked_int4:
        ways.append("weights='int4' stores two weights per byte (mcuflow compile --weights int4)")
    kept = [i for i, op in enumerate(d["ops"]) if op.get("weights", "").startswith("int8")]
    if kept:
        ways.append(f"ops {', '.join(map(str, kept))} keep int8 weights (mcuflow inspect says why)")
    prepared = sum(t["bytes"] for _, t in constants if t["name"].endswith("_prepared"))
    if prepared:
        lines.append(f"{prepared} of the constant bytes are tier kernels' prepared tables (weights laid out for "
                     "the kernel's inner loop, besides the weights)")
    ways.append("fewer or narrower layers where the largest weights are")
    lines.append("to fit: " + "; or ".join(ways))
    return "\n  ".join(lines)
