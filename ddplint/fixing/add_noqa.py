"""`--add-noqa`: write `# noqa: DDP00x` where ddplint reports, to adopt it in a big codebase.

The comment goes at the end of the statement's last line (a noqa comment covers every line of
the statement it ends, see ddplint/engine/noqa.py), so it never lands inside a multi-line string.
An existing `# noqa: X` on that line is merged with the new codes; a bare `# noqa` is kept.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence

from ddplint.core.diagnostics import Diagnostic
from ddplint.core.lines import split_lines

_NOQA = re.compile(r"#\s*noqa(?P<colon>:\s?(?P<codes>[A-Z][0-9A-Z]*(?:[,\s]+[A-Z][0-9A-Z]*)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z][0-9A-Z]*", re.IGNORECASE)


def add_noqa(source: str, diagnostics: Sequence[Diagnostic]) -> tuple[str, int]:
    """`source` with noqa comments for `diagnostics`, and how many lines were changed."""
    tokens = _tokens(source)
    statement_end = _statement_ends(tokens)
    comments = {token.start[0]: token.start[1] for token in tokens if token.type == tokenize.COMMENT}
    wanted: dict[int, set[str]] = {}
    for diagnostic in diagnostics:
        wanted.setdefault(statement_end.get(diagnostic.line, diagnostic.line), set()).add(diagnostic.code)
    lines = split_lines(source, keepends=True)
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
    return "".join(lines), changed


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


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(source).readline))
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
