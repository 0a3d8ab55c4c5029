"""`--output-format sarif`: SARIF 2.1.0, the format code-scanning services (GitHub, GitLab,
Azure DevOps) read. Rules carry their name, message and explanation; results their fixes, and
the chain of steps that makes each a bug as a code flow ending at the finding."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from urllib.parse import quote

from ddplint import __version__
from ddplint.core.diagnostics import Diagnostic, Edit

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    return quote(path.replace(os.sep, "/"))


def _rule(rule) -> dict:
    explanation = rule.explanation() or rule.message
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": explanation},
        "help": {"text": f"{explanation}\n\nRun `ddplint rule {rule.code}` for an example."},
        "defaultConfiguration": {"level": rule.level},
        "properties": {"fix": rule.fix.value if rule.fix else "none"},
    }


def _region(line: int, col: int, end_line: int, end_col: int) -> dict:
    return {"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": end_col}


def _result(
    diagnostic: Diagnostic, index: dict[str, int], levels: dict[str, str], source: Callable[[str], str | None] | None
) -> dict:
    location = {"artifactLocation": {"uri": _uri(diagnostic.path)}}
    result = {
        "ruleId": diagnostic.code,
        "level": levels.get(diagnostic.code, "error"),
        "message": {"text": diagnostic.message},
        "locations": [
            {
                "physicalLocation": {
                    **location,
                    "region": _region(diagnostic.line, diagnostic.col, diagnostic.end_line, diagnostic.end_col),
                }
            }
        ],
    }
    if diagnostic.code in index:
        result["ruleIndex"] = index[diagnostic.code]
    if diagnostic.cell is not None:  # a notebook: the region's lines count within this cell
        result["properties"] = {"cell": diagnostic.cell}
    if diagnostic.chain:
        result["codeFlows"] = [{"threadFlows": [{"locations": [_flow_step(step) for step in diagnostic.chain] + [
            {"location": {**result["locations"][0], "message": {"text": diagnostic.message}}}
        ]}]}]
    if diagnostic.fix is not None and diagnostic.fix.edits:
        imports = f" (adds {'; '.join(diagnostic.fix.imports)})" if diagnostic.fix.imports else ""
        edits = list(diagnostic.fix.edits) + _import_edits(diagnostic, source)
        result["fixes"] = [
            {
                "description": {"text": f"{diagnostic.fix.applicability.value} fix{imports}"},
                "artifactChanges": [
                    {
                        **location,
                        "replacements": [
                            {
                                "deletedRegion": _region(edit.line, edit.col, edit.end_line, edit.end_col),
                                "insertedContent": {"text": edit.content},
                            }
                            for edit in edits
                        ],
                    }
                ],
            }
        ]
    return result


def _flow_step(step) -> dict:
    """A step of the finding's chain as a SARIF threadFlowLocation."""
    return {
        "location": {
            "physicalLocation": {
                "artifactLocation": {"uri": _uri(step.path)},
                "region": {"startLine": step.line, "startColumn": step.col},
            },
            "message": {"text": f"{step.kind.value}: {step.message}"},
        },
        "kinds": [step.kind.value],
    }


def _import_edits(diagnostic: Diagnostic, source: Callable[[str], str | None] | None) -> list[Edit]:
    """The insertion of the import statements the fix needs, where `--fix` puts them (SARIF
    consumers apply only replacements, so the imports must be one)."""
    if not diagnostic.fix or not diagnostic.fix.imports or source is None or diagnostic.cell is not None:
        return []
    from ddplint.engine.lint import SourceError
    from ddplint.fixing.quickfix import import_edit

    text = source(diagnostic.path)
    try:
        edit = import_edit(text, diagnostic.fix.imports) if text is not None else None
    except SourceError:
        return []
    return [edit] if edit is not None else []


def render(
    diagnostics: Sequence[Diagnostic],
    rules: Sequence,
    errors: Sequence[tuple[str, str]] = (),
    *,
    source: Callable[[str], str | None] | None = None,
) -> str:
    """`rules` are the active rule classes; `errors` are (path, reason) for files not checked;
    `source(path)` gives a file's text, for the import edits of fixes."""
    index = {rule.code: number for number, rule in enumerate(rules)}
    levels = {rule.code: rule.level for rule in rules}
    invocation = {
        "executionSuccessful": not errors,
        "toolExecutionNotifications": [
            {
                "level": "error",
                "message": {"text": reason},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(path)}}}],
            }
            for path, reason in errors
        ],
    }
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ddplint",
                        "version": __version__,
                        "rules": [_rule(rule) for rule in rules],
                    }
                },
                "invocations": [invocation],
                "results": [_result(d, index, levels, source) for d in diagnostics],
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
