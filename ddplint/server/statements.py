"""Parse an edited buffer again by reusing the trees of the top-level statements that did not
change: a keystroke in a 1,500-line file re-parses one function, not the file.

libcst trees are immutable, so a statement parsed for one version of the buffer can stand in
the module of the next. CPython's `ast` (a tenth of libcst's cost) finds where each top-level
statement starts and ends; the text from the end of one statement to the end of the next is a
chunk, parsed on its own and cached by its text. The comments and blank lines at the top of a
chunk become its first statement's leading lines, as libcst itself would attach them. Where
the chunks do not agree on the layout libcst infers per module (indent, newline), or anything
else is unusual, the whole text is parsed the ordinary way.
"""

from __future__ import annotations

import ast
import warnings

import libcst as cst

from ddplint.engine import parse
from ddplint.screens import Facts


class StatementCache:
    """A `parser` for `ddplint.engine.analyse` that remembers the chunks of the last parse."""

    def __init__(self) -> None:
        self._chunks: dict[str, cst.Module] = {}
        self._tree: tuple[str, ast.Module | None] | None = None  # the last text's `ast`
        self.reused = 0  # chunks taken from the cache by the last parse (for tests and benchmarks)

    def facts(self, source: str) -> Facts | None:
        """The rules' screen facts for `source`, from the same `ast` the chunks are cut with."""
        tree = self._ast(source)
        return None if tree is None else Facts(tree)

    def _ast(self, source: str) -> ast.Module | None:
        if self._tree is None or self._tree[0] is not source:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # invalid escape sequences and the like
                    self._tree = (source, ast.parse(source))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = (source, None)
        return self._tree[1]

    def __call__(self, source: str) -> cst.Module:
        tree = self._ast(source)
        chunks = None if tree is None else _chunks(source, tree)
        if chunks is None or len(chunks) < 2:
            self._chunks.clear()
            return parse(source)
        parsed: dict[str, cst.Module] = {}
        self.reused = 0
        for chunk in chunks:
            if chunk in parsed:
                continue
            if chunk in self._chunks:
                parsed[chunk] = self._chunks[chunk]
                self.reused += 1
            else:
                parsed[chunk] = parse(chunk)
        self._chunks = parsed
        module = _assemble([parsed[chunk] for chunk in chunks])
        return module if module is not None else parse(source)


def _chunks(source: str, tree: ast.Module) -> list[str] | None:
    """The source cut after each top-level statement's last line (statements sharing a line
    stay together)."""
    lines = source.splitlines(keepends=True)
    if "".join(lines) != source:
        return None
    cuts: list[int] = []
    for statement in tree.body:
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        if cuts and first <= cuts[-1]:
            cuts[-1] = max(cuts[-1], statement.end_lineno or first)
        else:
            cuts.append(statement.end_lineno or first)
    if not cuts:
        return None
    cuts[-1] = len(lines)  # the last chunk keeps the comments at the end of the file
    chunks, start = [], 0
    for cut in cuts:
        chunks.append("".join(lines[start:cut]))
        start = cut
    return chunks


def _assemble(modules: list[cst.Module]) -> cst.Module | None:
    first, last = modules[0], modules[-1]
    layout = (first.default_indent, first.default_newline)
    body: list[cst.BaseStatement] = []
    for index, module in enumerate(modules):
        if (module.default_indent, module.default_newline) != layout or not module.body:
            return None
        if index < len(modules) - 1 and (module.footer or not module.has_trailing_newline):
            return None
        statements = list(module.body)
        if index > 0 and module.header:
            statements[0] = statements[0].with_changes(leading_lines=[*module.header, *statements[0].leading_lines])
        body.extend(statements)
    return first.with_changes(body=body, footer=last.footer, has_trailing_newline=last.has_trailing_newline)
