"""flake8 entry point `DDP`: a thin adapter over the engine.

flake8 hands every plugin the file's lines and its `ast` tree. ddplint checks the rules'
needles against the text and their screens against that tree, both from a generated index
that does not import libcst; only when some rule can fire does it import the engine and parse
the lines with libcst. flake8 owns `--select`/`--ignore`, per-file-ignores and output; the
plugin runs every rule.

flake8 honours a `# noqa` only on the line a finding is reported on; ddplint's reach is the
whole statement the comment ends (see ddplint/engine/noqa.py). So the plugin applies ddplint's noqa
itself, unless flake8 runs with `--disable-noqa`: `torch.load(\\n    path)  # noqa: DDP004`
is then quiet through flake8 as on the command line.


The file's project index (ddplint.model.project) is built once per flake8 process and project root,
from the project's own cache (`<root>/.ddplint_cache`) where it is up to date, so a keystroke
in an editor re-reads only the index; `--ddplint-no-project` (or DDPLINT_NO_PROJECT=1) lints
each file alone, and `--ddplint-no-cache` (or DDPLINT_NO_CACHE=1) builds the index without
reading or writing that cache.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Sequence

from ddplint import __version__
from ddplint.core.switches import SwitchError, env_switch, switch


class _On(argparse.Action):
    """`--ddplint-no-X` on flake8's command line turns X off. In flake8's config file its value
    is kept as text (flake8 reads a `store_true` option with configparser's getboolean, which
    answers a word such as `maybe` with a traceback) for `parse_options` to check."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=False, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, True)


class Flake8Plugin:
    name = "ddplint"
    version = __version__

    disable_noqa = False
    no_project = False
    no_cache = False

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager) -> None:
        manager.add_option(
            "--ddplint-no-project",
            action=_On,
            parse_from_config=True,
            help="ddplint: lint each file alone, without the index of its project's other modules (or DDPLINT_NO_PROJECT=1)",
        )
        manager.add_option(
            "--ddplint-no-cache",
            action=_On,
            parse_from_config=True,
            help="ddplint: neither read nor write the project's cache, <root>/.ddplint_cache (or DDPLINT_NO_CACHE=1)",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        """A value that is not yes or no, in flake8's config or the environment, is one line on
        stderr and exit 2, as a bad `[tool.ddplint]` is on the command line."""
        cls.disable_noqa = bool(getattr(options, "disable_noqa", False))
        try:
            cls.no_project = switch(getattr(options, "ddplint_no_project", False), "ddplint-no-project")
            cls.no_project = cls.no_project or env_switch("DDPLINT_NO_PROJECT")
            cls.no_cache = switch(getattr(options, "ddplint_no_cache", False), "ddplint-no-cache")
            cls.no_cache = cls.no_cache or env_switch("DDPLINT_NO_CACHE")
        except SwitchError as error:
            print(f"flake8: ddplint: {error}", file=sys.stderr)
            raise SystemExit(2) from None

    def _project(self):
        if self.no_project:
            return None
        from ddplint.model.project import for_file

        try:
            project = for_file(self.filename, cache=not self.no_cache)
        except Exception:  # an index that cannot be built only costs the cross-module findings
            return None
        return project.view(self.filename) if project is not None else None

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from ddplint.prefilter.needles import TextScan
        from ddplint.prefilter.index import NEEDLES, OPENED_BY, SCREENED_BY, SCREENS, UNSCREENED_BY
        from ddplint.prefilter.screens import Facts

        source = "".join(self.lines)
        view = self._project()
        hints = view.hints() if view is not None else None
        if hints is None:
            scan = TextScan(source)
            codes = [code for code, needles in NEEDLES.items() if scan.matches(needles)]
        else:
            scan = hints.scan(source)
            codes = [
                code
                for code, needles in NEEDLES.items()
                if hints.feeds(code) or hints.passes_needles(OPENED_BY.get(code, frozenset()), needles, scan)
            ]
        if not codes:
            return  # no rule's needles occur: libcst is never imported for this file
        facts = Facts(self.tree) if hints is None else hints.patch(Facts(self.tree))
        # a rule's project screen (Rule.project_screen) is left to `analyse`
        unscreened = hints is not None and any(
            hints.unscreened(UNSCREENED_BY.get(code, frozenset()) | SCREENED_BY.get(code, frozenset())) or hints.feeds(code)
            for code in codes
        )
        if not unscreened and all(SCREENS[code] is not None for code in codes) and not any(
            SCREENS[code].holds(facts) for code in codes
        ):
            return  # the ast shows no rule's construct: libcst is not needed either
        from ddplint.engine.lint import SourceError, analyse
        from ddplint.rules import all_rules

        try:
            analysis = analyse(
                source, self.filename, all_rules(), honour_noqa=not self.disable_noqa, facts=facts, project=view
            )
        except SourceError:
            return  # flake8 reports syntax errors itself (E999)
        for diagnostic in analysis.diagnostics:
            yield diagnostic.line, diagnostic.col - 1, f"{diagnostic.code} {diagnostic.message}", type(self)
