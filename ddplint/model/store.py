"""The model's cache files (the index's facts, the program's summaries, the solution's digest):
JSON, written atomically beside the results cache, read back as plain data. A file that cannot
be read or written only costs speed."""

from __future__ import annotations

import json
import os
import tempfile


def load(path: str | None) -> dict:
    """The dict saved at `path`; an empty one when there is none or it cannot be read."""
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            loaded = json.load(handle)
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def save(folder: str, path: str, entries: dict) -> None:
    """Write `entries` to `path` in `folder` (made, with a .gitignore, if need be) atomically."""
    try:
        os.makedirs(folder, exist_ok=True)
        ignore = os.path.join(folder, ".gitignore")
        if not os.path.exists(ignore):
            with open(ignore, "w", encoding="utf-8") as handle:
                handle.write("# created by ddplint\n*\n")
        descriptor, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(entries, handle)
        os.replace(temporary, path)
    except OSError:
        pass  # a cache that cannot be written only costs speed
