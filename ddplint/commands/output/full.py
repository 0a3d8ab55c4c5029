"""`--output-format full`: each finding with its source line, a caret under it, the chain of
steps that makes it a bug, and its fix as a diff, the way ruff shows findings by default."""

from __future__ import annotations

import difflib

from ddplint.core.diagnostics import Diagnostic
from ddplint.core.lines import split_lines
from ddplint.commands.output.text import format_diagnostic


def format_full(diagnostic: Diagnostic, source: str | None, colour: bool = False) -> str:
    """The text line, then (when `source` is known) the snippet and the fix; a blank line ends it."""
    lines = [format_diagnostic(diagnostic, colour)]
    if source is not None and diagnostic.cell is None:
        lines += _snippet(diagnostic, source)
    lines += chain_lines(diagnostic)
    if source is not None and diagnostic.cell is None:
        lines += _fix(diagnostic, source)
    return "\n".join(lines) + "\n"


def chain_lines(diagnostic: Diagnostic) -> list[str]:
    """The finding's chain, a step a line: what it establishes, and where."""
    width = max((len(step.kind.value) for step in diagnostic.chain), default=0)
    return [f"  = {step.kind.value:<{width}}  {step.path}:{step.line}: {step.message}" for step in diagnostic.chain]


def _snippet(diagnostic: Diagnostic, source: str) -> list[str]:
    text = split_lines(source)
    if not 0 < diagnostic.line <= len(text):
        return []
    width = len(str(diagnostic.line))
    line = text[diagnostic.line - 1]
    end = diagnostic.end_col if diagnostic.end_line == diagnostic.line else len(line) + 1
    caret = " " * (diagnostic.col - 1) + "^" * max(1, end - diagnostic.col)
    gutter = " " * width
    return [f"{gutter} |", f"{diagnostic.line} | {line}", f"{gutter} | {caret} {diagnostic.code}", f"{gutter} |"]


def _fix(diagnostic: Diagnostic, source: str) -> list[str]:
    from ddplint.engine.lint import SourceError
    from ddplint.fixing.quickfix import apply_fix

    if diagnostic.fix is None:
        return []
    try:
        fixed = apply_fix(source, diagnostic)
    except SourceError:
        return []
    diff = difflib.unified_diff(split_lines(source), split_lines(fixed), n=0, lineterm="")
    body = [line for line in diff if not line.startswith(("---", "+++", "@@"))]
    return [f"  = {diagnostic.fix.applicability.value} fix:"] + [f"  {line}" for line in body]


def hint(codes: list[str]) -> str:
    return f"For why a rule breaks DDP and how to fix it: ddplint rule {codes[0]}" + (
        f" (rules here: {', '.join(codes)})" if len(codes) > 1 else ""
    )
