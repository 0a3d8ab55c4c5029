"""`--output-format github`: workflow commands that GitHub Actions shows as annotations.

https://docs.github.com/actions/reference/workflow-commands-for-github-actions
"""

from __future__ import annotations

from ddplint.core.diagnostics import Diagnostic


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_diagnostic(diagnostic: Diagnostic) -> str:
    properties: dict[str, object] = {"file": diagnostic.path}
    where = ""
    if diagnostic.cell is None:
        properties.update(line=diagnostic.line, col=diagnostic.col, endLine=diagnostic.end_line, endColumn=diagnostic.end_col)
    else:  # a notebook: lines of the JSON file would point elsewhere; annotate the file
        where = f"cell {diagnostic.cell}, line {diagnostic.line}: "
    properties["title"] = f"{diagnostic.code} {diagnostic.name}"
    joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    return f"::error {joined}::{_escape_data(f'{where}{diagnostic.code} {diagnostic.message}')}"


def format_error(path: str, error: str) -> str:
    return f"::error file={_escape_property(path)},title=ddplint::{_escape_data(error)}"
