"""The harness's temporary folders: named after the process that made them, so that a run
can remove the ones a killed run (SIGKILL leaves no chance to clean up) left behind."""

from __future__ import annotations

import os
import re
import shutil
import tempfile

_NAME = re.compile(r"^ddplint-(?:verify|script|job)-(\d+)-")


def make(kind: str) -> str:
    """A fresh folder ``ddplint-<kind>-<this pid>-XXXX`` in the temporary folder."""
    return tempfile.mkdtemp(prefix=f"ddplint-{kind}-{os.getpid()}-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep() -> list[str]:
    """Remove the folders of harness runs whose process is gone; return them."""
    root = tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        m = _NAME.match(name)
        if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
            removed.append(name)
    return removed
