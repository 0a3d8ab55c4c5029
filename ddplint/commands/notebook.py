"""Jupyter notebooks: lint the code cells as one module, fix them, write back only their sources.

The code cells are joined in order (a later cell uses the imports of an earlier one), with a
marker comment between cells so that fixed text can be split back into cells. IPython syntax
that is not Python is masked line by line with a `pass` that carries a numbered marker, and
restored after fixing: `%magic` and `!shell` lines, `x = !cmd` and `x = %magic` assignments,
`obj?` help, and whole `%%cell` magics. A cell that is plain Python is never masked, so a
continuation line that starts with `%` (string formatting) is left alone.

Notebooks are read with the standard library's `json`, not nbformat: nbformat would
re-serialise the whole file on writing (its own indent, key order and escapes), and a fix must
leave every byte outside the changed cells' sources as it was. Where nbformat is installed (the
`notebooks` extra) it validates what `--fix` would write before anything is written. So writing replaces just the
changed `source` values in the original text, found with a small walk over the JSON that
records where each cell's `source` value starts and ends.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ddplint.core.diagnostics import Diagnostic, FileResult, Fix
from ddplint.engine.lint import SourceError
from ddplint.core.lines import split_lines

SUFFIX = ".ipynb"
_CELL_MARK = "# ddplint:cell:{}"
_CELL_MARK_LINE = re.compile(r"^# ddplint:cell:(\d+)\r?\n?$")
_MASK = "pass  # ddplint:masked:{}"
_MASKED = re.compile(r"^(?P<indent>[ \t]*)pass  # ddplint:masked:(?P<number>\d+)$")
_IPYTHON_LINE = re.compile(r"^[ \t]*(?:[!%]|[\w.]+[ \t]*=[ \t]*[!%]|[\w.]+\?{1,2}[ \t]*$|\?)")
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


@dataclass
class Cell:
    number: int  # 1-based position among all cells, as shown in the output
    source: str  # the cell's text
    span: tuple[int, int]  # where its `source` value lies in the notebook's JSON text


@dataclass
class Notebook:
    text: str  # the JSON text
    cells: list[Cell]  # the code cells
    python: bool  # False for notebooks of other kernels: nothing to check

    def joined(self) -> tuple[str, list[tuple[int, int] | None], list[str]]:
        """(the cells as one module, where each of its lines comes from as (cell number, line
        in cell) or None for a marker line, the masked original lines in order)."""
        lines: list[str] = []
        origin: list[tuple[int, int] | None] = []
        masked: list[str] = []
        for index, cell in enumerate(self.cells):
            if index:
                lines.append(_CELL_MARK.format(cell.number) + "\n")
                origin.append(None)
            cell_lines = split_lines(cell.source, keepends=True)
            whole_cell = bool(cell_lines) and cell_lines[0].lstrip().startswith("%%")
            plain = not whole_cell and _is_python(cell.source)  # e.g. black's `% args` lines stay
            continued = False
            for number, line in enumerate(cell_lines, start=1):
                body = line.rstrip("\r\n")
                if not plain and (whole_cell or continued or _IPYTHON_LINE.match(body)):
                    indent = body[: len(body) - len(body.lstrip(" \t"))]
                    masked.append(body)
                    line = indent + _MASK.format(len(masked) - 1) + "\n"
                    continued = body.endswith("\\")
                lines.append(line if line.endswith(("\n", "\r")) else line + "\n")
                origin.append((cell.number, number))
        return "".join(lines), origin, masked

    def with_sources(self, sources: dict[int, str]) -> str:
        """The JSON text with the `source` of the cells numbered in `sources` replaced."""
        text = self.text
        for cell in sorted((c for c in self.cells if c.number in sources), key=lambda c: -c.span[0]):
            start, end = cell.span
            text = text[:start] + _encode_source(text[start:end], sources[cell.number], self.text) + text[end:]
        return text


def _is_python(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def parse_notebook(text: str) -> Notebook:
    """Raises SourceError (one line) for text that is not a notebook."""
    try:
        data, cells_span = _top_level_cells(text)
    except (ValueError, IndexError, KeyError, TypeError) as error:
        raise SourceError(f"cannot read: not a notebook ({_reason(error)})") from None
    language = _language(data)
    cells: list[Cell] = []
    for number, (cell, span) in enumerate(_cells(text, cells_span), start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(item, str) for item in source):
            source = "".join(source)
        if not isinstance(source, str) or span is None:
            raise SourceError(f"cannot read: not a notebook (cell {number}: source is not text)")
        cells.append(Cell(number, source, span))
    return Notebook(text, cells, language in (None, "python"))


def _reason(error: Exception) -> str:
    return str(error).split("\n")[0] if isinstance(error, ValueError) else "unexpected structure"


def _language(data: dict) -> str | None:
    metadata = data.get("metadata") or {}
    for value in ((metadata.get("language_info") or {}).get("name"), (metadata.get("kernelspec") or {}).get("language")):
        if isinstance(value, str):
            return value.lower()
    return None


def _top_level_cells(text: str) -> tuple[dict, tuple[int, int]]:
    data, end = _DECODER.raw_decode(text, _WS.match(text, 0).end())  # type: ignore[union-attr]
    if text[end:].strip() or not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise TypeError
    for key, start, value_end in _members(text, _WS.match(text, 0).end()):  # type: ignore[union-attr]
        if key == "cells":
            cells_span = (start, value_end)
    return data, cells_span


def _members(text: str, at: int):
    """(key, value start, value end) of the JSON object starting at `at`; the last one wins."""
    if text[at] != "{":
        raise TypeError
    at = _WS.match(text, at + 1).end()  # type: ignore[union-attr]
    if text[at] == "}":
        return
    while True:
        key, at = _DECODER.raw_decode(text, at)
        at = _WS.match(text, at).end()  # type: ignore[union-attr]
        if text[at] != ":":
            raise TypeError
        start = _WS.match(text, at + 1).end()  # type: ignore[union-attr]
        _, at = _DECODER.raw_decode(text, start)
        yield key, start, at
        at = _WS.match(text, at).end()  # type: ignore[union-attr]
        if text[at] == "}":
            return
        at = _WS.match(text, at + 1).end()  # type: ignore[union-attr]


def _cells(text: str, span: tuple[int, int]):
    """(cell, span of its source value or None) for each element of the cells array."""
    at = _WS.match(text, span[0] + 1).end()  # type: ignore[union-attr]
    while text[at] != "]":
        cell, end = _DECODER.raw_decode(text, at)
        if not isinstance(cell, dict):
            raise TypeError
        source = None
        for key, start, value_end in _members(text, at):
            if key == "source":
                source = (start, value_end)
        yield cell, source
        at = _WS.match(text, end).end()  # type: ignore[union-attr]
        if text[at] == ",":
            at = _WS.match(text, at + 1).end()  # type: ignore[union-attr]


def _encode_source(old: str, source: str, document: str) -> str:
    """`source` as JSON in the shape of the `old` value: a string, or a list of lines laid out
    the way the old list was (Jupyter writes one line per row, indented)."""
    ascii_only = bool(re.search(r"\\u00[89a-f]|\\u0[1-9a-f]|\\u[1-9a-f]", document, re.IGNORECASE))
    dump = lambda value: json.dumps(value, ensure_ascii=ascii_only)  # noqa: E731
    if not old.startswith("["):
        return dump(source)
    items = source.splitlines(keepends=True)
    inner = old[1:-1]
    opening = inner[: len(inner) - len(inner.lstrip())] if inner.strip() else "\n"
    closing = inner[len(inner.rstrip()) :] if inner.strip() else ""
    if not items:
        return "[]"
    if not inner.strip():  # an empty list gives no layout to copy: use Jupyter's
        indent = _indent_before(document, old)
        opening, closing = "\n" + indent + " ", "\n" + indent
    return "[" + opening + ("," + opening).join(dump(item) for item in items) + closing + "]"


def _indent_before(document: str, old: str) -> str:
    at = document.find('"source": ' + old)
    line_start = document.rfind("\n", 0, at) + 1
    return document[line_start : line_start + len(document[line_start:]) - len(document[line_start:].lstrip(" "))]


# -- linting and fixing ---------------------------------------------------------------------


def split_cells(text: str, masked: Sequence[str], numbers: Sequence[int]) -> dict[int, str] | None:
    """Fixed joined text back to {cell number: source}, unmasked; None if a marker was lost."""
    sources: dict[int, list[str]] = {numbers[0]: []}
    current = numbers[0]
    for line in split_lines(text, keepends=True):
        mark = _CELL_MARK_LINE.match(line)
        if mark:
            current = int(mark.group(1))
            sources[current] = []
            continue
        body = line.rstrip("\r\n")
        hidden = _MASKED.match(body)
        if hidden:
            line = masked[int(hidden.group("number"))] + line[len(body) :]
        sources[current].append(line)
    if list(sources) != list(numbers):
        return None
    return {number: "".join(lines) for number, lines in sources.items()}


def _move(diagnostic: Diagnostic, origin: list[tuple[int, int] | None]) -> Diagnostic | None:
    where = origin[diagnostic.line - 1] if diagnostic.line - 1 < len(origin) else None
    if where is None:
        return None
    cell, line = where
    shift = line - diagnostic.line
    fix = diagnostic.fix
    if fix is not None:
        edits = tuple(replace(e, line=e.line + shift, end_line=e.end_line + shift) for e in fix.edits)
        fix = Fix(fix.applicability, edits, fix.imports)
    return replace(diagnostic, line=line, end_line=diagnostic.end_line + shift, cell=cell, fix=fix)


def process_notebook(path: str, rules, mode, *, syntax: bool = False) -> FileResult:
    """Lint (and with `mode.fix`, fix and, with `mode.write`, write) one notebook. Like
    `ddplint.api.process_file`, never raises for a bad file: it becomes `result.error`."""
    from ddplint.engine.files import read_source, write_atomically

    try:
        decoded, raw = read_source(path)
    except SourceError as error:
        return FileResult(path, error=str(error))
    result = process_notebook_text(decoded.text, path, rules, mode, syntax=syntax)
    if mode.fix and mode.write and result.error is None and result.changed:
        try:
            write_atomically(path, result.fixed_source, decoded, raw)  # type: ignore[arg-type]
        except SourceError as error:
            result.error, result.fixed_count, result.fixed_codes = str(error), 0, {}
    return result


def process_notebook_text(text: str, path: str, rules, mode, *, syntax: bool = False) -> FileResult:
    """Lint or fix a notebook's JSON text (a file's, or an editor buffer's); writes nothing.
    With `mode.fix`, `result.fixed_source` is the new JSON text; `syntax`: see
    ddplint.api.process_source."""
    from ddplint.api import process_source

    try:
        notebook = parse_notebook(text)
    except SourceError as error:
        return FileResult(path, error=str(error))
    if not notebook.python or not notebook.cells:
        return FileResult(path, original_source=text, fixed_source=text) if mode.fix else FileResult(path)
    joined, origin, masked = notebook.joined()
    result = process_source(joined, path, rules, mode, syntax=syntax)
    if result.error is not None:
        result.error = _locate_error(result.error, origin)
        return result
    result.diagnostics = [moved for d in result.diagnostics if (moved := _move(d, origin)) is not None]
    if not mode.fix:
        return result
    fixed, changed = result.fixed_source or joined, result.changed
    result.original_source = result.fixed_source = notebook.text
    if not changed:
        return result
    changed = _changed_cells(notebook, fixed, masked)
    if changed is None:
        result.fix_problems.append(f"{path}: not fixed: a fix would move code across cells")
        result.fixed_count, result.fixed_codes = 0, {}
        return result
    result.fixed_source = notebook.with_sources(changed)
    problem = _invalid(result.fixed_source)
    if problem is not None:
        result.fix_problems.append(f"{path}: not fixed: the fixed notebook would not be valid ({problem})")
        result.fixed_source, result.fixed_count, result.fixed_codes = notebook.text, 0, {}
        return result
    return result


def add_noqa_to_notebook(text: str, diagnostics: Sequence[Diagnostic]):
    """The notebook's JSON text with `# noqa` comments for `diagnostics` (lines counted in
    their cells), written as `--add-noqa` writes them in a module: into the cells joined as
    they are linted, then split back. Returns (new text, the `Placed` of
    ddplint.fixing.add_noqa, whose findings left without a comment are among those given)."""
    from ddplint.fixing.add_noqa import Placed, Unplaced, add_noqa

    notebook = parse_notebook(text)
    joined, origin, masked = notebook.joined()
    joined_line = {where: index for index, where in enumerate(origin, start=1) if where is not None}
    moved = [
        replace(d, line=joined_line[(d.cell, d.line)], end_line=joined_line[(d.cell, d.line)] + d.end_line - d.line)
        for d in diagnostics
    ]
    placed = add_noqa(joined, moved)
    given = {id(m): d for m, d in zip(moved, diagnostics)}
    unplaced = [Unplaced(given[id(miss.diagnostic)], miss.reason) for miss in placed.unplaced]
    changed = _changed_cells(notebook, placed.source, masked) if placed.changed else {}
    if changed is None:
        return text, Placed(text, 0, [Unplaced(d, "the cells could not be told apart again") for d in diagnostics])
    return notebook.with_sources(changed), Placed(placed.source, placed.changed, unplaced)


def _changed_cells(notebook: Notebook, joined: str, masked: list[str]) -> dict[int, str] | None:
    """{cell number: new source} of the cells whose text `joined` (the cells joined, then
    edited) changed, unmasked; None where a cell marker was lost."""
    sources = split_cells(joined, masked, [cell.number for cell in notebook.cells])
    if sources is None:
        return None
    for cell in notebook.cells:
        if not cell.source.endswith("\n") and sources[cell.number].endswith("\n"):
            sources[cell.number] = sources[cell.number][:-1]  # joining added it
    return {number: text for number, text in sources.items() if text != _cell(notebook, number).source}


def _invalid(text: str) -> str | None:
    """Why `text` is not a valid notebook, by nbformat's schema where nbformat is installed
    (the `notebooks` extra); without it, only that it is still JSON."""
    try:
        data = json.loads(text)
    except ValueError as error:
        return str(error)
    try:
        import nbformat
    except ImportError:
        return None
    try:
        nbformat.validate(nbformat.from_dict(data))
    except Exception as error:  # nbformat's ValidationError, or a schema it does not know
        message = str(error).strip().splitlines()
        return message[0] if message else type(error).__name__
    return None


def _cell(notebook: Notebook, number: int) -> Cell:
    return next(cell for cell in notebook.cells if cell.number == number)


def _locate_error(error: str, origin: list[tuple[int, int] | None]) -> str:
    """A syntax error's `(line N, column C)` in the joined text, as `(cell K, line L, ...)`."""
    match = re.search(r"\(line (\d+), column", error)
    if not match or int(match.group(1)) - 1 >= len(origin) or origin[int(match.group(1)) - 1] is None:
        return error
    cell, line = origin[int(match.group(1)) - 1]  # type: ignore[misc]
    return error[: match.start()] + f"(cell {cell}, line {line}, column" + error[match.end() :]
