"""`--output-format json`: every finding with its position and its fix, for other programs.

Lines and columns are 1-based; an end column is exclusive. In a notebook, `cell` is the cell's
number (1-based) and lines count within that cell. A fix's edits replace spans of the
original text; `imports` are statements the fix adds once at the top of the module. `chain`
lists the steps that make the finding a bug, in order (`kind`: made, reaches, runs, harm),
each with where it is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ddplint.core.diagnostics import Diagnostic, Fix


def diagnostic_to_dict(diagnostic: Diagnostic) -> dict:
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "filename": diagnostic.path,
        "line": diagnostic.line,
        "column": diagnostic.col,
        "end_line": diagnostic.end_line,
        "end_column": diagnostic.end_col,
        "fix": _fix(diagnostic.fix),
        "cell": diagnostic.cell,  # a notebook's cell number (lines are then the cell's), else null
        "chain": [
            {"kind": step.kind.value, "message": step.message, "filename": step.path, "line": step.line, "column": step.col}
            for step in diagnostic.chain
        ],
    }


def _fix(fix: Fix | None) -> dict | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "edits": [
            {
                "line": edit.line,
                "column": edit.col,
                "end_line": edit.end_line,
                "end_column": edit.end_col,
                "content": edit.content,
            }
            for edit in fix.edits
        ],
        "imports": list(fix.imports),
    }


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([diagnostic_to_dict(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"


def render_statistics(diagnostics: Sequence[Diagnostic]) -> str:
    rows: dict[str, dict] = {}
    for diagnostic in diagnostics:
        row = rows.setdefault(
            diagnostic.code, {"code": diagnostic.code, "name": diagnostic.name, "count": 0, "fixable": False}
        )
        row["count"] += 1
        row["fixable"] = row["fixable"] or diagnostic.fix is not None
    ordered = sorted(rows.values(), key=lambda row: (-row["count"], row["code"]))
    return json.dumps(ordered, indent=2) + "\n"
