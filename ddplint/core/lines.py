"""Lines as Python counts them.

The tokenizer, `ast` and libcst end a line at \\n, \\r\\n or a lone \\r only; `str.splitlines`
also ends one at a form feed (a page break on a line of its own, in GNU-style files), \\x0b,
\\x1c-\\x1e, \\x85, \\u2028 and \\u2029, which a line of code may hold in a comment or a string.
Every line number ddplint computes from text comes from here, so that it is libcst's.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(source: str, keepends: bool = False) -> list[str]:
    """`source.splitlines(keepends)`, but a line ends at \\n, \\r\\n or \\r only."""
    found = _LINE.findall(source)
    return found if keepends else [line.rstrip("\r\n") for line in found]


def tokenizer_readline(lines: list[str]):
    """A `readline` over `lines` (from `split_lines(..., keepends=True)`) for `tokenize`, which
    reads a line that ends in a lone \\r as unfinished: it is given that line ending in \\n, so
    that its token positions are the lines counted here."""
    fed = iter(line[:-1] + "\n" if line.endswith("\r") else line for line in lines)
    return lambda: next(fed, "")
