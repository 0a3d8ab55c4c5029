"""`# noqa` and `# noqa: DDP004,DDP005` comments, with flake8's reach.

flake8 applies a noqa comment to every physical line of the logical line it ends, so that
`torch.load(\\n    path)  # noqa: DDP004` suppresses a finding reported on the first line.
ddplint does the same, so the CLI and the flake8 plugin agree.

Only the top-level statement that holds a finding is tokenized, and only when a noqa comment
other than the finding's own line is in it (a logical line never spans two top-level
statements): one finding in a large file with a noqa elsewhere costs a text scan, not a
tokenization of the whole file.

A comment line `# flake8: noqa` or `# ddplint: noqa` exempts the whole file, as in flake8;
`# ddplint: noqa: DDP004` (or the flake8 spelling) exempts the codes it names, file-wide, as
ruff reads it. flake8 itself skips the whole file for `# flake8: noqa: <codes>` whatever the
codes, so there (and only there) it shows fewer findings than `ddplint check`.
"""

from __future__ import annotations

import bisect
import re
import tokenize

from ddplint.core.lines import split_lines, tokenizer_readline

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][0-9A-Z]*(?:[,\s]+[A-Z][0-9A-Z]*)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(
    r"^\s*#\s*(?:flake8|ddplint)[:=]\s*noqa(?::\s?(?P<codes>[A-Z][0-9A-Z]*(?:[,\s]+[A-Z][0-9A-Z]*)*))?",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Z][0-9A-Z]*", re.IGNORECASE)

ALL = None  # a bare `# noqa`
_LONE_CR = re.compile(r"\r(?!\n)")


class Suppressions:
    def __init__(self, source: str) -> None:
        self._source = source
        self._lines = split_lines(source, keepends=True)
        # physical line -> set of code prefixes, or ALL: the comment on the line, and those
        # on the rest of its logical line once its top-level statement is tokenized
        self._whole_file = self._file_exemption(self._lines)
        self._comments = self._noqa_comments(self._lines)
        self._by_line = dict(self._comments)
        self._starts: list[int] | None = None  # 0-based first line of each top-level statement
        self._tokenized: set[int] = set()  # those whose logical lines are spread

    def covers(self, line: int, code: str) -> bool:
        if self._whole_file is ALL or (self._whole_file and code.startswith(tuple(self._whole_file))):
            return True
        if self._comments:
            self._spread_over_statement_of(line)
        if line not in self._by_line:
            return False
        codes = self._by_line[line]
        return codes is ALL or any(code.startswith(prefix) for prefix in codes)

    @staticmethod
    def _file_exemption(lines: list[str]) -> frozenset[str] | None:
        """The codes a file-level comment exempts: ALL, some prefixes, or none (empty)."""
        exempt: list[frozenset[str] | None] = []
        for text in lines:
            if "noqa" in text.lower() and (match := _FILE_NOQA.match(text)):
                codes = match.group("codes")
                exempt.append(ALL if codes is None else frozenset(c.upper() for c in _CODE.findall(codes)))
        return Suppressions._merge(exempt) if exempt else frozenset()

    @staticmethod
    def _noqa_comments(lines: list[str]) -> dict[int, frozenset[str] | None]:
        found: dict[int, frozenset[str] | None] = {}
        for number, text in enumerate(lines, start=1):
            if "noqa" not in text.lower():
                continue
            match = _NOQA.search(text)
            if match is None:
                continue
            codes = match.group("codes")
            found[number] = ALL if codes is None else frozenset(c.upper() for c in _CODE.findall(codes))
        return found

    def _spread_over_statement_of(self, line: int) -> None:
        if self._starts is None:
            self._starts = self._statement_starts()
        index = bisect.bisect_right(self._starts, line - 1) - 1
        first = self._starts[index] if index >= 0 else 0
        last = self._starts[index + 1] if index + 1 < len(self._starts) else len(self._lines)
        if index in self._tokenized or not any(first < n <= last and n != line for n in self._comments):
            return
        self._tokenized.add(index)
        if not self._spread_over_logical_lines(first, last):  # the scan misread the file
            self._starts, self._tokenized = [0], {0}
            self._spread_over_logical_lines(0, len(self._lines))

    def _statement_starts(self) -> list[int]:
        from ddplint.engine.lint import top_level_starts  # loaded already: only the engine asks

        if _LONE_CR.search(self._source):  # the scan counts lines at \n only: one statement, the file
            return [0]
        return top_level_starts(self._source)[0]

    def _spread_over_logical_lines(self, first: int, last: int) -> bool:
        """Merge the comments of each logical line of lines `first` to `last` (0-based, last
        excluded) over its lines; False if they do not tokenize."""
        comments = self._comments
        try:
            tokens = list(tokenize.generate_tokens(tokenizer_readline(self._lines[first:last])))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return False
        start = None
        for token in tokens:
            if start is None and token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                start = token.start[0] + first
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) and start is not None:
                end = token.start[0] + first
                in_range = [comments[n] for n in range(start, end + 1) if n in comments]
                if in_range and end > start:
                    merged = self._merge(in_range)
                    for number in range(start, end + 1):
                        self._by_line[number] = self._merge([self._by_line.get(number, frozenset()), merged])
                start = None
        return True

    @staticmethod
    def _merge(entries: list[frozenset[str] | None]) -> frozenset[str] | None:
        if any(entry is ALL for entry in entries):
            return ALL
        return frozenset().union(*entries)  # type: ignore[arg-type]
