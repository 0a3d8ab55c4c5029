"""Parse an edited buffer again by reusing the trees of the top-level statements that did not
change: a keystroke in a 1,500-line file re-parses one function, not the file.

libcst trees are immutable, so a statement parsed for one version of the buffer can stand in
the module of the next. CPython's `ast` (a tenth of libcst's cost) finds where each top-level
statement starts and ends; the text from the end of one statement to the end of the next is a
chunk, parsed on its own and cached by its text. The comments and blank lines at the top of a
chunk become its first statement's leading lines, as libcst itself would attach them. Where
the chunks do not agree on the layout libcst infers per module (indent, newline), or anything
else is unusual, the whole text is parsed the ordinary way.

The `ast` is not parsed whole either: the statements that begin both the last text that parsed
and this one (top-level ones, and in a class that the edit is in, the class's own) are kept,
and only the text after them is parsed, on the lines it is on. Where CPython cannot parse that
(a half-typed line), libcst is asked about the same text only; both stop at the first error,
so a keystroke costs the text from the edited statement on, not the file.
"""

from __future__ import annotations

import ast
import copy
import itertools
import warnings

import libcst as cst

from ddplint.engine.lint import parse
from ddplint.core.lines import split_lines
from ddplint.fixing.quickfix import offsets
from ddplint.prefilter.screens import Facts


class StatementCache:
    """A `parser` for `ddplint.engine.lint.analyse` that remembers the chunks of the last parse."""

    def __init__(self) -> None:
        self._chunks: dict[str, cst.Module] = {}
        # The last text asked about and its ast, or None and the rest of it that CPython could
        # not parse (see _split); the last text that parsed, its ast, its line offsets.
        self._tree: tuple[str, ast.Module | None, str] | None = None
        self._parsed: tuple[str, ast.Module, list[int]] | None = None
        self._module: tuple[str, cst.Module] | None = None  # the last text's libcst tree
        self.reused = 0  # chunks taken from the cache by the last parse (for tests and benchmarks)

    def facts(self, source: str) -> Facts | None:
        """The rules' screen facts for `source`, from the same `ast` the chunks are cut with."""
        tree = self._ast(source)
        return None if tree is None else Facts(tree)

    def _ast(self, source: str) -> ast.Module | None:
        if self._tree is None or self._tree[0] is not source:
            kept, owner, members, line, offset = self._split(source)
            head = _STAND_IN if owner is not None else ""
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # invalid escape sequences and the like
                    # The rest of the text, on the lines it is on.
                    rest = ast.parse("\n" * (line - bool(head)) + head + source[offset:]).body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = (source, None, head + source[offset:])
            else:
                if owner is not None:  # the class the change is in, its own statements in front
                    stand_in = rest.pop(0)
                    whole = copy.copy(owner)
                    whole.body = [*members, *stand_in.body]  # type: ignore[attr-defined]
                    whole.end_lineno, whole.end_col_offset = stand_in.end_lineno, stand_in.end_col_offset
                    rest.insert(0, whole)
                tree = ast.Module(body=[*kept, *rest], type_ignores=[])
                self._tree = (source, tree, "")
                self._parsed = (source, tree, offsets(source))
        return self._tree[1]

    def _split(self, source: str) -> tuple[list[ast.stmt], ast.ClassDef | None, list[ast.stmt], int, int]:
        """Where `source` parses as the last text that parsed did: (the top-level statements it
        still begins with, the class the change is in and the statements of its body it
        still begins with, or None and []; the line they end on, the offset after it).
        The text after them parses alone just as it does after them (in a stand-in class
        where they are a class's): they end in a complete statement, and what follows is not
        a clause of theirs (an `else:`) since the last statement kept is followed by one that
        is unchanged and was a statement of its own before (so at the top level the last
        statement that is unchanged is not kept)."""
        if self._parsed is None:
            return [], None, [], 0, 0
        _, tree, after = self._parsed
        ends, same = self._same(source, tree.body)
        before = _up_to(tree.body, ends[same - 1] if same else 0)
        changed = tree.body[len(before)] if len(before) < len(tree.body) else None
        if isinstance(changed, ast.ClassDef) and changed.body[0].lineno > changed.lineno:
            inner, inside = self._same(source, changed.body)
            if inside >= 2:
                line = inner[inside - 2]
                return before, changed, _up_to(changed.body, line), line, after[line + 1]
        if same < 2:
            return [], None, [], 0, 0
        line = ends[same - 2]
        return _up_to(tree.body, line), None, [], line, after[line + 1]

    def _same(self, source: str, body: list[ast.stmt]) -> tuple[list[int], int]:
        """The lines that the runs of `body` (statements of the last text that parsed, those
        sharing a line together) end on, and how many of those runs begin `source` unchanged."""
        assert self._parsed is not None
        previous, _, after = self._parsed
        ends = _cuts(body)
        low, high = 0, len(ends)
        while low < high:
            middle = (low + high + 1) // 2
            if source.startswith(previous[: after[ends[middle - 1] + 1]]):
                low = middle
            else:
                high = middle - 1
        return ends, low

    def __call__(self, source: str) -> cst.Module:
        if self._module is not None and self._module[0] is source:
            return self._module[1]
        module = self._assembled(source)
        self._module = (source, module)
        return module

    def _assembled(self, source: str) -> cst.Module:
        tree = self._ast(source)
        if tree is None:  # CPython cannot parse it, a half-typed line most often; libcst decides
            parse(self._tree[2], explain=False)  # what CPython failed on: fails where the whole text does
            return parse(source, explain=False)
        chunks = _chunks(source, tree)
        if chunks is None or len(chunks) < 2:
            self._chunks.clear()
            return parse(source)
        parsed: dict[str, cst.Module] = {}
        self.reused = 0
        modules = []
        for chunk in chunks:
            parts = [self._parse(text, parsed) for text in chunk]
            module = parts[0] if len(parts) == 1 else _class_module(parts)
            modules.append(module if module is not None else parse(_text(chunk)))
        self._chunks = parsed
        module = _assemble(modules)
        return module if module is not None else parse(source)

    def _parse(self, text: str, parsed: dict[str, cst.Module]) -> cst.Module:
        if text in parsed:  # a text met twice in one file: each its own nodes, or both get one position
            return parse(text)
        if text in self._chunks:
            parsed[text] = self._chunks[text]
            self.reused += 1
        else:
            parsed[text] = parse(text)
        return parsed[text]


# A class longer than this is cut into its statements too: one method edited in a class of a
# thousand lines then re-parses that method. Each later statement is parsed inside a stand-in
# class header, so its text (and any multi-line string in it) keeps its indentation.
CLASS_SPLIT_LINES = 40
_STAND_IN = "class _:\n"


def _chunks(source: str, tree: ast.Module) -> list[tuple[str, ...]] | None:
    """The source cut after each top-level statement's last line (statements sharing a line
    stay together); a long class is a tuple of its header with its first statement, and its
    other statements each behind a stand-in class header."""
    lines = split_lines(source, keepends=True)
    ends = _cuts(tree.body)
    if not ends:
        return None
    cuts = [*ends[:-1], len(lines)]  # the last chunk keeps the comments at the end of the file
    chunks: list[tuple[str, ...]] = []
    start = 0
    classes = {statement.end_lineno: statement for statement in tree.body if isinstance(statement, ast.ClassDef)}
    for end, cut in zip(ends, cuts):
        statement = classes.get(end)
        inner = _cuts(statement.body) if statement is not None and end - start > CLASS_SPLIT_LINES else []
        if len(inner) < 2 or statement.body[0].lineno == statement.lineno:  # type: ignore[union-attr]
            chunks.append(("".join(lines[start:cut]),))
        else:
            bounds = [start, *inner[:-1], cut]
            parts = ["".join(lines[a:b]) for a, b in zip(bounds, bounds[1:])]
            chunks.append((parts[0], *(_STAND_IN + part for part in parts[1:])))
        start = cut
    return chunks


def _text(chunk: tuple[str, ...]) -> str:
    """The text of a chunk as it is in the source, without its stand-in class headers."""
    return chunk[0] + "".join(part[len(_STAND_IN) :] for part in chunk[1:])


def _up_to(statements: list[ast.stmt], line: int) -> list[ast.stmt]:
    """The leading statements that end by `line`."""
    return list(itertools.takewhile(lambda statement: (statement.end_lineno or 0) <= line, statements))


def _cuts(statements: list[ast.stmt]) -> list[int]:
    """The line after which each statement (or run of statements sharing a line) ends."""
    cuts: list[int] = []
    for statement in statements:
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        if cuts and first <= cuts[-1]:
            cuts[-1] = max(cuts[-1], statement.end_lineno or first)
        else:
            cuts.append(statement.end_lineno or first)
    return cuts


def _class_module(parts: list[cst.Module]) -> cst.Module | None:
    """The module of a long class from its parts, or None where they do not fit together."""
    first = parts[0]
    if len(first.body) != 1 or not _block_class(first.body[0]):
        return None
    real: cst.ClassDef = first.body[0]  # type: ignore[assignment]
    body = list(real.body.body)
    last = parts[-1]
    for part in parts[1:]:
        layout_differs = (part.default_indent, part.default_newline) != (first.default_indent, first.default_newline)
        footer = part.footer and part is not last  # only the file's last chunk ends in comments
        if layout_differs or part.header or footer or len(part.body) != 1 or not _block_class(part.body[0]):
            return None
        stand_in: cst.ClassDef = part.body[0]  # type: ignore[assignment]
        if stand_in.body.indent != real.body.indent:
            return None
        body.extend(stand_in.body.body)
    new_class = real.with_changes(body=real.body.with_changes(body=body))
    return first.with_changes(body=[new_class], footer=last.footer, has_trailing_newline=last.has_trailing_newline)


def _block_class(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock) and not node.body.footer


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
