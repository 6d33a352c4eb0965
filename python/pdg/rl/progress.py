"""A one-line progress display for training loops: iterations done, the
latest statistics and the rate. On a terminal the line is redrawn in place;
elsewhere (a log file, CI) a line is printed every `every` iterations and
at the end, so logs stay short."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24, every: int = 25):
        self.total, self.width, self.every = total, width, every
        self.stream = stream or sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self.done = 0

    def update(self, **stats: float) -> None:
        """One more iteration, with its statistics (name=value)."""
        self.done += 1
        line = self.line(stats)
        if self.live:
            self.stream.write("\r" + line)
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done % self.every == 0 or self.done == self.total:
            self.stream.write(line + "\n")
        self.stream.flush()

    def line(self, stats: dict) -> str:
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        rate = self.done / max(time.perf_counter() - self.start, 1e-9)
        values = "  ".join(f"{k} {v:.3f}" for k, v in stats.items())
        return f"[{bar}] {self.done}/{self.total}  {values}  {rate:.1f} it/s"
