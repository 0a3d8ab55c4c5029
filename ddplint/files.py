"""Finding the files to lint, reading them, and writing fixed ones back safely."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ddplint.engine import DecodedSource, SourceError, decode, encode

# Folders no one wants linted: tool caches, VCS metadata, virtual environments, build output.
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".bzr", ".direnv", ".eggs", ".git", ".hg", ".mypy_cache", ".nox", ".pytest_cache",
        ".ruff_cache", ".svn", ".tox", ".venv", ".ddplint_cache", "__pycache__", "__pypackages__",
        "_build", "buck-out", "build", "dist", "node_modules", "venv",
    }
)
PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class Target:
    """A path to lint, or an error found while looking for paths."""

    path: str
    error: str | None = None


def discover(paths: Sequence[str]) -> Iterator[Target]:
    """Every Python file under `paths`, in sorted order; a named file is linted whatever its
    suffix. Paths that do not exist or cannot be listed become error targets."""
    seen: set[str] = set()
    for given in paths:
        for target in _discover_one(given):
            key = os.path.normpath(target.path)
            if key not in seen:
                seen.add(key)
                yield target


def _discover_one(given: str) -> Iterator[Target]:
    if os.path.islink(given) and not os.path.exists(given):
        yield Target(given, "cannot read: broken symbolic link")
        return
    if not os.path.exists(given):
        yield Target(given, "cannot read: no such file or directory")
        return
    if not os.path.isdir(given):
        yield Target(given)
        return
    errors: list[Target] = []

    def on_error(error: OSError) -> None:
        errors.append(Target(error.filename or given, f"cannot read: {error.strerror or error}"))

    found: list[Target] = []
    visited: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(given, onerror=on_error, followlinks=True):
        try:
            info = os.stat(root)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in visited:  # a symlink loop
            dirs[:] = []
            continue
        visited.add((info.st_dev, info.st_ino))
        dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDED_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            if name.endswith(PYTHON_SUFFIXES):
                path = os.path.join(root, name)
                if os.path.islink(path) and not os.path.exists(path):
                    found.append(Target(path, "cannot read: broken symbolic link"))
                else:
                    found.append(Target(path))
    yield from sorted(found + errors, key=lambda target: target.path)


def read_source(path: str) -> tuple[DecodedSource, bytes]:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except IsADirectoryError:
        raise SourceError("cannot read: is a directory") from None
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    return decode(data), data


def write_atomically(path: str, text: str, like: DecodedSource, original: bytes) -> None:
    """Replace the file at `path` with `text` in the encoding, BOM and mode it had.

    The new content goes to a temporary file in the same folder and is renamed over the old
    one, so a reader (or a kill) sees either the old or the new file, never half of one. If the
    file changed since it was read, nothing is written.
    """
    real = os.path.realpath(path)
    data = encode(text, like)
    try:
        with open(real, "rb") as handle:
            current = handle.read()
    except OSError as error:
        raise SourceError(f"cannot write: {error.strerror or error}") from None
    if current != original:
        raise SourceError("not fixed: the file changed while ddplint was fixing it")
    mode = stat.S_IMODE(os.stat(real).st_mode)
    folder = os.path.dirname(real) or "."
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(real)}.", suffix=".ddplint", dir=folder)
    except OSError as error:
        raise SourceError(f"cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, real)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
