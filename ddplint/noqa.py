"""`# noqa` and `# noqa: DDP004,DDP005` comments, with flake8's reach.

flake8 applies a noqa comment to every physical line of the logical line it ends, so that
`torch.load(\\n    path)  # noqa: DDP004` suppresses a finding reported on the first line.
ddplint does the same, so the CLI and the flake8 plugin agree.
"""

from __future__ import annotations

import io
import re
import tokenize

from ddplint.lines import split_lines

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][0-9A-Z]*(?:[,\s]+[A-Z][0-9A-Z]*)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z][0-9A-Z]*", re.IGNORECASE)

ALL = None  # a bare `# noqa`


class Suppressions:
    def __init__(self, source: str) -> None:
        # physical line -> set of code prefixes, or ALL
        self._by_line: dict[int, frozenset[str] | None] = {}
        comments = self._noqa_comments(source)
        if comments:
            self._spread_over_logical_lines(source, comments)

    def covers(self, line: int, code: str) -> bool:
        if line not in self._by_line:
            return False
        codes = self._by_line[line]
        return codes is ALL or any(code.startswith(prefix) for prefix in codes)

    @staticmethod
    def _noqa_comments(source: str) -> dict[int, frozenset[str] | None]:
        found: dict[int, frozenset[str] | None] = {}
        for number, text in enumerate(split_lines(source), start=1):
            if "noqa" not in text.lower():
                continue
            match = _NOQA.search(text)
            if match is None:
                continue
            codes = match.group("codes")
            found[number] = ALL if codes is None else frozenset(c.upper() for c in _CODE.findall(codes))
        return found

    def _spread_over_logical_lines(self, source: str, comments: dict[int, frozenset[str] | None]) -> None:
        self._by_line.update(comments)
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return
        start = None
        for token in tokens:
            if start is None and token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                start = token.start[0]
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) and start is not None:
                end = token.start[0]
                in_range = [comments[n] for n in range(start, end + 1) if n in comments]
                if in_range and end > start:
                    merged = self._merge(in_range)
                    for number in range(start, end + 1):
                        self._by_line[number] = self._merge([self._by_line.get(number, frozenset()), merged])
                start = None

    @staticmethod
    def _merge(entries: list[frozenset[str] | None]) -> frozenset[str] | None:
        if any(entry is ALL for entry in entries):
            return ALL
        return frozenset().union(*entries)  # type: ignore[arg-type]
