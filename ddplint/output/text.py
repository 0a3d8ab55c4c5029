"""The default human-readable output and the `ddplint rule CODE` explanation."""

from __future__ import annotations

from collections.abc import Sequence

from ddplint.diagnostics import Applicability, Diagnostic

_FIX_MARKERS = {Applicability.SAFE: " [fix]", Applicability.UNSAFE: " [unsafe fix]"}


def format_diagnostic(diagnostic: Diagnostic) -> str:
    marker = _FIX_MARKERS[diagnostic.fix.applicability] if diagnostic.fix else ""
    return f"{diagnostic.path}:{diagnostic.line}:{diagnostic.col}: {diagnostic.code} {diagnostic.message}{marker}"


def _problems(count: int) -> str:
    return f"{count} problem" + ("" if count == 1 else "s")


def summary(diagnostics: Sequence[Diagnostic], *, fixed: int = 0, diff: bool = False, errors: int = 0) -> str:
    text = _summary(diagnostics, fixed=fixed, diff=diff)
    if errors:
        text += f" {errors} file{'' if errors == 1 else 's'} could not be checked."
    return text


def _summary(diagnostics: Sequence[Diagnostic], *, fixed: int, diff: bool) -> str:
    safe = sum(1 for d in diagnostics if d.fix and d.fix.applicability is Applicability.SAFE)
    unsafe = sum(1 for d in diagnostics if d.fix and d.fix.applicability is Applicability.UNSAFE)
    fixable = []
    if safe:
        fixable.append(f"{safe} fixable with --fix")
    if unsafe:
        fixable.append(f"{unsafe} with --unsafe-fixes")
    detail = f" ({', '.join(fixable)})" if fixable else ""
    if diff:
        return f"Would fix {_problems(fixed)}; {_problems(len(diagnostics))} would be left{detail}"
    head = f"Fixed {_problems(fixed)}. " if fixed else ""
    if not diagnostics:
        return f"{head}No problems found." if head else "No problems found."
    left = " left" if fixed else ""
    return f"{head}Found {_problems(len(diagnostics))}{left}{detail}."


def explain(rule) -> str:
    fix = {Applicability.SAFE: "safe (applied by --fix)", Applicability.UNSAFE: "unsafe (applied with --unsafe-fixes)"}
    lines = [f"{rule.code} {rule.name}", "", rule.explanation(), "", f"Fix: {fix.get(rule.fix, 'none')}"]
    example = next((item for item in rule.flagged if item.fixed is not None), None) or (
        rule.flagged[0] if rule.flagged else None
    )
    if example is not None:
        lines += ["", "Example (flagged):", "", _indent(example.code)]
        if example.fixed is not None:
            lines += ["Fixed:", "", _indent(example.fixed)]
    return "\n".join(lines).rstrip() + "\n"


def _indent(code: str) -> str:
    return "".join(f"    {line}" if line.strip() else line for line in code.splitlines(keepends=True))
