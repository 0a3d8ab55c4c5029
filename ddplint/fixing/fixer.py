"""Apply fixes as node replacements, re-parse, and repeat until nothing fixable is left.

Each pass lints the current text, applies every allowed fix whose node is not inside another
fix's node (the outer one wins; the inner one is found again next pass), adds the imports the
fixes need, and re-parses the result. A pass whose output does not parse is retried fix by fix,
and the fixes that break parsing are dropped and reported. The loop ends at a fixed point, so
fix(fix(x)) == fix(x).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from ddplint.semantic.edits import is_docstring, names_in, referenced_names
from ddplint.engine.lint import (
    MAX_PARSE_CHARS,
    FileAnalysis,
    SourceError,
    analyse,
    analyse_large,
    large_file_note,
    large_file_parts,
    move_diagnostics,
    parse,
    reduced_source,
    split_parts,
)
from ddplint.core.lines import split_lines
from ddplint.rules.rule import Report, Rule
from ddplint.semantic.model import dotted_name

MAX_PASSES = 10


@dataclass
class FixOutcome:
    source: str
    fixed_count: int
    remaining: FileAnalysis
    problems: list[str] = field(default_factory=list)
    # How many findings of each rule code were fixed (for --show-fixes).
    fixed_codes: dict[str, int] = field(default_factory=dict)


def fix_text(
    source: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    unsafe_fixes: bool = False,
    honour_noqa: bool = True,
    max_passes: int = MAX_PASSES,
    used_elsewhere: Callable[[str], bool] | None = None,
) -> FixOutcome:
    """Fix `source` to a fixed point. Raises SourceError if the original does not parse.
    `used_elsewhere(name)`: whether code outside `source` uses a name `source` imports (an
    import a fix orphans is then kept)."""
    if len(source) > MAX_PARSE_CHARS:
        return _fix_large(source, path, rules, unsafe_fixes, honour_noqa, max_passes)
    analysis = analyse(source, path, rules, honour_noqa=honour_noqa)
    fixed_count = 0
    fixed_codes: dict[str, int] = {}
    problems: list[str] = []
    dropped: set[tuple[str, int, int]] = set()
    for _ in range(max_passes):
        candidates = [
            report
            for report, diagnostic in zip(analysis.reports, analysis.diagnostics)
            if diagnostic.fix is not None
            and diagnostic.fix.applicability.allowed(unsafe_fixes)
            and (diagnostic.code, diagnostic.line, diagnostic.col) not in dropped
        ]
        if not candidates:
            return FixOutcome(source, fixed_count, analysis, problems, fixed_codes)
        assert analysis.module is not None
        if fixed_count == 0 and analysis.module.code != source:
            # libcst does not reproduce some rare layouts exactly (a lone \r before comment
            # lines at the end of a file loses one of them); a fix must not touch other lines.
            problems.append(f"{path}: not fixed: the file's layout cannot be reproduced exactly (mixed line endings?)")
            return FixOutcome(source, 0, analysis, problems)
        applied = _outermost(analysis.module, candidates)
        new_source, new_analysis = _try_apply(analysis.module, applied, path, rules, honour_noqa, used_elsewhere)
        if new_analysis is None:
            # Find the fixes that break the file, drop them, keep the others.
            keep = []
            for report, diagnostic in zip(analysis.reports, analysis.diagnostics):
                if report not in applied:
                    continue
                alone_source, alone = _try_apply(analysis.module, [report], path, rules, honour_noqa, used_elsewhere)
                if alone is None:
                    dropped.add((diagnostic.code, diagnostic.line, diagnostic.col))
                    problems.append(
                        f"{path}:{diagnostic.line}:{diagnostic.col}: {diagnostic.code} fix dropped: "
                        "the fixed code would not parse"
                    )
                else:
                    keep.append(report)
            if not keep:
                continue
            new_source, new_analysis = _try_apply(analysis.module, keep, path, rules, honour_noqa, used_elsewhere)
            if new_analysis is None:
                return FixOutcome(source, fixed_count, analysis, problems, fixed_codes)
            applied = keep
        if new_source == source:
            return FixOutcome(source, fixed_count, analysis, problems, fixed_codes)
        fixed_count += len(applied)
        for report in applied:
            fixed_codes[report.rule.code] = fixed_codes.get(report.rule.code, 0) + 1
        source, analysis = new_source, new_analysis
    problems.append(f"{path}: fixes did not settle after {max_passes} passes; the last pass was kept")
    return FixOutcome(source, fixed_count, analysis, problems, fixed_codes)


def _fix_large(source: str, path: str, rules, unsafe_fixes: bool, honour_noqa: bool, max_passes: int) -> FixOutcome:
    """A file over the parse limit: its kept top-level statements are fixed as one module
    (engine.large_file_parts) and put back where they came from."""
    parts = large_file_parts(source, rules)
    reduced, _ = reduced_source(source, parts)
    note = large_file_note(path, source, parts)
    kept = set(parts.kept)
    skipped = "".join("".join(parts.part_lines(i)) for i in range(len(parts.starts)) if i not in kept)

    def used_elsewhere(name: str) -> bool:
        return re.search(rf"(?<![\w.]){re.escape(name)}\b", skipped) is not None

    outcome = fix_text(
        reduced, path, rules, unsafe_fixes=unsafe_fixes, honour_noqa=honour_noqa, max_passes=max_passes,
        used_elsewhere=used_elsewhere,
    )
    split = split_parts(outcome.source) if outcome.fixed_count else None
    why = "the fixed statements could not be put back in place"
    if split is not None:
        split[0].pop(len(parts.starts), None)  # the stubs
        split = _merge_removed(split, parts.kept)
    if split is not None:
        # A name a fix defines (a factory) that a skipped statement binds too: not fixed.
        added = _top_level_names(cst.parse_module(outcome.source)) - _top_level_names(cst.parse_module(reduced))
        clash = sorted(added & parts.skipped_bindings())
        if clash:
            split, why = None, f"a fix would define {clash[0]}, which the file binds elsewhere"
    if split is None:
        analysis = analyse_large(source, path, rules, honour_noqa=honour_noqa)
        problems = [note]
        if outcome.fixed_count:
            problems.append(f"{path}: not fixed: {why}")
        return FixOutcome(source, 0, analysis, problems)
    pieces, firsts = split
    out: list[str] = []
    table: list[tuple[int, int]] = []
    line = 1
    for index in range(len(parts.starts)):
        original = "".join(parts.part_lines(index))
        text = pieces.get(index, original)
        if index in firsts:
            table.append((firsts[index], line))
            if not original.endswith(("\n", "\r")) and text.endswith(("\n", "\r")):
                text = text.rstrip("\r\n")  # the file's last line had no newline
        out.append(text)
        line += len(split_lines(text))
    remaining = FileAnalysis(None, move_diagnostics(outcome.remaining.diagnostics, table), outcome.remaining.reports, [note])
    return FixOutcome("".join(out), outcome.fixed_count, remaining, [note, *outcome.problems], outcome.fixed_codes)


def _merge_removed(split, kept: list[int]):
    """A statement a fix removed takes its part's marker with it: where it stood right after
    the kept part before it in the file, its text (if any) is that part's; elsewhere, None."""
    pieces, firsts = split
    if not set(pieces) <= set(kept):
        return None
    for position, index in enumerate(kept):
        if index in pieces:
            continue
        if position == 0 or kept[position - 1] != index - 1:
            return None
        pieces[index] = ""
    return pieces, firsts


def _top_level_names(module: cst.Module) -> set[str]:
    return {statement.name.value for statement in module.body if isinstance(statement, (cst.FunctionDef, cst.ClassDef))}


def _outermost(module: cst.Module, reports: list[Report]) -> list[Report]:
    """Reports whose replaced nodes do not contain, and are not contained in, another's."""
    claimed: dict[int, Report] = {}
    for report in reports:
        for node in report.replacements or ():
            claimed.setdefault(id(node), report)
    losers: set[int] = set()

    class _Nesting(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.owners: list[Report] = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            owner = claimed.get(id(node))
            if owner is not None:
                if any(outer is not owner for outer in self.owners):
                    losers.add(id(owner))
                self.owners.append(owner)
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            if id(original_node) in claimed:
                self.owners.pop()

    module.visit(_Nesting())
    return [report for report in reports if id(report) not in losers]


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, object]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)


def _try_apply(module: cst.Module, reports: list[Report], path: str, rules, honour_noqa: bool, used_elsewhere=None):
    replacements: dict[int, object] = {}
    imports: list[str] = []
    for report in reports:
        for original, replacement in (report.replacements or {}).items():
            replacements[id(original)] = replacement
        imports.extend(i for i in report.imports if i not in imports)
    new_module = module.visit(_Replace(replacements))
    if imports:
        new_module = add_imports(new_module, imports)
    gone = _names_removed(reports)
    if used_elsewhere is not None:
        gone = {name for name in gone if not used_elsewhere(name)}
    if gone:
        new_module = remove_unused_imports(new_module, gone)
    new_source = new_module.code
    try:
        # The prefilters may decide that no rule needs the fixed text parsed; it must parse anyway.
        parse(new_source)
        return new_source, analyse(new_source, path, rules, honour_noqa=honour_noqa)
    except SourceError:
        return new_source, None


# -- imports a fix orphans ---------------------------------------------------------------------


def _names_removed(reports: list[Report]) -> set[str]:
    """Names the fixes' replaced nodes mention and their replacements do not read (a
    replacement writing `os.environ` does not keep `from os import environ` in use)."""
    before: set[str] = set()
    after: set[str] = set()
    for report in reports:
        for original, replacement in (report.replacements or {}).items():
            before |= names_in(original)
            if isinstance(replacement, cst.FlattenSentinel):
                for node in replacement.nodes:
                    after |= referenced_names(node)
            elif isinstance(replacement, cst.CSTNode):
                after |= referenced_names(replacement)
    return before - after


def _bound_names(small: cst.Import | cst.ImportFrom) -> list[tuple[cst.ImportAlias, str]]:
    if isinstance(small.names, cst.ImportStar):
        return []
    found = []
    for alias in small.names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            found.append((alias, alias.asname.name.value))
        else:
            name = alias.name
            while isinstance(name, cst.Attribute):
                name = name.value
            found.append((alias, name.value))  # type: ignore[union-attr]
    return found


def remove_unused_imports(module: cst.Module, candidates: set[str]) -> cst.Module:
    """Drop the top-level imports of `candidates` (names a fix removed) that nothing in the
    module mentions any more, not even a string or a comment (`__all__`, a string annotation).
    An import line with a comment (`# noqa`) is the user's to keep; `__future__` is never
    touched. Comment lines above a dropped line move to the next statement."""
    lines = [
        (index, line)
        for index, line in enumerate(module.body)
        if isinstance(line, cst.SimpleStatementLine)
        and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in line.body)
        and line.trailing_whitespace.comment is None
        and not any(isinstance(small, cst.ImportFrom) and _module_name(small) == "__future__" for small in line.body)
    ]
    bound = {name for _, line in lines for small in line.body for _, name in _bound_names(small)}  # type: ignore[arg-type]
    candidates = candidates & bound
    if not candidates:
        return module
    text = module.code
    import_text = "".join(module.code_for_node(line) for _, line in lines)
    unused = {
        name
        for name in candidates
        if len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", text))
        == len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", import_text))
    }
    if not unused:
        return module
    body = list(module.body)
    dropped: list[int] = []
    for index, line in lines:
        kept_smalls = []
        changed = False
        for small in line.body:
            pairs = _bound_names(small)  # type: ignore[arg-type]
            keep = [alias for alias, name in pairs if name not in unused]
            if len(keep) == len(pairs):
                kept_smalls.append(small)
                continue
            changed = True
            if keep:
                keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                kept_smalls.append(small.with_changes(names=keep))
        if not kept_smalls:
            dropped.append(index)
        elif changed:
            kept_smalls[-1] = kept_smalls[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            body[index] = line.with_changes(body=kept_smalls)
    for index in reversed(dropped):
        removed = body.pop(index)
        if index < len(body):
            following = body[index]
            leading = list(following.leading_lines)
            if index == 0:  # now the first statement: no blank lines above it
                while leading and leading[0].comment is None:
                    leading.pop(0)
            if any(empty.comment is not None for empty in removed.leading_lines) or not leading:
                leading = [*removed.leading_lines, *leading]
            body[index] = following.with_changes(leading_lines=leading)
    return module.with_changes(body=body)


# -- imports and definitions a fix adds -------------------------------------------------------

_FUTURE, _STDLIB, _THIRD_PARTY, _LOCAL = range(4)


def _module_name(small: cst.Import | cst.ImportFrom) -> str:
    if isinstance(small, cst.Import):
        return dotted_name(small.names[0].name) or ""
    return "." * len(small.relative) + (dotted_name(small.module) or "" if small.module is not None else "")


def _section(small: cst.Import | cst.ImportFrom) -> int:
    name = _module_name(small)
    if name == "__future__":
        return _FUTURE
    if name.startswith("."):
        return _LOCAL
    return _STDLIB if name.partition(".")[0] in _STDLIB_NAMES else _THIRD_PARTY


def _sort_key(small: cst.Import | cst.ImportFrom) -> tuple[bool, str]:
    # isort's and ruff's default order within a section: `import x` lines, then `from x import`.
    return isinstance(small, cst.ImportFrom), _module_name(small).lower()


def _is_import_line(line: cst.CSTNode) -> bool:
    return isinstance(line, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in line.body
    )


def add_imports(module: cst.Module, statements: Sequence[str]) -> cst.Module:
    """Add each statement a fix needs at the top level that the module does not already have.
    An `import x` / `from x import y` goes where isort and ruff would put it in the leading
    import block: in its section (`__future__`, standard library, third party, local), in
    order, a new section set off by a blank line. Any other statement (a module-level `def`
    a fix calls) goes after that block, once: a `def` of a name the module already binds at
    the top level is not added again."""
    existing = {
        module.code_for_node(small).strip()
        for line in module.body
        if isinstance(line, cst.SimpleStatementLine)
        for small in line.body
        if isinstance(small, (cst.Import, cst.ImportFrom))
    }
    defined = {line.name.value for line in module.body if isinstance(line, (cst.FunctionDef, cst.ClassDef))}
    definitions: list[cst.FunctionDef | cst.ClassDef] = []
    for statement in statements:
        if statement in existing:
            continue
        # Parsed with the default config (a module's odd indent, e.g. a form feed, is not valid
        # config); the new lines still render with the module's own newline.
        new = cst.parse_statement(statement)
        if _is_import_line(new):
            module = _add_import(module, new)  # type: ignore[arg-type]
        elif isinstance(new, (cst.FunctionDef, cst.ClassDef)) and new.name.value not in defined:
            definitions.append(new)
            defined.add(new.name.value)
        existing.add(statement)
    return _add_definitions(module, definitions) if definitions else module


def _import_block(body: list[cst.BaseStatement]) -> tuple[int, int]:
    """The leading import block: [start, end) of `body`, after the module docstring."""
    start = 1 if body and is_docstring(body[0]) else 0
    end = start
    while end < len(body) and _is_import_line(body[end]):
        end += 1
    return start, end


def _add_import(module: cst.Module, new: cst.SimpleStatementLine) -> cst.Module:
    body = list(module.body)
    start, end = _import_block(body)
    small = new.body[0]
    section, key = _section(small), _sort_key(small)  # type: ignore[arg-type]
    same = [i for i in range(start, end) if _section(body[i].body[0]) == section]  # type: ignore[attr-defined]
    if same:
        position = next((i for i in same if _sort_key(body[i].body[0]) > key), same[-1] + 1)  # type: ignore[attr-defined]
        if position == same[0]:
            # First of its section: it takes the section's leading lines (a blank line or a comment).
            new = new.with_changes(leading_lines=body[position].leading_lines)
            body[position] = body[position].with_changes(leading_lines=[])
        body.insert(position, new)
    else:
        later = next((i for i in range(start, end) if _section(body[i].body[0]) > section), None)  # type: ignore[attr-defined]
        if later is not None:
            new = new.with_changes(leading_lines=body[later].leading_lines)
            body[later] = body[later].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            body.insert(later, new)
        elif end > start:
            body.insert(end, new.with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
        else:
            # The first import: the code after it is set off as isort sets it off (two blank
            # lines before a def or class, one before anything else).
            if end < len(body):
                following = body[end]
                wanted = 2 if isinstance(following, (cst.FunctionDef, cst.ClassDef)) else 1
                blanks = 0
                for line in following.leading_lines:
                    if line.comment is not None:
                        break
                    blanks += 1
                if blanks < wanted:
                    extra = [cst.EmptyLine(indent=False)] * (wanted - blanks)
                    body[end] = following.with_changes(leading_lines=[*extra, *following.leading_lines])
                new = new.with_changes(leading_lines=following.leading_lines[:0])
            body.insert(end, new)
    return module.with_changes(body=body)


def _add_definitions(module: cst.Module, new: list[cst.FunctionDef | cst.ClassDef]) -> cst.Module:
    """After the leading imports, in order, two blank lines on each side (PEP 8)."""
    body = list(module.body)
    _, end = _import_block(body)
    two = [cst.EmptyLine(indent=False), cst.EmptyLine(indent=False)]
    new = [definition.with_changes(leading_lines=two if end > 0 or i else []) for i, definition in enumerate(new)]
    if end < len(body):
        following = body[end]
        blanks = sum(1 for line in following.leading_lines[:2] if line.comment is None and not line.whitespace.value)
        body[end] = following.with_changes(leading_lines=[*two[: 2 - blanks], *following.leading_lines])
    body[end:end] = new
    return module.with_changes(body=body)


_STDLIB_NAMES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}


__all__ = ["FixOutcome", "add_imports", "fix_text", "parse", "remove_unused_imports"]
