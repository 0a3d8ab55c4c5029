"""The values that flow out of the engine: findings, their fixes, and per-file results.

Nothing here imports libcst, so output formatters and the CLI can use these types cheaply.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """How a fix may be applied: `--fix` applies SAFE ones, `--unsafe-fixes` also UNSAFE ones."""

    SAFE = "safe"
    UNSAFE = "unsafe"

    def allowed(self, unsafe_fixes: bool) -> bool:
        return self is Applicability.SAFE or unsafe_fixes


@dataclass(frozen=True)
class Edit:
    """One replaced span of the original text (1-based lines, 1-based columns, end exclusive)."""

    line: int
    col: int
    end_line: int
    end_col: int
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    edits: tuple[Edit, ...] = ()
    imports: tuple[str, ...] = ()


class StepKind(str, enum.Enum):
    """What a step of a finding's chain establishes."""

    MADE = "made"  # where the value (model, sampler, file, option) is made
    REACHES = "reaches"  # how it reaches the line reported (a parameter, a return, an attribute)
    RUNS = "runs"  # which processes run the line, and from which entry point
    HARM = "harm"  # why that breaks training (what the file holds, which loop trains)


@dataclass(frozen=True)
class Step:
    """One link of the chain that makes a finding a bug, with where it is: a file (as the
    finding's own path is written: relative to where ddplint runs, or absolute), a line, a
    column (1-based)."""

    kind: StepKind
    message: str
    path: str
    line: int
    col: int = 1


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    name: str
    message: str
    fix: Fix | None = None
    # In a notebook: the cell's number (1-based, among all cells); `line` is then the line in
    # the cell, as are the lines of the fix's edits.
    cell: int | None = None
    # The steps that make it a bug, in order (made, reaches, runs, harm); the finding's own
    # line is the last link and is not repeated.
    chain: tuple[Step, ...] = ()

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.col, self.code)


@dataclass
class FileResult:
    """Everything ddplint learned about one file (or stdin buffer)."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None
    # Set only when fixing: the text after all applied fixes, and how many findings were fixed.
    fixed_source: str | None = None
    original_source: str | None = None
    fixed_count: int = 0
    fixed_codes: dict[str, int] = field(default_factory=dict)
    # Fixes that were dropped because the result would not parse, or that did not converge.
    fix_problems: list[str] = field(default_factory=list)
    # The other modules of the project whose text the result may depend on (ddplint.engine.cache).
    reads: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.fixed_source is not None and self.fixed_source != self.original_source
