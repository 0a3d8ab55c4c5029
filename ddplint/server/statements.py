"""Parse an edited buffer again by reusing the trees of the statements that did not change: a
keystroke in a 1,500-line file re-parses the statement it is in, not the file.

libcst trees are immutable, so a statement parsed for one version of the buffer can stand in
the module of the next. CPython's `ast` (a tenth of libcst's cost) finds where each statement
starts and ends; the text from the end of one top-level statement to the end of the next is a
piece, parsed on its own and cached by its text. A compound statement longer than SPLIT_LINES
is cut further, at any depth: its header is parsed with a placeholder body, and each statement
of its body is a piece of its own, parsed behind stand-in class headers at the columns of the
statements it is in. Where a piece ends, the comment and blank lines after it go with it as far
as libcst gives them to the blocks it ends, so that the tree assembled is the one a full parse
makes. Where the pieces do not fit together (the layout libcst infers per module, trailing
lines in a stand-in block, anything unusual), the text they come from is parsed whole.

The `ast` is not parsed whole either: the statements that begin both the last text that parsed
and this one (top-level ones, and in a class that the edit is in, the class's own) are kept,
those that end both on the same lines are taken as they were, and only the text between is
parsed, on the lines it is on. Where CPython cannot parse that (a half-typed line), libcst is
asked about the same text only; both stop at the first error, so a keystroke costs about the
statement it is in.
"""

from __future__ import annotations

import ast
import copy
import itertools
import re
import warnings
from dataclasses import dataclass
from typing import Union

import libcst as cst

from ddplint.engine.lint import parse
from ddplint.core.lines import split_lines
from ddplint.fixing.quickfix import offsets
from ddplint.prefilter.screens import Facts


class StatementCache:
    """A `parser` for `ddplint.engine.lint.analyse` that remembers the chunks of the last parse."""

    def __init__(self) -> None:
        # Each chunk text of the last parse -> its trees, one per occurrence in the file (a text
        # met twice, such as `args = get_args()` in several functions, gets nodes of its own
        # each time, or both would get one position).
        self._chunks: dict[str, list[cst.Module]] = {}
        # The last text asked about and its ast, or None and the rest of it that CPython could
        # not parse (see _split); the last text that parsed, its ast, its line offsets.
        self._tree: tuple[str, ast.Module | None, str] | None = None
        self._parsed: tuple[str, ast.Module, list[int]] | None = None
        self._module: tuple[str, cst.Module] | None = None  # the last text's libcst tree
        self.reused = 0  # chunks taken from the cache by the last parse (for tests and benchmarks)
        # The nodes the last parse built around reused trees (a long statement put together
        # from its pieces, a statement given the blank lines before it), by the ids of what
        # they were built from: the same pieces give the same node, so that a statement the
        # edit did not touch is the same object as before and the walk takes its events whole.
        self._built: dict[tuple[int, ...], tuple[tuple, cst.CSTNode]] = {}
        self._building: dict[tuple[int, ...], tuple[tuple, cst.CSTNode]] = {}

    def facts(self, source: str) -> Facts | None:
        """The rules' screen facts for `source`, from the same `ast` the chunks are cut with."""
        tree = self._ast(source)
        return None if tree is None else Facts(tree)

    def _ast(self, source: str) -> ast.Module | None:
        if self._tree is None or self._tree[0] is not source:
            kept, owner, members, line, offset = self._split(source)
            head = _STAND_IN if owner is not None else ""
            tree = self._with_unchanged_end(source, kept, owner, members, line, offset)
            try:
                if tree is None:
                    # The rest of the text, on the lines it is on.
                    rest = _parsed_ast("\n" * (line - bool(head)) + head + source[offset:])
                    tree = _assembled_ast(kept, owner, members, rest, [])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = (source, None, head + source[offset:])
            else:
                self._tree = (source, tree, "")
                self._parsed = (source, tree, offsets(source))
        return self._tree[1]

    def _with_unchanged_end(self, source, kept, owner, members, line, offset) -> ast.Module | None:
        """The ast of `source` where it ends, on the same lines, as the last text that parsed:
        the statements there are taken as they were (the class's the change is in, then the
        top-level ones), and only the text between them and those kept in front is parsed, so
        a keystroke within a line costs the statement it is in. None where it does not so end,
        or that text does not parse alone (the rest of the text is then parsed whole)."""
        if self._parsed is None:
            return None
        previous, tree, after = self._parsed
        if previous.count("\n") != source.count("\n") or previous.count("\r") != source.count("\r"):
            return None  # lines added or removed: the statements after the change moved
        after_owner = tree.body[tree.body.index(owner) + 1 :] if owner is not None else []
        candidates = [*owner.body, *after_owner] if owner is not None else tree.body  # type: ignore[attr-defined]
        starts = [(index, after[_first_line(statement)]) for index, statement in _run_starts(candidates)]
        low, high = 0, len(starts)
        while low < high:  # the first run from which on the text is as it was
            middle = (low + high) // 2
            if source.endswith(previous[starts[middle][1] :]):
                high = middle
            else:
                low = middle + 1
        if low == len(starts):
            return None
        index, start = starts[low]
        stop = len(source) - (len(previous) - start)
        if stop < offset or (owner is not None and index < len(members)):
            return None
        head = _STAND_IN if owner is not None else ""
        try:
            rest = _parsed_ast("\n" * (line - bool(head)) + head + source[offset:stop])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if owner is None:
            return ast.Module(body=[*kept, *rest, *candidates[index:]], type_ignores=[])
        if len(rest) != 1:
            return None  # the text left the class
        in_class = len(owner.body)  # type: ignore[attr-defined]
        return _assembled_ast(kept, owner, members, rest, candidates[index:in_class], candidates[max(index, in_class) :])

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
            line = self._kept_end(source, inner, inside, _indentation(source[after[changed.body[0].lineno] : after[changed.body[0].lineno + 1]]))
            if line is not None:
                return before, changed, _up_to(changed.body, line), line, after[line + 1]
        line = self._kept_end(source, ends, same, "")
        if line is None:
            return [], None, [], 0, 0
        return _up_to(tree.body, line), None, [], line, after[line + 1]

    def _kept_end(self, source: str, ends: list[int], same: int, indent: str) -> int | None:
        """The line the statements kept end on, of the `same` runs (ending on `ends`) that
        begin `source` unchanged: all of them where the text after them opens a statement of
        its own at their column `indent` (not a clause of the last, an `else:`, nor a line of
        its block), else all but the last (which the rest then begins with); None for none."""
        after = self._parsed[2]  # type: ignore[index]
        if same and ends[same - 1] + 1 < len(after) and _opens_statement(source, after[ends[same - 1] + 1], indent):
            return ends[same - 1]
        return ends[same - 2] if same >= 2 else None

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
        if chunks is None or (len(chunks) < 2 and isinstance(chunks[0], str)):
            self._chunks.clear()
            return parse(source)
        parsed: dict[str, list[cst.Module]] = {}
        self.reused = 0
        self._building = {}
        modules = []
        for chunk in chunks:
            module = self._parse(chunk, parsed) if isinstance(chunk, str) else self._cut_module(chunk, parsed)
            modules.append(module if module is not None else parse(_text(chunk)))
        self._chunks = parsed
        module = _assemble(modules, self._build)
        self._built = self._building
        return module if module is not None else parse(source)

    def _build(self, make, *parts):
        """`make(*parts)`, or the node it made of the same objects in the last parse."""
        key = tuple(map(id, parts))
        found = self._built.get(key)
        if found is None or key in self._building or any(a is not b for a, b in zip(found[0], parts)):
            found = (parts, make(*parts))
        self._building[key] = found
        return found[1]

    def _cut_module(self, cut: _Cut, parsed: dict[str, list[cst.Module]]) -> cst.Module | None:
        """The module of a top-level statement parsed in pieces (see _Cut), or None where the
        pieces do not fit together."""
        head = self._parse(cut.head, parsed)
        found = self._statements(cut, "", parsed)
        if found is None or len(head.body) != 1:
            return None
        [statement], (module, _) = found
        return self._build(
            lambda head, statement, module: head.with_changes(
                body=[statement], footer=module.footer, has_trailing_newline=module.has_trailing_newline
            ),
            head, statement, module,
        )

    def _statements(self, piece: _Piece, prefix: str, parsed: dict[str, list[cst.Module]]):
        """(the statement, or statements, `piece` holds; its tail: the module its last text was
        parsed as and the trailing lines of each stand-in block there, which are those of the
        blocks the piece ends: a piece ends its block where it is its last); None where the
        pieces do not fit. `prefix` is the stand-in headers that put the piece at its column."""
        depth = prefix.count("\n")
        if isinstance(piece, str):
            module = self._parse(prefix + piece, parsed)
            found = _inside(module, depth)
            return (found[0], (module, found[1])) if found is not None and found[0] else None
        found = _inside(self._parse(prefix + piece.head, parsed), depth)
        if found is None or len(found[0]) != 1 or any(found[1]) or not _placeholder_block(found[0][0]):
            return None
        statement: cst.BaseCompoundStatement = found[0][0]  # type: ignore[assignment]
        inner = prefix + piece.indent + _STAND_IN
        body: list[cst.BaseStatement] = []
        for index, member in enumerate(piece.members):
            parts = self._statements(member, inner, parsed)
            if parts is None:
                return None
            statements, (module, footers) = parts
            ends = module.footer or not module.has_trailing_newline or any(footers)
            if index < len(piece.members) - 1 and ends:
                return None  # only the last piece of a block ends in its trailing lines
            body.extend(statements)
        built = self._build(
            lambda statement, module, *body: statement.with_changes(
                body=statement.body.with_changes(body=list(body), footer=footers[-1])  # type: ignore[attr-defined]
            ),
            statement, module, *body,
        )
        return [built], (module, footers[:-1])

    def _parse(self, text: str, parsed: dict[str, list[cst.Module]]) -> cst.Module:
        """The tree of the next occurrence of `text` in this parse: the tree the same occurrence
        had in the last parse, else parsed now."""
        found = parsed.setdefault(text, [])
        kept = self._chunks.get(text, ())
        if len(found) < len(kept):
            found.append(kept[len(found)])
            self.reused += 1
        else:
            found.append(parse(text))
        return found[-1]


_CLAUSES = ("else", "elif", "except", "finally")


def _opens_statement(source: str, offset: int, indent: str) -> bool:
    """Whether the first line of code from `offset` on starts a statement of its own at column
    `indent`: it is indented so, and is no clause (`else:`) of a statement before it."""
    at = offset
    while at < len(source):
        end = source.find("\n", at)
        end = len(source) if end < 0 else end + 1
        line = source[at:end]
        stripped = line.strip(" \t\f\r\n")
        if stripped and not stripped.startswith("#"):
            word = re.match(r"[A-Za-z_]\w*", stripped)
            own = _indentation(line) == indent and (word is None or word.group() not in _CLAUSES)
            return own and "\r" not in line[:-1]
        at = end
    return True  # nothing follows


def _parsed_ast(text: str) -> list[ast.stmt]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like
        return ast.parse(text).body


def _assembled_ast(kept, owner, members, rest, inside, after_owner=()) -> ast.Module:
    """The module's ast from the statements kept in front, those parsed (`rest`: behind a
    stand-in class header where the change is in the class `owner`, whose own statements in
    front are `members` and behind are `inside`), and the top-level ones kept behind."""
    if owner is not None:
        stand_in = rest[0]
        whole = copy.copy(owner)
        whole.body = [*members, *stand_in.body, *inside]
        last = whole.body[-1] if inside else stand_in
        whole.end_lineno, whole.end_col_offset = last.end_lineno, last.end_col_offset
        rest = [whole, *rest[1:]]
    return ast.Module(body=[*kept, *rest, *after_owner], type_ignores=[])


def _run_starts(statements: list[ast.stmt]) -> list[tuple[int, ast.stmt]]:
    """(index, statement) of each statement that starts a line of its own, after the one
    before it ended."""
    found = []
    end = 0
    for index, statement in enumerate(statements):
        if _first_line(statement) > end:
            found.append((index, statement))
        end = max(end, statement.end_lineno or statement.lineno)
    return found


# A compound statement longer than this (a class, a function, a `with`, a loop or an `if`
# without `else`) is cut into its body's statements, at any depth: one line edited in a method
# of a thousand lines then re-parses the statement of that method the line is in (or the piece
# of it, where that statement is long too). Each piece is parsed behind stand-in class headers
# at the columns of the statements it is in, so that its text keeps its indentation (and any
# multi-line string in it); the statement's own header is parsed with a placeholder body.
SPLIT_LINES = 40
_STAND_IN = "class _:\n"
_PLACEHOLDER = "pass"
_CUTTABLE = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.If)


@dataclass(frozen=True)
class _Cut:
    """A long compound statement in pieces: `head` is its leading lines and header with a
    placeholder body, `indent` the column of its header, `members` its body's statements."""

    head: str
    indent: str
    members: list[_Piece]


_Piece = Union[str, _Cut]


def _chunks(source: str, tree: ast.Module) -> list[_Piece] | None:
    """The source cut after each top-level statement's last line (statements sharing a line
    stay together), a long compound statement cut further into its statements."""
    lines = split_lines(source, keepends=True)
    if not _cuts(tree.body):
        return None
    return _pieces(lines, tree.body, 0, len(lines))


def _pieces(lines: list[str], statements: list[ast.stmt], start: int, stop: int) -> list[_Piece]:
    """`statements` (a block's, in lines[start:stop], which ends with the block's trailing
    lines), one piece each: the text from the end of the one before to its own end."""
    ends = _owned_ends(lines, statements)
    bounds = [start, *ends[:-1], stop]
    alone = {statement.end_lineno: statement for statement in statements}
    pieces: list[_Piece] = []
    for (end, _), low, high in zip(_runs(statements), bounds, bounds[1:]):
        statement = alone.get(end)
        cut = _cut(lines, statement, low, high) if statement is not None and high - low > SPLIT_LINES else None
        pieces.append(cut if cut is not None else "".join(lines[low:high]))
    return pieces


def _runs(statements: list[ast.stmt]) -> list[tuple[int, int]]:
    """(last line, first line of the next) of each run of statements sharing lines; the last
    run's next is 0."""
    runs: list[list[int]] = []
    for statement in statements:
        first = _first_line(statement)
        if runs and first <= runs[-1][0]:
            runs[-1][0] = max(runs[-1][0], statement.end_lineno or first)
        else:
            if runs:
                runs[-1][1] = first
            runs.append([statement.end_lineno or first, 0])
    return [(end, following) for end, following in runs]


def _owned_ends(lines: list[str], statements: list[ast.stmt]) -> list[int]:
    """Where each run of `statements` ends, with the comment and blank lines after it that
    libcst gives the blocks it ends: those up to the last that is indented as deep as the
    block of its last statement (the rest lead the next statement)."""
    ends = []
    last_of = {statement.end_lineno: statement for statement in statements}
    for end, following in _runs(statements):
        owned = end
        body = getattr(last_of.get(end), "body", None)
        if following and isinstance(body, list) and body and _first_line(body[0]) > last_of[end].lineno:
            inner = _indentation(lines[_first_line(body[0]) - 1])
            for index in range(end, following - 1):
                if lines[index].startswith(inner):
                    owned = index + 1
        ends.append(owned)
    return ends


def _cut(lines: list[str], statement: ast.stmt, low: int, high: int) -> _Cut | None:
    """The statement in lines[low:high] in pieces, where it is a compound statement whose only
    block is its body, which starts on a line of its own."""
    if not isinstance(statement, _CUTTABLE) or getattr(statement, "orelse", None):
        return None
    body_start = _first_line(statement.body[0]) - 1  # 0-based
    header_end = body_start
    while header_end > low and _blank_or_comment(lines[header_end - 1]):
        header_end -= 1  # comment and blank lines after the header go with its first statement
    if header_end <= statement.lineno - 1:
        return None  # the body starts on the header's line
    header, first = lines[statement.lineno - 1], lines[body_start]
    newline = lines[header_end - 1][len(lines[header_end - 1].rstrip("\r\n")) :] or "\n"
    head = "".join(lines[low:header_end]) + _indentation(first) + _PLACEHOLDER + newline
    return _Cut(head, _indentation(header), _pieces(lines, statement.body, header_end, high))


def _blank_or_comment(line: str) -> bool:
    stripped = line.strip(" \t\f\r\n")
    return not stripped or stripped.startswith("#")


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t\f"))]


def _first_line(statement: ast.stmt) -> int:
    return min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])


def _text(piece: _Piece) -> str:
    """The text of a piece as it is in the source."""
    if isinstance(piece, str):
        return piece
    without_placeholder = piece.head[: piece.head.rstrip("\r\n").rindex("\n") + 1]
    return without_placeholder + "".join(_text(member) for member in piece.members)


def _inside(module: cst.Module, depth: int) -> tuple[list[cst.BaseStatement], list] | None:
    """(the statements inside `depth` stand-in class headers, the trailing lines of each of
    their blocks, outermost first), or None where the module is not such a chain."""
    body = list(module.body)
    if depth and module.header:
        return None
    footers = []
    for _ in range(depth):
        if len(body) != 1 or not _block_class(body[0]):
            return None
        footers.append(body[0].body.footer)  # type: ignore[attr-defined]
        body = list(body[0].body.body)  # type: ignore[attr-defined]
    return body, footers


def _placeholder_block(node: cst.CSTNode) -> bool:
    """A compound statement whose body is the placeholder alone, in an indented block."""
    block = getattr(node, "body", None)
    if not isinstance(block, cst.IndentedBlock) or block.footer or len(block.body) != 1:
        return False
    only = block.body[0]
    return (
        isinstance(only, cst.SimpleStatementLine) and len(only.body) == 1 and isinstance(only.body[0], cst.Pass)
        and not only.leading_lines and not only.trailing_whitespace.comment
    )


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


def _block_class(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock)


def _assemble(modules: list[cst.Module], build=lambda make, *parts: make(*parts)) -> cst.Module | None:
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
            statements[0] = build(
                lambda module, first: first.with_changes(leading_lines=[*module.header, *first.leading_lines]),
                module, statements[0],
            )
        body.extend(statements)
    return first.with_changes(body=body, footer=last.footer, has_trailing_newline=last.has_trailing_newline)
