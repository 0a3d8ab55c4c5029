"""flake8 entry point `DDP`: a thin adapter over the engine.

flake8 hands every plugin the file's lines and its `ast` tree. ddplint checks the rules'
needles against the text and their screens against that tree, both from a generated index
that does not import libcst; only when some rule can fire does it import the engine and parse
the lines with libcst. flake8 owns `--select`/`--ignore`, per-file-ignores and output; the
plugin runs every rule.

flake8 honours a `# noqa` only on the line a finding is reported on; ddplint's reach is the
whole statement the comment ends (see ddplint/noqa.py). So the plugin applies ddplint's noqa
itself, unless flake8 runs with `--disable-noqa`: `torch.load(\\n    path)  # noqa: DDP004`
is then quiet through flake8 as on the command line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from ddplint import __version__


class Flake8Plugin:
    name = "ddplint"
    version = __version__

    disable_noqa = False

    @classmethod
    def parse_options(cls, options) -> None:
        cls.disable_noqa = bool(getattr(options, "disable_noqa", False))

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
            analysis = analyse(source, self.filename, all_rules(), honour_noqa=not self.disable_noqa, facts=facts)
        except SourceError:
            return  # flake8 reports syntax errors itself (E999)
        for diagnostic in analysis.diagnostics:
            yield diagnostic.line, diagnostic.col - 1, f"{diagnostic.code} {diagnostic.message}", type(self)
