"""What a scenario's measure works with: the launches of one phase, and what they printed.

A scenario's ``measure(runs, ctx)`` gets ``runs``, its launches by name (``"main"`` unless it
declares others), and ``ctx`` (``gpus``, ``backend``, ``nproc``), and returns a
:class:`Measurement`. The helpers here find a scenario's result line in a launch and describe
a launch that gave none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .launcher import LaunchResult


@dataclass
class Measurement:
    symptom: bool | None  # None: could not be observed
    text: str
    completed: bool = False
    needs_gpu: bool = False
    data: dict = field(default_factory=dict)


@dataclass
class LaunchSpec:
    """One launch of a scenario's program: where it pauses for ``observe`` and whether the
    whole job is then killed."""

    pause: str | None = None
    observe: Callable[[str], dict] | None = None
    kill: bool = False


def result(run: LaunchResult, rule: str) -> dict | None:
    """The rule's result line (DDPLINT_RESULT) in this launch, or None."""
    for payload in run.results:
        if payload.get("rule") == rule:
            return payload
    return None


def completed(run: LaunchResult, payload: dict | None) -> bool:
    return payload is not None and "crashed" not in payload and not run.timed_out


def payload(runs: dict[str, LaunchResult], rule: str) -> tuple[LaunchResult, dict | None]:
    """The main launch and the rule's result in it (None if missing or crashed)."""
    run = runs["main"]
    found = result(run, rule)
    return run, (None if found is None or "crashed" in found else found)


def from_result(rule: str, measure_result: Callable) -> Callable:
    """`measure(runs, ctx)` for a scenario measured from its result line in the main launch."""

    def measure(runs: dict[str, LaunchResult], ctx: dict) -> Measurement:
        run, found = payload(runs, rule)
        return no_result(runs, rule) if found is None else measure_result(run, found, ctx)

    return measure


def no_result(runs: dict[str, LaunchResult], rule: str) -> Measurement:
    """Why there is nothing to measure: a hang with each rank's last output, or the exits."""
    parts = []
    for name, r in runs.items():
        if r.timed_out:
            parts.append(f"{name}: hang after {r.elapsed:.0f}s; last output: {r.hang_report()}")
        else:
            errs = r.errors()
            parts.append(f"{name}: exit {r.returncode}" + (f"; {errs[0]}" if errs else ""))
    return Measurement(None, f"no {rule} result (" + "; ".join(parts) + ")")


def overlap(per_rank: list[list[int]], n: int) -> tuple[int, bool]:
    """Indices read by every rank, and whether the ranks' reads are disjoint and cover 0..n-1."""
    sets = [set(r) for r in per_rank]
    shared = len(set.intersection(*sets)) if len(sets) > 1 else 0
    union = set().union(*sets)
    return shared, sum(len(r) for r in per_rank) == len(union) and union == set(range(n))
