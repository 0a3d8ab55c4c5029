"""flake8 entry point `DDP`: a thin adapter over the engine.

flake8 already builds an `ast` tree for its own checks; ddplint needs a libcst tree, so it asks
flake8 only for the lines and parses them itself, and only when a rule's needles occur. The
needles come from a generated index, so a file no rule can flag does not even import libcst. flake8
owns noqa, `--select`/`--ignore`, per-file-ignores and output; the plugin runs every rule.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ddplint import __version__


class Flake8Plugin:
    name = "ddplint"
    version = __version__

    # flake8 runs a plugin once per file only if it takes `tree`; the ast itself goes unused.
    def __init__(self, tree: object, lines: Sequence[str], filename: str) -> None:
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from ddplint.needles import needles_match
        from ddplint.rules._needles import NEEDLES

        source = "".join(self.lines)
        if not any(needles_match(needles, source) for needles in NEEDLES.values()):
            return  # no rule can fire: libcst is never imported for this file
        from ddplint.engine import SourceError, analyse
        from ddplint.rules import all_rules

        try:
            analysis = analyse(source, self.filename, all_rules(), honour_noqa=False)
        except SourceError:
            return  # flake8 reports syntax errors itself (E999)
        for diagnostic in analysis.diagnostics:
            yield diagnostic.line, diagnostic.col - 1, f"{diagnostic.code} {diagnostic.message}", type(self)
