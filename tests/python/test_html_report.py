"""`mcuflow validate --html`: one self-contained page whose figures carry the numbers of the JSON
record written next to it (the board replaced by the host runtime, as in test_validate). The
bench page is checked on the emulated board in tests/firmware/test_measure.py."""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
import subprocess
import zlib

import pytest

from mcuflow import cli
from mcuflow.boards import get_board
from mcuflow.html_report import integer_bins

from html_check import check_histogram, check_timeline, marks, parse_report
from test_validate import BOARD, V, cli_args, digits, fake_board, write_cli_inputs  # noqa: F401 (fixtures)

COUNT = 40


@pytest.fixture
def page(digits, fake_board, monkeypatch, tmp_path):  # noqa: F811
    """validate --html on COUNT inputs, with per-input instruction counts that differ."""
    def varying_counts(firmware, program, samples, board, timeout):
        start = fake_board.done
        outputs, _ = fake_board.run_chunk(firmware, program, samples, board, timeout)
        return outputs, [4_000 + (start + k) * 7919 % 613 for k in range(len(samples))]

    monkeypatch.setattr(V, "run_board_chunk", varying_counts)
    paths = write_cli_inputs(digits, tmp_path, COUNT)
    html = tmp_path / "report.html"
    assert cli.main(cli_args(paths, tmp_path / "record", "--html", str(html))) == 0
    return html, tmp_path / "record"


def test_the_validate_page_plots_the_numbers_of_its_record(page, digits):
    html, record = page
    parser = parse_report(html.read_text())
    assert list(parser.sections) == ["layer_error", "latency_histogram", "memory_timeline", "footprint"]
    report = json.loads((record / "report.json").read_text())

    bars = marks(parser, "layer_error")
    assert [b["label"] for b in bars] == [r["name"] for r in report["drilldown"]]
    assert [float(b["value"]) for b in bars] == [r["relative_error"] for r in report["drilldown"]]

    instructions = json.loads((record / "timings.json").read_text())["instructions"]
    assert len(set(instructions)) > 1
    check_histogram(parser, "latency_histogram", instructions)
    (median,) = marks(parser, "latency_histogram", "line")
    assert float(median["median"]) == report["latency"]["median"]

    check_timeline(parser, digits.program)

    board = get_board(BOARD)
    usage = {m["label"]: (int(m["used"]), int(m["capacity"])) for m in marks(parser, "footprint")}
    assert usage == {
        "flash (text + data)": (report["firmware"]["flash_bytes"], sum(r.size for r in board.regions if r.kind == "code")),
        "static RAM (data + bss)": (report["firmware"]["static_ram_bytes"],
                                    sum(r.size for r in board.regions if r.kind == "ram")),
    }
    text = "".join(parser.text)
    assert "Verdict: PASS" in text and f"{COUNT} inputs on {BOARD}" in text


def test_integer_bins_hold_every_value_once():
    rng = random.Random(19)
    for _ in range(200):
        values = [rng.randrange(-50, 10_000) for _ in range(rng.randrange(1, 60))]
        bins = integer_bins(values)
        assert len(bins) <= 20 and bins[0].low == min(values)
        assert sum(b.count for b in bins) == len(values)
        for b in bins:
            assert b.count == sum(b.low <= v < b.high for v in values)


def test_html_over_an_input_is_refused_before_any_work(digits, tmp_path, capsys):  # noqa: F811
    paths = write_cli_inputs(digits, tmp_path, 4)
    before = paths["eval"].read_bytes()
    assert cli.main(cli_args(paths, tmp_path / "record", "--html", str(paths["eval"]))) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("mcuflow: error: --html") and "evaluation data" in err and "\n" not in err
    assert paths["eval"].read_bytes() == before and not (tmp_path / "record").exists()
    assert cli.main(["validate", "--compare", str(tmp_path), str(tmp_path), "--html", str(tmp_path / "r.html")]) == 1
    assert "--html reports a validation run" in capsys.readouterr().err


def png_colors(png: bytes) -> set[tuple[int, int, int]]:
    """The distinct RGB colours of a non-interlaced 8-bit RGB/RGBA PNG (filters undone)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = {}, 8
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        chunks.setdefault(kind, []).append(png[pos + 8:pos + 8 + length])
        pos += 12 + length
    width, height, depth, color_type = struct.unpack(">IIBB", chunks[b"IHDR"][0][:10])
    assert depth == 8 and color_type in (2, 6)
    channels = 3 if color_type == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks[b"IDAT"])), width * channels
    previous, colors = bytearray(stride), set()
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        colors.update(tuple(line[i:i + 3]) for i in range(0, stride, channels * 4))
        previous = line
    return colors


def chromium() -> str:
    """The headless browser; `make test-python` sets MCUFLOW_REQUIRE_CHROMIUM (it installs chromium),
    so there a missing browser fails the test instead of skipping it."""
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("MCUFLOW_REQUIRE_CHROMIUM"):
            pytest.fail("chromium is not installed, and MCUFLOW_REQUIRE_CHROMIUM asks for the render test")
        pytest.skip("chromium not installed (apt-get install chromium)")
    return path


def test_chromium_renders_the_page_with_its_bars(page, tmp_path):
    html, _ = page
    png = tmp_path / "page.png"
    subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                    "--window-size=820,1600", html.as_uri()], capture_output=True, timeout=120, check=True)
    colors = png_colors(png.read_bytes())
    assert (0x3B, 0x6E, 0xA8) in colors and (0xD0, 0x63, 0x3A) in colors  # the bars and the highlighted ones
