"""Apply fixes as node replacements, re-parse, and repeat until nothing fixable is left.

Each pass lints the current text, applies every allowed fix whose node is not inside another
fix's node (the outer one wins; the inner one is found again next pass), adds the imports the
fixes need, and re-parses the result. A pass whose output does not parse is retried fix by fix,
and the fixes that break parsing are dropped and reported. The loop ends at a fixed point, so
fix(fix(x)) == fix(x).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from ddplint.edits import is_docstring
from ddplint.engine import Analysis, SourceError, analyse, parse
from ddplint.rule import Report, Rule

MAX_PASSES = 10


@dataclass
class FixOutcome:
    source: str
    fixed_count: int
    remaining: Analysis
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
) -> FixOutcome:
    """Fix `source` to a fixed point. Raises SourceError if the original does not parse."""
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
        new_source, new_analysis = _try_apply(analysis.module, applied, path, rules, honour_noqa)
        if new_analysis is None:
            # Find the fixes that break the file, drop them, keep the others.
            keep = []
            for report, diagnostic in zip(analysis.reports, analysis.diagnostics):
                if report not in applied:
                    continue
                alone_source, alone = _try_apply(analysis.module, [report], path, rules, honour_noqa)
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
            new_source, new_analysis = _try_apply(analysis.module, keep, path, rules, honour_noqa)
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


def _try_apply(module: cst.Module, reports: list[Report], path: str, rules, honour_noqa: bool):
    replacements: dict[int, object] = {}
    imports: list[str] = []
    for report in reports:
        for original, replacement in (report.replacements or {}).items():
            replacements[id(original)] = replacement
        imports.extend(i for i in report.imports if i not in imports)
    new_module = module.visit(_Replace(replacements))
    if imports:
        new_module = add_imports(new_module, imports)
    new_source = new_module.code
    try:
        # The prefilters may decide that no rule needs the fixed text parsed; it must parse anyway.
        parse(new_source)
        return new_source, analyse(new_source, path, rules, honour_noqa=honour_noqa)
    except SourceError:
        return new_source, None


def add_imports(module: cst.Module, statements: Sequence[str]) -> cst.Module:
    """Add each `import x` / `from x import y` that the module does not already have at its
    top level, after the docstring, `__future__` imports and the leading import block."""
    existing = {
        module.code_for_node(small).strip()
        for line in module.body
        if isinstance(line, cst.SimpleStatementLine)
        for small in line.body
        if isinstance(small, (cst.Import, cst.ImportFrom))
    }
    missing = [statement for statement in statements if statement not in existing]
    if not missing:
        return module
    body = list(module.body)
    position = 0
    for index, line in enumerate(body):
        if is_docstring(line) and index == 0:
            position = 1
            continue
        if isinstance(line, cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in line.body
        ):
            position = index + 1
            continue
        break
    # Parsed with the default config (a module's odd indent, e.g. a form feed, is not valid
    # config); the new lines still render with the module's own newline.
    new_lines = [cst.parse_statement(statement) for statement in missing]
    body[position:position] = new_lines
    return module.with_changes(body=body)


__all__ = ["FixOutcome", "add_imports", "fix_text", "parse"]
