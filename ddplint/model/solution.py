"""What the program model derived (Program.digest), kept beside the index's cache.

The results cache is keyed by the project's digest, which covers the program's solution. A warm
run whose files are all answered from that cache needs the digest and nothing else of the
program, so it is kept here with what it was derived from: the index's facts and module names,
and the size and mtime of every file the program read (its summaries, and the texts it looked
at to decide where to start). While all of them are the same, the solution is the same and no
program is built; any of them changed (an edited module the program read, a module whose facts
changed), it is solved again.
"""

from __future__ import annotations

import json
import os

from ddplint.core.hashing import content_hash
from ddplint.model import store


def derived(project, facts: str) -> list:
    """`project.program.digest()`, from the saved solution where nothing it came from changed.
    `facts`: the index's facts as JSON."""
    path = project.cache_path
    if not path or not path.endswith(".json") or project.texts:
        return project.program.digest()
    path = path[: -len(".json")] + "-solution.json"
    base = content_hash(json.dumps([facts, project.relpaths, project.shared], sort_keys=True).encode())
    saved = store.load(path)
    if saved.get("base") == base and isinstance(saved.get("stamps"), dict) and "digest" in saved:
        if all(_stamp(project, relative) == stamp for relative, stamp in saved["stamps"].items()):
            return saved["digest"]
    program = project.program
    digest = program.digest()
    stamps = {project.relpaths[module]: _stamp(project, project.relpaths[module]) for module in sorted(program.looked)}
    store.save(os.path.dirname(path), path, {"base": base, "stamps": stamps, "digest": digest})
    return digest


def _stamp(project, relative: str) -> list | None:
    try:
        info = os.stat(os.path.join(project.root, relative))
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]
