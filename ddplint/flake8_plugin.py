"""flake8 entry point `DDP`: a thin adapter over the engine.

flake8 already builds an `ast` tree for its own checks; ddplint needs a libcst tree, so it asks
flake8 only for the lines and parses them itself, and only when a rule's needles occur. flake8
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
        from ddplint.engine import SourceError, analyse
        from ddplint.rules import all_rules

        source = "".join(self.lines)
        try:
            analysis = analyse(source, self.filename, all_rules(), honour_noqa=False)
        except SourceError:
            return  # flake8 reports syntax errors itself (E999)
        for diagnostic in analysis.diagnostics:
            yield diagnostic.line, diagnostic.col - 1, f"{diagnostic.code} {diagnostic.message}", type(self)
