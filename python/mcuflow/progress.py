"""Progress of long steps on stderr (validate's stages, compile's calibration): a redrawn bar when
stderr is a terminal, lines or nothing otherwise, so logs and pipes see no carriage returns."""

from __future__ import annotations

import sys
import time

PROGRESS_MIN_SAMPLES = 500  # fewer inputs finish too soon for a bar to tell anything


class Progress:
    """Progress on stderr, ``mode``: "bar", a one-line bar with rate and time left redrawn at
    most ten times a second (a terminal); "lines", a line as each stage starts and ends (a log);
    "off"."""

    def __init__(self, total: int, mode: str, command: str, stream=None):
        self.total, self.mode, self.command, self.stream = total, mode, command, stream or sys.stderr

    def start(self, label: str) -> None:
        self.label, self.done, self.started, self.drawn = label, 0, time.monotonic(), 0.0
        self._line(f"{label}: {self.total} inputs")
        self._draw(force=True)

    def advance(self, count: int) -> None:
        self.done += count
        self._draw(force=self.done >= self.total)
        if self.done >= self.total:
            if self.mode == "bar":
                self.stream.write("\n")
            self._line(f"{self.label}: done in {time.monotonic() - self.started:.1f} s")

    def close(self) -> None:
        """Ends the line of a bar its step left unfinished (it failed), so what follows starts a line."""
        if self.mode == "bar" and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()

    def note(self, text: str) -> None:
        if self.mode != "off":
            self.stream.write(text + "\n")
            self.stream.flush()

    def _line(self, text: str) -> None:
        if self.mode == "lines":
            self.note(f"mcuflow {self.command}: {text}")

    def _draw(self, force: bool) -> None:
        now = time.monotonic()
        if self.mode != "bar" or (not force and now - self.drawn < 0.1):
            return
        self.drawn = now
        elapsed = now - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        filled = int(24 * self.done / max(self.total, 1))
        eta = f"{int(left) // 60}:{int(left) % 60:02d}" if left == left else "?"
        self.stream.write(f"\r{self.label:<15} [{'#' * filled:<24}] {self.done}/{self.total} "
                          f"{rate:,.0f} inputs/s, {eta} left ")
        self.stream.flush()


class CountingBar:
    """A bar for a step that counts itself, called as ``bar(done, total)``: compile's calibration
    (the C++ compiler knows how many sample runs its observer needs). Starts at the first call."""

    def __init__(self, label: str, command: str, stream=None):
        self.label, self.command, self.stream = label, command, stream
        self.progress: Progress | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.progress is None:
            self.progress = Progress(total, "bar", self.command, self.stream)
            self.progress.start(self.label)
        self.progress.advance(done - self.progress.done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()
