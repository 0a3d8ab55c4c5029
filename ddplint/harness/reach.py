"""Which of the findings' statements a rank ran, and how often (``verify --script``).

``verify`` asks, through ``DDPLINT_WATCH`` (JSON: ``{"path relative to the project":
[[first line, last line], ...]}``), about the statements of its findings. A trace function
counts each time the rank starts one of them: a line event on its first line that does not
come from the statement's own later lines (a call spread over lines returns to its first line;
a loop's head runs again after its body: a loop counts once however many times it goes round).
It is called on entering every
Python function, and follows the lines only of functions in the watched files, so the rest of
the program (torch included) pays one dictionary look-up per call. DataLoader workers and
other forked children stop counting.

Nothing here imports torch.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter

WATCH_VAR = "DDPLINT_WATCH"

_hits: Counter = Counter()  # "path:line" -> times run
# co_filename, or the real path -> first line -> ("path:line", last line of the head)
_lines_of: dict[str, dict[int, tuple[str, int]] | None] = {}
_watched: dict[str, dict[int, tuple[str, int]]] = {}


def counts() -> dict[str, int] | None:
    """Times each watched line ran; None when nothing is watched (then nothing was counted)."""
    return dict(_hits) if _watched else None


def _lines(filename: str) -> dict[int, tuple[str, int]] | None:
    if filename not in _lines_of:
        _lines_of[filename] = _watched.get(os.path.realpath(filename))
    return _lines_of[filename]


def _on_call(frame, event, arg):
    lines = _lines(frame.f_code.co_filename)
    if not lines:
        return None
    previous = [0]  # the line of this frame's last line event

    def on_line(frame, event, arg):
        if event == "line":
            line = frame.f_lineno
            watched = lines.get(line)
            if watched is not None and not line < previous[0] <= watched[1]:
                _hits[watched[0]] += 1
            previous[0] = line
        return on_line

    return on_line


def _stop() -> None:
    sys.settrace(None)
    threading.settrace(None)


def install(watch: str | None, root: str) -> None:
    """Count the runs of the lines ``watch`` names (the value of ``DDPLINT_WATCH``)."""
    import json

    if not watch:
        return
    for rel, statements in json.loads(watch).items():
        path = os.path.realpath(os.path.join(root, rel))
        _watched[path] = {int(first): (f"{rel}:{first}", int(last)) for first, last in statements}
    if not _watched:
        return
    sys.settrace(_on_call)
    threading.settrace(_on_call)
    os.register_at_fork(after_in_child=_stop)
