"""Reading back an mcuflow HTML report (python/mcuflow/html_report.py) with the standard library's
html.parser: the sections, the one figure in each, and the numbers its marks carry."""

from __future__ import annotations

from html.parser import HTMLParser

# Elements without an end tag in HTML; every other element the page opens must be closed.
VOID = {"meta", "br", "img", "hr", "input", "link"}
EXTERNAL = ("src", "href")  # a self-contained page loads nothing: no attribute naming another resource


class ReportParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.sections: dict[str, dict] = {}
        self.section: str | None = None
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.problems += [f"<{tag} {k}=...> loads a resource" for k in attrs if k in EXTERNAL]
        if tag in ("script", "iframe", "object", "embed"):
            self.problems.append(f"<{tag}> in a report")
        if tag == "section":
            self.section = attrs["id"]
            self.sections[self.section] = {"svgs": [], "marks": []}
        elif tag == "svg":
            self.sections[self.section]["svgs"].append(attrs.get("data-section"))
        elif self.section and any(k.startswith("data-") for k in attrs):
            self.sections[self.section]["marks"].append(
                {"tag": tag, **{k[5:]: v for k, v in attrs.items() if k.startswith("data-")}})
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.open.pop()

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.open[-1] if self.open else None}>")
            return
        self.open.pop()
        if tag == "section":
            self.section = None

    def handle_data(self, data):
        self.text.append(data)


def parse_report(text: str) -> ReportParser:
    """The parsed page; asserts it is well formed, self-contained and has one figure per section."""
    assert text.startswith("<!DOCTYPE html>")
    parser = ReportParser()
    parser.feed(text)
    parser.close()
    assert not parser.problems, parser.problems
    assert not parser.open, f"unclosed: {parser.open}"
    for key, section in parser.sections.items():
        assert section["svgs"] == [key], (key, section["svgs"])
    return parser


def marks(parser: ReportParser, section: str, tag: str = "rect") -> list[dict]:
    return [m for m in parser.sections[section]["marks"] if m["tag"] == tag]


def check_histogram(parser: ReportParser, section: str, values: list[int]) -> None:
    """The columns' half-open integer bins cover every value once, with the right counts."""
    bins = [(int(m["low"]), int(m["high"]), int(m["count"])) for m in marks(parser, section)]
    assert bins, section
    assert all(a[1] == b[0] for a, b in zip(bins, bins[1:])), bins  # adjacent, no gap, no overlap
    assert bins[0][0] == min(values) and bins[-1][0] <= max(values) < bins[-1][1]
    for low, high, count in bins:
        assert count == sum(low <= v < high for v in values), (low, high)


def check_timeline(parser: ReportParser, program) -> None:
    """One bar per planned tensor, at its offset and bytes, over its ops (program.describe())."""
    d = program.describe()
    bars = {int(m["index"]): m for m in marks(parser, "memory_timeline")}
    arena = [i for i, t in enumerate(d["tensors"]) if t["storage"] == "arena" and t["alias_of"] < 0]
    assert set(arena) <= set(bars), sorted(set(arena) - set(bars))
    for i, m in bars.items():
        t = d["tensors"][i]
        assert m["tensor"] == t["name"] and int(m["bytes"]) == t["bytes"]
        if t["storage"] == "arena":
            assert (int(m["offset"]), int(m["first"]), int(m["last"])) == (t["offset"], t["first_op"], t["last_op"])
        assert int(m["offset"]) + int(m["bytes"]) <= d["region_bytes"][t["region"]]
