"""Which of the findings' lines a rank ran, and how often (``verify --script``).

``verify`` asks, through ``DDPLINT_WATCH`` (JSON: ``{"path relative to the project": [line,
...]}``), about the lines of its findings. A trace function counts each time the rank runs
one of them. It is called on entering every Python function, and follows the lines only of
functions in the watched files, so the rest of the program (torch included) pays one
dictionary look-up per call. DataLoader workers and other forked children stop counting.

Nothing here imports torch.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter

WATCH_VAR = "DDPLINT_WATCH"

_hits: Counter = Counter()  # "path:line" -> times run
_lines_of: dict[str, dict[int, str] | None] = {}  # co_filename -> watched line -> "path:line"
_watched: dict[str, dict[int, str]] = {}  # real path -> watched line -> "path:line"


def counts() -> dict[str, int] | None:
    """Times each watched line ran; None when nothing is watched (then nothing was counted)."""
    return dict(_hits) if _watched else None


def _lines(filename: str) -> dict[int, str] | None:
    if filename not in _lines_of:
        _lines_of[filename] = _watched.get(os.path.realpath(filename))
    return _lines_of[filename]


def _on_line(frame, event, arg):
    if event == "line":
        where = _lines_of[frame.f_code.co_filename].get(frame.f_lineno)
        if where is not None:
            _hits[where] += 1
    return _on_line


def _on_call(frame, event, arg):
    return _on_line if _lines(frame.f_code.co_filename) else None


def _stop() -> None:
    sys.settrace(None)
    threading.settrace(None)


def install(watch: str | None, root: str) -> None:
    """Count the runs of the lines ``watch`` names (the value of ``DDPLINT_WATCH``)."""
    import json

    if not watch:
        return
    for rel, lines in json.loads(watch).items():
        path = os.path.realpath(os.path.join(root, rel))
        _watched[path] = {int(line): f"{rel}:{line}" for line in lines}
    if not _watched:
        return
    sys.settrace(_on_call)
    threading.settrace(_on_call)
    os.register_at_fork(after_in_child=_stop)
