"""The doctor's checks: one function each, registered with its code, and what a check returns.

A check is a function of the gathered facts (`ddplint.doctor.facts.Facts`) that returns the
problems it finds, as `Found`, and raises `CouldNotCheck` with the reason when a fact it needs
is unknown (`Unknown.need` raises it for them). The registry gives each its code (`DDPE1..`
the machine, `DDPE2..` the environment, `DDPE3..` the software, `DDPE4..` the launch), its
kebab-case name and its explanation (the function's docstring, printed in docs/doctor.md).
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

PREFIX = "DDPE"
SUBJECTS = ("machine", "environment", "software", "launch")


class Severity(str, enum.Enum):
    """An error stops or breaks the run; a warning makes it slow, fragile or wrong in a way
    the run may survive. Both make `ddplint doctor` exit 1."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Where:
    """A place in a file the problem is about (1-based line and column)."""

    path: str
    line: int
    col: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Found:
    """One problem a check found: what is wrong, and what to do about it."""

    severity: Severity
    message: str
    fix: str
    where: Where | None = None


class CouldNotCheck(Exception):
    """A fact the check needs is unknown; the message says why, for the user."""


@dataclass(frozen=True)
class Unknown:
    """A fact that could not be read, and why (`gpus: no nvidia-smi on PATH`)."""

    reason: str


def known(value):
    """`value`, or CouldNotCheck with its reason where it is Unknown."""
    if isinstance(value, Unknown):
        raise CouldNotCheck(value.reason)
    return value


@dataclass(frozen=True)
class Check:
    code: str
    name: str
    subject: str
    function: Callable

    @property
    def explanation(self) -> str:
        return inspect.cleandoc(self.function.__doc__ or "")

    @property
    def summary(self) -> str:
        """The explanation's first sentence."""
        return self.explanation.split("\n\n")[0].replace("\n", " ")


@dataclass(frozen=True)
class Outcome:
    """What one check said: its problems, or why it could not check (then no problems)."""

    check: Check
    found: tuple[Found, ...] = ()
    unchecked: str | None = None
    crashed: bool = False  # `unchecked` is a bug in ddplint


_REGISTRY: dict[str, Check] = {}


def check(code: str, name: str, subject: str) -> Callable:
    """Register the decorated function as the check `code`."""
    if not code.startswith(PREFIX) or subject not in SUBJECTS:
        raise ValueError(f"{code} {name}: a doctor check's code starts with {PREFIX} and its subject is one of {SUBJECTS}")

    def register(function: Callable) -> Callable:
        if code in _REGISTRY or any(known.name == name for known in _REGISTRY.values()):
            raise RuntimeError(f"doctor check {code} {name} is defined twice")
        _REGISTRY[code] = Check(code, name, subject, function)
        return function

    return register


def all_checks() -> list[Check]:
    """Every check, by code. (The modules that define them register them when imported.)"""
    from ddplint.doctor import environment, launch, machine, software  # noqa: F401

    return [_REGISTRY[code] for code in sorted(_REGISTRY)]


def run(checks: Iterable[Check], facts) -> list[Outcome]:
    outcomes = []
    for one in checks:
        try:
            outcomes.append(Outcome(one, tuple(one.function(facts))))
        except CouldNotCheck as reason:
            outcomes.append(Outcome(one, unchecked=str(reason)))
        except Exception as error:  # a bug in a check: said, and the other checks still run
            outcomes.append(Outcome(one, unchecked=f"internal error ({type(error).__name__}: {error})", crashed=True))
    return outcomes
