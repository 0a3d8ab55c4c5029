"""`--add-noqa`: write `# noqa: DDP00x` where ddplint reports, to adopt it in a big codebase.

The comment goes at the end of the statement's last line (a noqa comment covers every line of
the statement it ends, see ddplint/engine/noqa.py), so it never lands inside a multi-line string.
An existing `# noqa: X` on that line is merged with the new codes; a bare `# noqa` is kept.

What is written is checked, not assumed: a finding whose comment would not reach it (as
ddplint/engine/noqa.py reads comments), or whose comment would change the code (a line that
ends inside a string), is left without one and returned with the reason, so that the caller
can say which findings remain.
"""

from __future__ import annotations

import ast
import re
import tokenize
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from ddplint.core.diagnostics import Diagnostic
from ddplint.core.lines import split_lines, tokenizer_readline
from ddplint.engine.noqa import Suppressions

_NOQA = re.compile(r"#\s*noqa(?P<colon>:\s?(?P<codes>[A-Z][0-9A-Z]*(?:[,\s]+[A-Z][0-9A-Z]*)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z][0-9A-Z]*", re.IGNORECASE)


@dataclass(frozen=True)
class Unplaced:
    """A finding that got no noqa comment, and why."""

    diagnostic: Diagnostic
    reason: str


@dataclass(frozen=True)
class Placed:
    source: str  # the text with the comments
    changed: int  # lines changed
    unplaced: list[Unplaced]


def add_noqa(source: str, diagnostics: Sequence[Diagnostic]) -> Placed:
    """`source` with noqa comments for `diagnostics`, how many lines changed, and the findings
    that no comment covers."""
    lines = split_lines(source, keepends=True)
    tokens = _tokens(lines)  # where they do not tokenize, each comment goes on the finding's line
    statement_end = _statement_ends(tokens)
    comments = {token.start[0]: token.start[1] for token in tokens if token.type == tokenize.COMMENT}
    wanted: dict[int, set[str]] = {}
    for diagnostic in diagnostics:
        wanted.setdefault(statement_end.get(diagnostic.line, diagnostic.line), set()).add(diagnostic.code)
    changed = 0
    for number, codes in wanted.items():
        if number > len(lines):
            continue
        text = lines[number - 1]
        body = text.rstrip("\r\n")
        new = _with_codes(body, codes, comments.get(number))
        if new != body:
            lines[number - 1] = new + text[len(body) :]
            changed += 1
    new_source = "".join(lines)
    problem = _changed_code(source, new_source) if changed else None
    if problem is not None:
        return Placed(source, 0, [Unplaced(diagnostic, problem) for diagnostic in diagnostics])
    suppressions = Suppressions(new_source)
    unplaced = [Unplaced(d, _why_not(d.line, statement_end, len(lines))) for d in diagnostics if not suppressions.covers(d.line, d.code)]
    return Placed(new_source, changed, unplaced)


def _why_not(line: int, statement_end: dict[int, int], count: int) -> str:
    if line > count:
        return f"line {line} is past the end of the file ({count} lines)"
    return f"a noqa comment on line {statement_end.get(line, line)} does not reach line {line}"


def _changed_code(old: str, new: str) -> str | None:
    """Why the comments added to `old` cannot be written, or None where they left the code as
    it was (CPython's tree holds no comments)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            before = ast.dump(ast.parse(old))
            after = ast.dump(ast.parse(new))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "CPython cannot parse the file, so what the comments would change cannot be checked"
    if before != after:
        return "a comment at the end of its statement would change the code (a line there ends inside a string)"
    return None


def _with_codes(line: str, codes: set[str], comment_at: int | None) -> str:
    comment = line[comment_at:] if comment_at is not None else ""
    match = _NOQA.search(comment)
    if match is None:
        return f"{line.rstrip()}  # noqa: {', '.join(sorted(codes))}"
    if match.group("codes") is None and not match.group("colon"):
        return line  # a bare noqa already covers every code
    existing = [code.upper() for code in _CODE.findall(match.group("codes"))]
    merged = existing + sorted(codes - set(existing))
    if merged == existing:
        return line
    start = comment_at + match.start()  # type: ignore[operator]
    end = comment_at + match.end()  # type: ignore[operator]
    return f"{line[:start]}# noqa: {', '.join(merged)}{line[end:]}"


def _tokens(lines: list[str]) -> list[tokenize.TokenInfo]:
    """The file's tokens, read line by line as Python counts lines (ddplint.core.lines)."""
    try:
        return list(tokenize.generate_tokens(tokenizer_readline(lines)))
    except (tokenize.TokenError, SyntaxError):
        return []


def _statement_ends(tokens: list[tokenize.TokenInfo]) -> dict[int, int]:
    """Physical line -> the last physical line of the logical line it belongs to."""
    ends: dict[int, int] = {}
    start = None
    for token in tokens:
        if start is None and token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            start = token.start[0]
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) and start is not None:
            for number in range(start, token.start[0] + 1):
                ends[number] = token.start[0]
            start = None
    return ends
