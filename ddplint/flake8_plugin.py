"""flake8 entry point `DDP`: a thin adapter over the engine.

flake8 hands every plugin the file's lines and its `ast` tree. ddplint checks the rules'
needles against the text and their screens against that tree, both from a generated index
that does not import libcst; only when some rule can fire does it import the engine and parse
the lines with libcst. flake8 owns noqa, `--select`/`--ignore`, per-file-ignores and output;
the plugin runs every rule.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from ddplint import __version__


class Flake8Plugin:
    name = "ddplint"
    version = __version__

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from ddplint.prefilter.needles import needles_match
        from ddplint.prefilter.index import NEEDLES, SCREENS
        from ddplint.prefilter.screens import Facts

        source = "".join(self.lines)
        codes = [code for code, needles in NEEDLES.items() if needles_match(needles, source)]
        if not codes:
            return  # no rule's needles occur: libcst is never imported for this file
        facts = Facts(self.tree)
        if all(SCREENS[code] is not None for code in codes) and not any(SCREENS[code].holds(facts) for code in codes):
            return  # the ast shows no rule's construct: libcst is not needed either
        from ddplint.engine import SourceError, analyse
        from ddplint.rules import all_rules

        try:
            analysis = analyse(source, self.filename, all_rules(), honour_noqa=False, facts=facts)
        except SourceError:
            return  # flake8 reports syntax errors itself (E999)
        for diagnostic in analysis.diagnostics:
            yield diagnostic.line, diagnostic.col - 1, f"{diagnostic.code} {diagnostic.message}", type(self)
