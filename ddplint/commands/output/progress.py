"""A progress bar on stderr for long runs, shown on a terminal only."""

from __future__ import annotations

import time
from typing import TextIO

THRESHOLD = 200  # files; shorter runs finish before a bar would help
WIDTH = 30


class Progress:
    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.done = 0
        self.enabled = total > THRESHOLD and hasattr(stream, "isatty") and stream.isatty()
        self._last = 0.0

    def advance(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        filled = WIDTH * self.done // self.total
        self.stream.write(f"\r[{'#' * filled}{' ' * (WIDTH - filled)}] {self.done}/{self.total} files")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()
