"""Finding the files to lint, reading them, and writing fixed ones back safely."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ddplint.engine.lint import DecodedSource, SourceError, decode, encode

# Folders no one wants linted: tool caches, VCS metadata, virtual environments, build output,
# and Jupyter's autosaved copies of notebooks (each finding would be reported twice).
# `exclude` in the configuration replaces this list; `extend-exclude` adds to it.
# Not `dist/` (ruff skips it): in DDP code `dist/` is as often the package's distributed-
# training code (mmengine/dist/) as a folder of built wheels, and wheels hold no .py files.
DEFAULT_EXCLUDE = (
    ".bzr/", ".direnv/", ".eggs/", ".git/", ".hg/", ".ipynb_checkpoints/", ".mypy_cache/", ".nox/", ".pytest_cache/",
    ".ruff_cache/", ".svn/", ".tox/", ".venv/", ".ddplint_cache/", "__pycache__/", "__pypackages__/",
    "_build/", "buck-out/", "build/", "node_modules/", "venv/", "*.egg-info/",
)
PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"


class Pattern:
    """One gitignore-style pattern, matched against paths relative to the folder `base`.

    A pattern without a slash matches a name at any depth; one with a slash is anchored at
    `base`; `*` and `?` stay within one path segment, `**` crosses segments; a trailing slash
    matches folders only; a leading `!` re-includes what an earlier pattern excluded.
    """

    def __init__(self, text: str, base: str) -> None:
        self.text = text
        self.base = os.path.abspath(base)
        self.negated = text.startswith("!")
        body = text[1:] if self.negated else text
        self.dir_only = body.endswith("/")
        body = body.rstrip("/")
        anchored = "/" in body
        body = body.lstrip("/")
        self._regex = re.compile(("" if anchored else "(?:.*/)?") + _translate(body) + r"\Z", re.DOTALL)

    def matches(self, path: str, is_dir: bool) -> bool:
        """Whether the pattern matches the absolute `path` itself (not its parent folders)."""
        if self.dir_only and not is_dir:
            return False
        relative = _relative(path, self.base)
        return relative is not None and self._regex.match(relative) is not None

    def matches_within(self, path: str) -> bool:
        """Whether the pattern matches the file `path` or one of its folders below `base`."""
        relative = _relative(os.path.abspath(path), self.base)
        if relative is None:
            return False
        parts = relative.split("/")
        if not self.dir_only and self._regex.match(relative):
            return True
        return any(self._regex.match("/".join(parts[:depth])) for depth in range(1, len(parts)))


def _relative(path: str, base: str) -> str | None:
    """`path` (absolute) relative to `base` with forward slashes, or None if not below it."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix) or path == prefix:
        return None
    relative = path[len(prefix) :]
    return relative if os.sep == "/" else relative.replace(os.sep, "/")


def _translate(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = glob[i]
        i += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i < len(glob):
            out.append(re.escape(glob[i]))
            i += 1
        elif char == "[" and "]" in glob[i + 1 :]:
            end = glob.index("]", i + 1)
            members = glob[i:end]
            if members.startswith("!"):
                members = "^" + members[1:]
            out.append("[" + members.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(char))
    return "".join(out)


def parse_ignore_lines(lines: Iterable[str], base: str) -> list[Pattern]:
    patterns = []
    for line in lines:
        line = line.rstrip("\n").rstrip("\r")
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        if not line or line.startswith("#"):
            continue
        if line.startswith("\\#") or line.startswith("\\!"):
            line = line[1:]
        patterns.append(Pattern(line, base))
    return patterns


def _decide(patterns: Sequence[Pattern], path: str, is_dir: bool) -> bool | None:
    """True: excluded, False: re-included, None: no pattern speaks about `path`."""
    verdict = None
    for pattern in patterns:
        if pattern.matches(path, is_dir):
            verdict = not pattern.negated
    return verdict


@dataclass(frozen=True)
class _Tracked:
    """The files git tracks in one work tree, and the folders that hold them."""

    files: frozenset[str]
    folders: frozenset[str]


def _tracked_files(root: str) -> _Tracked | None:
    """What git tracks under the work tree `root`, or None when git cannot say (not
    installed, a repository git refuses, a time-out)."""
    try:
        listed = subprocess.run(
            ["git", "-C", root, "ls-files", "-z"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    files = {os.path.join(root, *name.split("/")) for name in listed.decode("utf-8", "surrogateescape").split("\0") if name}
    folders = set()
    for path in files:
        folder = os.path.dirname(path)
        while folder != root and folder not in folders:
            folders.add(folder)
            folder = os.path.dirname(folder)
    return _Tracked(frozenset(files), frozenset(folders))


@dataclass
class Exclusion:
    """What discovery skips: configured patterns and, unless turned off, what git ignores.

    As in git, `.gitignore` files speak only inside a git work tree and only about the files
    git does not track: a tracked file is linted whatever pattern matches it (a `*dist*` line
    meant for build output must not hide `dist_train.py`). Outside a work tree (an unpacked
    archive) no `.gitignore` is read, as ruff and ripgrep do.
    """

    patterns: Sequence[Pattern] = ()
    respect_gitignore: bool = True
    _gitignores: dict[str, list[Pattern]] = field(default_factory=dict)
    _roots: dict[str, str | None] = field(default_factory=dict)
    _tracked: dict[str, _Tracked | None] = field(default_factory=dict)
    _ignored_folders: dict[str, str | None] = field(default_factory=dict)  # folder -> `_ignored_at`

    @classmethod
    def defaults(cls, base: str = ".") -> Exclusion:
        return cls(parse_ignore_lines(DEFAULT_EXCLUDE, base))

    def excludes(self, path: str, is_dir: bool) -> bool:
        path = os.path.abspath(path)
        if _decide(self.patterns, path, is_dir):
            return True
        if not self.respect_gitignore:
            return False
        root = self._work_tree(os.path.dirname(path))
        ignored = self._ignored_at(path, is_dir, root) if root is not None else None
        if ignored is None:
            return False
        if root not in self._tracked:
            self._tracked[root] = _tracked_files(root)
        tracked = self._tracked[root]
        if tracked is None:
            return ignored == path  # without git, as before: a path's own patterns
        if ignored != path and ignored not in tracked.folders:
            return False  # inside an ignored folder that discovery entered only because it was named
        return path not in (tracked.folders if is_dir else tracked.files)

    def excludes_with_parents(self, path: str) -> bool:
        """For a path named on the command line: it or any folder above it is excluded."""
        absolute = os.path.abspath(path)
        parents = []
        folder = os.path.dirname(absolute)
        while True:
            parents.append(folder)
            up = os.path.dirname(folder)
            if up == folder:
                break
            folder = up
        return any(self.excludes(folder, True) for folder in reversed(parents)) or self.excludes(
            absolute, os.path.isdir(absolute)
        )

    def _work_tree(self, folder: str) -> str | None:
        """The git work tree `folder` is in (the nearest folder above with a `.git`), or None."""
        if folder not in self._roots:
            parent = os.path.dirname(folder)
            if os.path.exists(os.path.join(folder, ".git")):
                self._roots[folder] = folder
            else:
                self._roots[folder] = None if parent == folder else self._work_tree(parent)
        return self._roots[folder]

    def _ignored_at(self, path: str, is_dir: bool, root: str) -> str | None:
        """`path` where the `.gitignore` files of `root` ignore it, else the nearest folder above
        it (below `root`) they ignore, else None: git cannot re-include a file whose folder
        it ignores, so an untracked file in such a folder that holds tracked ones stays out."""
        if is_dir and path in self._ignored_folders:
            return self._ignored_folders[path]
        # Deeper .gitignore files override shallower ones, as in git.
        parent = os.path.dirname(path)
        if _decide(self._gitignore_for(parent), path, is_dir):
            found: str | None = path
        else:
            found = self._ignored_at(parent, True, root) if parent != root and parent != path else None
        if is_dir:
            self._ignored_folders[path] = found
        return found

    def _gitignore_for(self, folder: str) -> list[Pattern]:
        """The patterns of every .gitignore from the repository root (or `folder`) down to `folder`."""
        if folder in self._gitignores:
            return self._gitignores[folder]
        parent = os.path.dirname(folder)
        inherited: list[Pattern] = []
        if parent != folder and not os.path.exists(os.path.join(folder, ".git")):
            inherited = self._gitignore_for(parent)
        own: list[Pattern] = []
        try:
            with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as handle:
                own = parse_ignore_lines(handle, folder)
        except OSError:
            pass
        self._gitignores[folder] = inherited + own
        return self._gitignores[folder]


@dataclass(frozen=True)
class Target:
    """A path to lint, or an error found while looking for paths."""

    path: str
    error: str | None = None
    # The path argument that led here: fixes are not written through symlinks that leave it.
    root: str | None = None
    # Named on the command line itself, not found in a folder: its syntax is always checked.
    named: bool = False


def discover(
    paths: Sequence[str],
    exclusion: Exclusion | None = None,
    *,
    force_exclude: bool = False,
    notebooks: bool = False,
) -> Iterator[Target]:
    """Every Python file under `paths` (and, with `notebooks`, every `.ipynb`), in sorted
    order; a named file is linted whatever its suffix, and even if excluded unless
    `force_exclude` (pre-commit names files one by one). Paths that do not exist or cannot be
    listed become error targets."""
    exclusion = exclusion if exclusion is not None else Exclusion.defaults()
    suffixes = (*PYTHON_SUFFIXES, NOTEBOOK_SUFFIX) if notebooks else PYTHON_SUFFIXES
    seen: set[str] = set()
    for given in paths:
        if force_exclude and os.path.exists(given) and exclusion.excludes_with_parents(given):
            continue
        for target in _discover_one(given, exclusion, suffixes):
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


def _discover_one(given: str, exclusion: Exclusion, suffixes: tuple[str, ...]) -> Iterator[Target]:
    problem = _link_problem(given)
    if problem is not None:
        yield Target(given, problem)
        return
    if not os.path.exists(given):
        yield Target(given, "cannot read: no such file or directory")
        return
    if not os.path.isdir(given):
        yield Target(_without_dot(given), root=given, named=True)
        return
    errors: list[Target] = []

    def on_error(error: OSError) -> None:
        errors.append(Target(_without_dot(error.filename or given), f"cannot read: {error.strerror or error}"))

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
        dirs[:] = sorted(d for d in dirs if not exclusion.excludes(os.path.join(root, d), True))
        for name in sorted(files):
            if name.endswith(suffixes):
                path = _without_dot(os.path.join(root, name))
                if exclusion.excludes(path, False):
                    continue
                problem = _link_problem(path) if os.path.islink(path) else None
                found.append(Target(path, problem) if problem else Target(path, root=given))
    yield from sorted(found + errors, key=lambda target: target.path)


def _without_dot(path: str) -> str:
    """`./src/x.py` as `src/x.py`, the way paths are printed (as ruff does)."""
    while path.startswith("./") and len(path) > 2:
        path = path[2:].lstrip("/")
    return path


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
