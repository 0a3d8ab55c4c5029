"""File discovery shared by the floor scripts: every regular .py file under the
given paths (a path may also be a single file), __pycache__ skipped, in sorted
relative-path order -- the same files the corpus builder counts."""

from __future__ import annotations

import os
from pathlib import Path


def py_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for arg in paths:
        root = Path(arg)
        if root.is_file():
            out.append(root)
            continue
        found = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for fn in filenames:
                if fn.endswith(".py"):
                    p = Path(dirpath) / fn
                    if p.is_file() and not p.is_symlink():
                        found.append(p)
        found.sort(key=lambda p: p.relative_to(root).as_posix())
        out.extend(found)
    return out
