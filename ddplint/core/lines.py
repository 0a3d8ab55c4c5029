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
