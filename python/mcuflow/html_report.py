"""Reports a person looks at: ``mcuflow validate --html`` and ``mcuflow bench --html`` write one
self-contained HTML page (inline CSS and SVG drawn here; no script, no network) next to their text
and JSON reports.

Every plotted mark carries its number in ``data-*`` attributes (and a tooltip), so a test, or a
reader with the browser's inspector, can check each point against the JSON report it came from.
Each ``<section>`` holds one figure.
"""

from __future__ import annotations

import html
import math
import statistics
from dataclasses import dataclass, field
from typing import Iterable, Sequence

WIDTH = 760
LABEL_WIDTH = 230  # left margin of the horizontal bar charts, for layer and op names
ROW = 16
FONT = 11
BAR_COLOR = "#3b6ea8"
HIGHLIGHT_COLOR = "#d0633a"
GRID_COLOR = "#d8d8d8"
TENSOR_COLORS = ("#3b6ea8", "#5d9b4f", "#c7852d", "#8c5aa8", "#3a9aa0", "#b54b5d", "#7a7a3a", "#4f6fc7")
HISTOGRAM_BINS = 20
CSS = """
body { font-family: sans-serif; margin: 24px auto; max-width: 800px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; border-bottom: 1px solid #ccc; }
p, td, th { font-size: 13px; } table { border-collapse: collapse; margin: 8px 0; }
td, th { padding: 2px 8px; text-align: right; border-bottom: 1px solid #eee; }
td:first-child, th:first-child { text-align: left; }
.pass { color: #2d7a2d; font-weight: bold; } .fail { color: #b02a2a; font-weight: bold; }
svg { display: block; margin: 8px 0; } svg text { font-family: sans-serif; }
""".strip()


# --- the figures -----------------------------------------------------------------------------

def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _attrs(data: dict) -> str:
    return "".join(f' data-{k}="{_e(v)}"' for k, v in data.items())


def _number(value: float) -> str:
    """Integers with thousands separators, other figures with 4 significant digits."""
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) >= 1):
        return f"{int(value):,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.4g}"


def _svg(section: str, height: int, body: Iterable[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" data-section="{_e(section)}" width="{WIDTH}" '
            f'height="{height}" viewBox="0 0 {WIDTH} {height}" font-size="{FONT}">' + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, anchor: str = "start", **style) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{_e(v)}"' for k, v in style.items())
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{_e(text)}</text>'


def _rect(x: float, y: float, w: float, h: float, fill: str, title: str, data: dict | None = None,
          outline: str = "") -> str:
    return (f'<rect x="{x:.2f}" y="{y:.2f}" width="{max(w, 0.5):.2f}" height="{h:.2f}" fill="{fill}"'
            f'{outline}{_attrs(data or {})}><title>{_e(title)}</title></rect>')


@dataclass
class Bar:
    label: str
    value: float
    title: str
    data: dict = field(default_factory=dict)
    highlight: bool = False


def bar_chart(section: str, bars: Sequence[Bar], unit: str) -> str:
    """Horizontal bars, one row each, on a linear scale from 0 (an infinite value fills the row)."""
    finite = [b.value for b in bars if math.isfinite(b.value)]
    top = max(finite, default=0.0) or 1.0
    span = WIDTH - LABEL_WIDTH - 90
    body = [_text(LABEL_WIDTH, 12, f"0 … {_number(top)} {unit}", fill="#666")]
    for i, b in enumerate(bars):
        y = 20 + i * ROW
        length = span if not math.isfinite(b.value) else span * b.value / top
        body.append(_text(LABEL_WIDTH - 6, y + ROW - 4, b.label[:36], "end"))
        body.append(_rect(LABEL_WIDTH, y + 2, length, ROW - 4, HIGHLIGHT_COLOR if b.highlight else BAR_COLOR,
                          b.title, {"label": b.label, "value": b.value, **b.data}))
        body.append(_text(LABEL_WIDTH + length + 4, y + ROW - 4, _number(b.value), fill="#444"))
    return _svg(section, 28 + len(bars) * ROW, body)


@dataclass(frozen=True)
class Bin:
    low: int  # inclusive
    high: int  # exclusive
    count: int


def integer_bins(values: Sequence[int], bins: int = HISTOGRAM_BINS) -> list[Bin]:
    """Equal-width half-open integer bins [low, high) from the smallest value past the largest:
    every value in exactly one bin; as many bins as distinct integers when there are fewer."""
    lo, hi = min(values), max(values)
    width = max(1, math.ceil((hi - lo + 1) / bins))
    count = (hi - lo) // width + 1
    counts = [0] * count
    for v in values:
        counts[(v - lo) // width] += 1
    return [Bin(lo + k * width, lo + (k + 1) * width, c) for k, c in enumerate(counts)]


def histogram(section: str, values: Sequence[int], unit: str, what: str) -> str:
    """Counts of ``values`` in integer_bins, as columns; the median marked."""
    height, bottom, left = 220, 180, 50
    bins = integer_bins(values)
    tallest = max(b.count for b in bins)
    column = (WIDTH - left - 20) / len(bins)
    body = [f'<line x1="{left}" y1="{bottom}" x2="{WIDTH - 20}" y2="{bottom}" stroke="#888"/>',
            _text(left - 6, 24, str(tallest), "end", fill="#666"), _text(left - 6, bottom, "0", "end", fill="#666")]
    for k, b in enumerate(bins):
        h = (bottom - 20) * b.count / tallest
        span = f"{_number(b.low)}" if b.high == b.low + 1 else f"{_number(b.low)} … {_number(b.high - 1)}"
        body.append(_rect(left + k * column + 1, bottom - h, column - 2, h, BAR_COLOR,
                          f"{b.count} {what} at {span} {unit}", {"low": b.low, "high": b.high, "count": b.count}))
    body.append(_text(left, bottom + 16, _number(bins[0].low), fill="#444"))
    body.append(_text(WIDTH - 20, bottom + 16, _number(bins[-1].high - 1), "end", fill="#444"))
    median = statistics.median(values)
    total = bins[-1].high - bins[0].low
    x = left + (WIDTH - left - 20) * (median - bins[0].low + 0.5) / total
    body.append(f'<line x1="{x:.1f}" y1="16" x2="{x:.1f}" y2="{bottom}" stroke="{HIGHLIGHT_COLOR}" '
                f'stroke-dasharray="4 3" data-median="{_e(median)}"/>')
    body.append(_text(x + 4, 14, f"median {_number(median)}", fill=HIGHLIGHT_COLOR))
    body.append(_text((left + WIDTH - 20) / 2, bottom + 34, f"{unit} ({len(values)} {what})", "middle"))
    return _svg(section, height, body)


@dataclass(frozen=True)
class Lifetime:
    """A tensor's bytes in one region from before op ``first`` runs to after op ``last`` ran
    (first -1: a program input, there before op 0; last = op count: an output, read after)."""
    index: int
    name: str
    region: int
    offset: int
    bytes: int
    first: int
    last: int
    note: str = ""


def planned_lifetimes(program) -> list[Lifetime]:
    """The tensors the memory plan places in RAM, as ``mcuflow inspect`` lists them: arena tensors
    (a view of another tensor only when it runs in place over it), states, and weights copied into
    RAM at bind (live the whole run)."""
    d = program.describe()
    span = (-1, len(d["ops"]))
    lifetimes = []
    for i, t in enumerate(d["tensors"]):
        if t["storage"] in ("constant", "streamed") or (t.get("alias_of", -1) >= 0 and t.get("in_place_of", -1) < 0):
            continue
        if t["storage"] == "copied":
            lifetimes.append(Lifetime(i, t["name"], t["region"], t["copy_offset"], t["bytes"], *span, "weights"))
            continue
        first, last = (t["first_op"], t["last_op"]) if "first_op" in t else span
        note = "in place" if t.get("in_place_of", -1) >= 0 else t["storage"] if t["storage"] != "arena" else ""
        lifetimes.append(Lifetime(i, t["name"], t["region"], t["offset"], t["bytes"], first, last, note))
    return lifetimes


def memory_timeline(section: str, lifetimes: Sequence[Lifetime], op_count: int, region_bytes: Sequence[int],
                    region_names: Sequence[str]) -> str:
    """One panel per memory region: byte offset up, op index across, a bar per tensor from the op
    that writes it to the last op that reads it."""
    left, right, panel, gap = 60, 20, 200, 44
    regions = [r for r in range(len(region_bytes)) if any(t.region == r for t in lifetimes)]
    columns = op_count + 2  # "in" before op 0, the ops, "out" after the last
    step = (WIDTH - left - right) / columns
    body = []
    for p, r in enumerate(regions):
        top = 24 + p * (panel + gap)
        size = max(region_bytes[r], max(t.offset + t.bytes for t in lifetimes if t.region == r), 1)
        scale = panel / size
        body.append(_text(left, top - 8, f"{region_names[r]}: {region_bytes[r]:,} bytes planned", font_weight="bold"))
        body.append(f'<rect x="{left}" y="{top}" width="{WIDTH - left - right}" height="{panel}" fill="none" '
                    f'stroke="{GRID_COLOR}"/>')
        body.append(_text(left - 4, top + 10, f"{size:,}", "end", fill="#666"))
        body.append(_text(left - 4, top + panel, "0", "end", fill="#666"))
        for k, t in enumerate(t for t in lifetimes if t.region == r):
            x = left + (t.first + 1) * step
            w = (t.last - t.first + 1) * step
            y = top + panel - (t.offset + t.bytes) * scale
            title = (f"{t.name}: {t.bytes:,} bytes at offset {t.offset:,}, live ops {t.first}..{t.last}"
                     + (f" ({t.note})" if t.note else ""))
            body.append(_rect(x, y, w, t.bytes * scale, TENSOR_COLORS[k % len(TENSOR_COLORS)], title,
                              {"tensor": t.name, "index": t.index, "region": t.region, "offset": t.offset,
                               "bytes": t.bytes, "first": t.first, "last": t.last},
                              ' stroke="#fff" stroke-width="0.8" fill-opacity="0.85"'))
            if t.bytes * scale >= FONT + 2 and w >= 6 * len(t.name):  # a name only where it fits
                body.append(_text(x + 3, y + FONT, t.name, fill="#fff"))
        labels = [(0, "in")] + [(i + 1, str(i)) for i in range(0, op_count, max(1, op_count // 12))]
        labels.append((columns - 1, "out"))
        for column, label in labels:
            body.append(_text(left + (column + 0.5) * step, top + panel + 14, label, "middle", fill="#444"))
    body.append(_text((left + WIDTH - right) / 2, 24 + len(regions) * (panel + gap) - 10, "op index", "middle"))
    return _svg(section, 24 + len(regions) * (panel + gap), body)


@dataclass(frozen=True)
class Usage:
    label: str
    used: int
    capacity: int | None


def usage_bars(section: str, usages: Sequence[Usage]) -> str:
    """Bytes used against the board's capacity, one bar each (full width = capacity)."""
    left, right, row = 170, 20, 34
    span = WIDTH - left - right
    body = []
    for i, u in enumerate(usages):
        y = 10 + i * row
        fraction = min(u.used / u.capacity, 1.0) if u.capacity else 1.0
        body.append(_text(left - 8, y + 16, u.label, "end"))
        body.append(f'<rect x="{left}" y="{y + 4}" width="{span}" height="18" fill="#eee" stroke="{GRID_COLOR}"/>')
        over = u.capacity is not None and u.used > u.capacity
        body.append(_rect(left, y + 4, span * fraction, 18, HIGHLIGHT_COLOR if over else BAR_COLOR,
                          f"{u.label}: {u.used:,} bytes" + (f" of {u.capacity:,}" if u.capacity else ""),
                          {"label": u.label, "used": u.used, "capacity": u.capacity if u.capacity else ""}))
        shown = f"{u.used:,} of {u.capacity:,} bytes ({u.used / u.capacity:.1%})" if u.capacity else f"{u.used:,} bytes"
        inside = fraction > 0.45
        body.append(_text(left + 6 if inside else left + span * fraction + 6, y + 17, shown,
                          fill="#fff" if inside else "#222"))
    return _svg(section, 14 + len(usages) * row, body)


# --- the page --------------------------------------------------------------------------------

def _section(key: str, title: str, explanation: str, figure: str, extra: str = "") -> str:
    return (f'<section id="{_e(key)}"><h2>{_e(title)}</h2><p>{_e(explanation)}</p>{figure}{extra}</section>')


def _table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _page(title: str, summary: Sequence[str], sections: Sequence[str]) -> str:
    lines = "".join(f"<p>{line}</p>" for line in summary)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{CSS}</style></head><body><h1>{_e(title)}</h1>{lines}{''.join(sections)}</body></html>\n")


def board_usages(board_name: str, flash_bytes: int | None, static_ram_bytes: int | None) -> list[Usage]:
    """Flash (text + data) against the board's code regions, static RAM (data + bss) against its RAM."""
    from .boards import get_board

    board = get_board(board_name)
    code = sum(r.size for r in board.regions if r.kind == "code")
    ram = sum(r.size for r in board.regions if r.kind == "ram")
    usages = []
    if flash_bytes is not None:
        usages.append(Usage("flash (text + data)", flash_bytes, code))
    if static_ram_bytes is not None:
        usages.append(Usage("static RAM (data + bss)", static_ram_bytes, ram))
    return usages


def memory_section(program, board_name: str, usages: Sequence[Usage]) -> list[str]:
    """The memory timeline of the plan and the flash/RAM bars: both reports end with them."""
    from .boards import get_board

    d = program.describe()
    regions = [r["name"] for r in d["plan"].get("regions", [])] or ["arena"]
    lifetimes = planned_lifetimes(program)
    timeline = memory_timeline("memory_timeline", lifetimes, len(d["ops"]), d["region_bytes"], regions)
    board = get_board(board_name)
    capacity = ", ".join(f"{r.name} {r.size:,} ({r.kind})" for r in board.regions)
    return [
        _section("memory_timeline", "Memory plan: live tensors per op",
                 f"Each bar is a tensor's bytes in RAM (offset up) from the op that writes it to the last op "
                 f"that reads it; 'in' is before op 0 (the inputs), 'out' after the last op (the outputs). "
                 f"Arena {d['arena_bytes']:,} bytes, liveness lower bound {d['arena_lower_bound']:,}.", timeline),
        _section("footprint", f"Flash and RAM on {board_name}",
                 f"The firmware's bytes against the board's memory ({capacity} bytes).", usage_bars("footprint", usages)),
    ]


def validation_page(result, program, board: str) -> str:
    """The page of one ``validate`` run (a ValidationResult)."""
    from .validate import COMPARISONS

    verdict = '<span class="pass">PASS</span>' if result.passed else '<span class="fail">FAIL</span>'
    p = program.metadata
    summary = [f"{_e(len(result.outputs['eager'][0]))} inputs on {_e(board)}; program {_e(program.precision)} for "
               f"{_e(p.get('target'))} ({_e(p.get('tier'))} tier), {len(program.data):,} bytes. Verdict: {verdict}"]
    summary += [_e(v.line) for v in result.verdicts]
    summary += [f"WARNING: {_e(w)}" for w in result.warnings]
    comparisons = _table(["comparison", "max |err|", "mean |err|", "top-1 agreement"],
                         [(spec.label, f"{c['max_abs_error']:.4g}", f"{c['mean_abs_error']:.4g}",
                           "-" if c["top1_agreement"] is None else f"{c['top1_agreement']:.4f}")
                          for spec, c in ((s, result.comparisons[s.key]) for s in COMPARISONS)])
    if result.accuracy:
        comparisons += _table(["stage", "accuracy vs labels"], [(s, f"{a:.4f}") for s, a in result.accuracy.items()])
    most = sorted(result.drilldown, key=lambda r: -r["drift_added"])[:5]
    bars = [Bar(r["name"], r["relative_error"],
                f"{r['name']} {r['shape']}: relative RMS error {r['relative_error']:.4g} "
                f"({r['drift_added']:+.4g} over its inputs), mean |err| {r['mean_abs_error']:.4g}, "
                f"max |err| {r['max_abs_error']:.4g}", {"ir": r["ir"]}, highlight=r in most and r["drift_added"] > 0)
            for r in result.drilldown]
    latency = result.measurements["latency"]
    sections = [
        _section("layer_error", "Error per layer: quantized vs float graph",
                 "Relative RMS error ‖q − f‖ / ‖f‖ of each model tensor, in execution order, on the host runtime; "
                 "orange: the layers adding the most error over their inputs.",
                 bar_chart("layer_error", bars, "relative error"), comparisons),
        _section("latency_histogram", f"Latency per input on {board}",
                 f"Instructions (QEMU) of one inference per evaluation input: median {_number(latency['median'])}, "
                 f"p90 {latency['p90']:,}, p99 {latency['p99']:,}, min {latency['min']:,}, max {latency['max']:,}.",
                 histogram("latency_histogram", result.measurements["instructions"], "instructions (QEMU)", "inputs")),
    ]
    firmware = result.measurements["firmware"]
    sections += memory_section(program, board, board_usages(board, firmware["flash_bytes"],
                                                            firmware["static_ram_bytes"]))
    return _page(f"mcuflow validate: {board}", summary, sections)


def bench_page(report: dict, program, program_name: str) -> str:
    """The page of one ``bench`` record (bench.run_bench's dict)."""
    rec, inference = report["record"], report["regions"]["inference"]
    board = rec["board"]
    summary = [f"{_e(program_name)} on {_e(board)} ({_e(rec['target'])} program, {_e(rec['precision'])}), "
               f"warm-up {report['settings']['warmup']}, {report['settings']['runs']} measured runs; unit: "
               f"instructions (QEMU), not cycles.",
               f"Inference median {_number(inference['median'])}, p90 {inference['p90']:,}, p99 {inference['p99']:,}; "
               f"init (load + verify + bind) {report['regions']['init']['observations'][0]:,}, on a later wake "
               f"(Verify::kStructure) {report['regions']['wake_init']['observations'][0]:,}; cold first inference "
               f"{report['regions']['cold_inference']['observations'][0]:,}."]
    ops = report["profile"]["ops"]
    share = sorted(ops, key=lambda p: -p["instructions"])[:3]
    bars = [Bar(f"{p['index']} {p['kind']}", p["instructions"],
                f"op {p['index']} {p['kind']} ({p['kernel']}, {p['tier']}): {p['instructions']:,} instructions, "
                f"{p['share']:.1%}, {p['macs']:,} MACs", {"index": p["index"], "kernel": p["kernel"]},
                highlight=p in share) for p in ops]
    memory = report["memory"]
    sections = [
        _section("op_latency", "Latency per op",
                 f"Instructions (QEMU) of each op run alone with Session::run_op, one run "
                 f"({report['profile']['total']:,} in all); orange: the three largest.",
                 bar_chart("op_latency", bars, "instructions"),
                 _table(["#", "kind", "kernel", "tier", "MACs", "instructions", "share"],
                        [(p["index"], p["kind"], p["kernel"], p["tier"], f"{p['macs']:,}", f"{p['instructions']:,}",
                          f"{p['share']:.1%}") for p in ops])),
        _section("latency_histogram", "Latency over the measured runs",
                 f"Instructions (QEMU) of each of the {inference['runs']} measured inferences ({inference['contains']}).",
                 histogram("latency_histogram", inference["observations"], "instructions (QEMU)", "runs")),
    ]
    usages = board_usages(board, memory["flash_bytes"], memory["static_ram_bytes"])
    if memory["stack_high_water"] is not None:
        usages.append(Usage("stack high water", memory["stack_high_water"], memory["stack_reserved"]))
    sections += memory_section(program, board, usages)
    return _page(f"mcuflow bench: {program_name} on {board}", summary, sections)
