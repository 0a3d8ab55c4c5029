"""The default human-readable output and the `ddplint rule CODE` explanation."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from ddplint.core.diagnostics import Applicability, Diagnostic

_FIX_MARKERS = {Applicability.SAFE: " [fix]", Applicability.UNSAFE: " [unsafe fix]"}



def use_colour(stream: TextIO) -> bool:
    """Colour for a terminal; NO_COLOR (https://no-color.org) turns it off, FORCE_COLOR on."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour and text else text


def format_diagnostic(diagnostic: Diagnostic, colour: bool = False) -> str:
    marker = _FIX_MARKERS[diagnostic.fix.applicability] if diagnostic.fix else ""
    where = _paint(f"{location(diagnostic)}:", "1", colour)
    code = _paint(diagnostic.code, "1;31", colour)
    return f"{where} {code} {diagnostic.message}{_paint(marker, '36', colour)}"


def location(diagnostic: Diagnostic) -> str:
    """`path:line:col`, or `nb.ipynb:cell 3:2:5` in a notebook."""
    cell = f"cell {diagnostic.cell}:" if diagnostic.cell is not None else ""
    return f"{diagnostic.path}:{cell}{diagnostic.line}:{diagnostic.col}"


def statistics(diagnostics: Sequence[Diagnostic]) -> list[str]:
    """One line per rule, most frequent first: count, code, name, and whether --fix can fix it."""
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = {d.code for d in diagnostics if d.fix and d.fix.applicability is Applicability.SAFE}
    width = len(str(max(counts.values(), default=0)))
    return [
        f"{count:>{width}}  {code}  {names[code]}{' [fix]' if code in fixable else ''}"
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def fixes_applied(path: str, fixed_codes: dict[str, int], names: dict[str, str]) -> list[str]:
    """`--show-fixes`: what was fixed in one file."""
    lines = [f"{path}:"]
    lines += [f"    {count} x {code} ({names.get(code, '')})" for code, count in sorted(fixed_codes.items())]
    return lines


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
    frameworks = ", ".join(framework.value for framework in rule.frameworks)
    lines = [f"{rule.code} {rule.name}", "", rule.explanation(), "", f"Fix: {fix.get(rule.fix, 'none')}",
             f"Frameworks: {frameworks}"]
    example = next((item for item in rule.flagged_examples if item.fixed is not None), None) or (
        rule.flagged_examples[0] if rule.flagged_examples else None
    )
    if example is not None:
        lines += ["", "Example (flagged):", "", _indent(example.code)]
        lines += _chain_of(rule, example)
        if example.fixed is not None:
            lines += ["Fixed:", "", _indent(example.fixed)]
    return "\n".join(lines).rstrip() + "\n"


def _chain_of(rule, example) -> list[str]:
    """The example's first finding step by step: what each finding's chain shows, the `full`
    output format prints and editors link to."""
    from ddplint.engine.lint import analyse

    found = [d for d in analyse(example.code, "example.py", [rule]).diagnostics if d.code == rule.code]
    if not found or not found[0].chain:
        return []
    steps = [f"    {step.kind.value}: {step.message} (line {step.line})" for step in found[0].chain]
    return ["What the finding shows, step by step:", "", *steps, ""]


def _indent(code: str) -> str:
    return "".join(f"    {line}" if line.strip() else line for line in code.splitlines(keepends=True))
