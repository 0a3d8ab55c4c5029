"""The public Python API: lint or fix a string, or lint paths.

    >>> import ddplint
    >>> [d.code for d in ddplint.lint_source("import torch\\nm = torch.load('x.pt')\\n")]
    ['DDP004']
    >>> ddplint.fix_source("import torch\\nm = torch.load('x.pt')\\n")
    'import torch\\nm = torch.load(\\'x.pt\\', map_location="cpu")\\n'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ddplint.diagnostics import Diagnostic, FileResult
from ddplint.engine import SourceError, analyse
from ddplint.files import discover, read_source, write_atomically
from ddplint.fixer import fix_text
from ddplint.rule import Rule
from ddplint.rules import all_rules
from ddplint.selection import choose_rules

__all__ = ["Diagnostic", "FileResult", "SourceError", "fix_source", "lint_paths", "lint_source"]


def _rules(select: Sequence[str] | None, ignore: Sequence[str]) -> list[type[Rule]]:
    return choose_rules(all_rules(), select, ignore)


def lint_source(
    source: str, path: str = "<string>", *, select: Sequence[str] | None = None, ignore: Sequence[str] = ()
) -> list[Diagnostic]:
    """Findings in `source`, sorted by position. Raises SourceError if it does not parse."""
    return analyse(source, path, _rules(select, ignore)).diagnostics


def fix_source(
    source: str,
    path: str = "<string>",
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    unsafe_fixes: bool = False,
) -> str:
    """`source` with every allowed fix applied, to a fixed point."""
    return fix_text(source, path, _rules(select, ignore), unsafe_fixes=unsafe_fixes).source


@dataclass(frozen=True)
class Mode:
    """What to do with each file: report only, fix in place, or compute fixes without writing."""

    fix: bool = False
    unsafe_fixes: bool = False
    write: bool = True


def process_source(source: str, path: str, rules: Sequence[type[Rule]], mode: Mode) -> FileResult:
    result = FileResult(path)
    try:
        if mode.fix:
            outcome = fix_text(source, path, rules, unsafe_fixes=mode.unsafe_fixes)
            result.original_source = source
            result.fixed_source = outcome.source
            result.fixed_count = outcome.fixed_count
            result.fix_problems = outcome.problems
            result.diagnostics = outcome.remaining.diagnostics
        else:
            result.diagnostics = analyse(source, path, rules).diagnostics
    except SourceError as error:
        result.error = str(error)
    return result


def process_file(path: str, rules: Sequence[type[Rule]], mode: Mode) -> FileResult:
    try:
        decoded, raw = read_source(path)
    except SourceError as error:
        return FileResult(path, error=str(error))
    result = process_source(decoded.text, path, rules, mode)
    if result.error is None and mode.fix and mode.write and result.changed:
        try:
            write_atomically(path, result.fixed_source, decoded, raw)  # type: ignore[arg-type]
        except SourceError as error:
            result.error = str(error)
            result.fixed_count = 0
    return result


def lint_paths(
    paths: Sequence[str],
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    fix: bool = False,
    unsafe_fixes: bool = False,
) -> Iterator[FileResult]:
    """Lint (or fix in place) every Python file under `paths`, one result per file in path order."""
    rules = _rules(select, ignore)
    mode = Mode(fix=fix, unsafe_fixes=unsafe_fixes)
    for target in discover(paths):
        if target.error is not None:
            yield FileResult(target.path, error=target.error)
        else:
            yield process_file(target.path, rules, mode)
