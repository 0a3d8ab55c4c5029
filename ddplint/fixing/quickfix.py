"""Fixes as text: one finding's fix, all allowed fixes, or a `# noqa` for one finding.

The command line rewrites whole files; an editor wants each change as one small text edit
it can apply to its buffer and undo. Each function here returns the new text, and
`changed_span` reduces an (old, new) pair to the one span that differs.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence

from ddplint.core.diagnostics import Diagnostic, Edit
from ddplint.core.lines import split_lines


def offsets(source: str) -> list[int]:
    """The offset at which each line (1-based, index 0 unused) starts."""
    starts = [0, 0]
    for line in split_lines(source, keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], line: int, col: int) -> int:
    return (starts[line] if line < len(starts) else starts[-1]) + col - 1


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """`source` with `edits` (spans of `source`, which must not overlap) replaced."""
    starts = offsets(source)
    spans = sorted(
        ((_offset(starts, e.line, e.col), _offset(starts, e.end_line, e.end_col), e.content) for e in edits),
        reverse=True,
    )
    for start, end, content in spans:
        source = source[:start] + content + source[end:]
    return source


def with_imports(source: str, statements: Sequence[str]) -> str:
    """`source` with the import statements it lacks added where `--fix` adds them."""
    if not statements:
        return source
    from ddplint.engine.lint import parse
    from ddplint.fixing.fixer import add_imports

    return add_imports(parse(source), statements).code


def apply_fix(source: str, diagnostic: Diagnostic) -> str:
    """`source` with just this finding's fix (edits and imports) applied."""
    if diagnostic.fix is None:
        return source
    return with_imports(apply_edits(source, diagnostic.fix.edits), diagnostic.fix.imports)


def import_edit(source: str, statements: Sequence[str]) -> Edit | None:
    """The insertion that adds `statements` to `source` as `--fix` would, as one Edit."""
    new = with_imports(source, statements)
    if new == source:
        return None
    start, end, content = changed_span(source, new)
    # Whole lines read better in an editor's preview than "resource\n\nimport " after "import ".
    line_start = source.rfind("\n", 0, start) + 1
    content, start = source[line_start:start] + content, line_start
    kept = source[start:end]
    if kept and content.endswith(kept):  # an insertion before the line, not a change within it
        content, end = content[: -len(kept)], start
    starts = offsets(source)
    (line, col), (end_line, end_col) = _position(starts, start), _position(starts, end)
    return Edit(line, col, end_line, end_col, content)


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    line = max(1, bisect.bisect_right(starts, offset, lo=1) - 1)
    return line, offset - starts[line] + 1


def with_noqa(source: str, diagnostic: Diagnostic) -> str:
    """`source` with `# noqa: CODE` where `--add-noqa` would write it for this finding."""
    from ddplint.fixing.add_noqa import add_noqa

    return add_noqa(source, [diagnostic]).source


def changed_span(old: str, new: str) -> tuple[int, int, str]:
    """(start, end, text): replacing old[start:end] with text turns `old` into `new`."""
    start = len(os.path.commonprefix([old, new]))
    tail = len(os.path.commonprefix([old[start:][::-1], new[start:][::-1]]))
    return start, len(old) - tail, new[start : len(new) - tail]
