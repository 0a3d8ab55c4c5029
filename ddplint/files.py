"""Finding the files to lint, reading them, and writing fixed ones back safely."""

from __future__ import annotations

import errno
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
    # The path argument that led here: fixes are not written through symlinks that leave it.
    root: str | None = None


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


def _link_problem(path: str) -> str | None:
    """Why a path that is a symlink cannot be followed, or None if it can."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "cannot read: symbolic link loop"
        if os.path.islink(path):
            return "cannot read: broken symbolic link"
    return None


def _discover_one(given: str) -> Iterator[Target]:
    problem = _link_problem(given)
    if problem is not None:
        yield Target(given, problem)
        return
    if not os.path.exists(given):
        yield Target(given, "cannot read: no such file or directory")
        return
    if not os.path.isdir(given):
        yield Target(given, root=given)
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
                problem = _link_problem(path) if os.path.islink(path) else None
                found.append(Target(path, problem) if problem else Target(path, root=given))
    yield from sorted(found + errors, key=lambda target: target.path)


def read_source(path: str) -> tuple[DecodedSource, bytes]:
    try:
        # Opened without blocking and checked before reading: a FIFO or device named `x.py`
        # would otherwise hang ddplint or feed it forever.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(descriptor, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise SourceError("cannot read: is a directory")
            if not stat.S_ISREG(info.st_mode):
                raise SourceError("cannot read: not a regular file")
            data = handle.read()
    except IsADirectoryError:
        raise SourceError("cannot read: is a directory") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise SourceError("cannot read: symbolic link loop") from None
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    return decode(data), data


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


TEMPORARY_SUFFIX = ".ddplint"


def write_atomically(path: str, text: str, like: DecodedSource, original: bytes, *, root: str | None = None) -> None:
    """Replace the file at `path` with `text` in the encoding, BOM and mode it had.

    The new content goes to a temporary file in the same folder and is renamed over the old
    one, so a reader (or a kill) sees either the old or the new file, never half of one. A kill
    between creating and renaming the temporary file leaves that one `.NAME.*.ddplint` file
    behind; the original is untouched. If the file changed since it was read, nothing is
    written. When `root` (the folder argument that led to `path`) is given, a symlink whose
    target lies outside it is not written through.
    """
    real = os.path.realpath(path)
    if root is not None and os.path.isdir(root) and not _inside(real, os.path.realpath(root)):
        raise SourceError("not fixed: symlink points outside the linted tree")
    data = encode(text, like)
    try:
        with open(real, "rb") as handle:
            current = handle.read()
        info = os.stat(real)
    except OSError as error:
        raise SourceError(f"cannot write: {error.strerror or error}") from None
    if current != original:
        raise SourceError("not fixed: the file changed while ddplint was fixing it")
    folder = os.path.dirname(real) or "."
    try:
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(real)}.", suffix=TEMPORARY_SUFFIX, dir=folder
        )
    except OSError as error:
        raise SourceError(f"cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
            try:  # keep the owner when root fixes another user's file
                os.chown(temporary, info.st_uid, info.st_gid)
            except OSError:
                pass
        os.replace(temporary, real)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise SourceError(f"cannot write: {error.strerror or error}") from None
        raise
