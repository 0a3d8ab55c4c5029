"""Before -> fix -> after, per rule, and the verdict: the generic loop.

For each rule with a scenario (``ddplint/harness/scenarios/ddpNNN/``): copy its program to a
temporary folder, run it under torchrun ("before"), fix a second copy with ddplint's own
fixer, run that ("after"), and judge from what the scenario's measure reports. A verdict is
CONFIRMED only when the symptom was seen before, was not seen after, and the fixed run
completed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import launcher, tempdirs
from .launcher import LaunchResult, Topology
from .measuring import Measurement, result
from .scenarios import Scenario, all_scenarios

PACKAGE_PARENT = Path(__file__).resolve().parents[2]  # the folder holding the ddplint package

CONFIRMED, FAILED, NEEDS_GPU = "CONFIRMED", "FAILED", "NEEDS GPU"
# The symptom was shown, but ddplint has no fix: for a bundled scenario, the pattern its rule
# recommends removed it; that is not ddplint's fix, so never CONFIRMED.
SHOWN_NO_FIX = "SYMPTOM SHOWN, NO FIX"


@dataclass
class RuleOutcome:
    rule: str
    before: Measurement
    after: Measurement | None
    verdict: str
    reason: str
    seconds: float
    fix_seconds: float = 0.0
    mode: str = ""

    def to_json(self) -> dict:
        def m(x: Measurement | None):
            if x is None:
                return None
            return {"symptom": x.symptom, "text": x.text, "completed": x.completed,
                    "data": x.data}

        return {"rule": self.rule, "verdict": self.verdict, "reason": self.reason,
                "mode": self.mode, "before": m(self.before), "after": m(self.after),
                "seconds": round(self.seconds, 2), "fix_seconds": round(self.fix_seconds, 2)}


# --------------------------------------------------------------------------- fixing


@dataclass
class FixAttempt:
    """One fixer run on a scenario's copy: whether it changed the file, and if not, why."""

    changed: bool
    detail: str = ""


def ddplint_fixer(path: Path) -> FixAttempt:
    """ddplint's own fixer on one file (exit 0 and 1 both mean it ran)."""
    before = path.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "ddplint", "check", "--fix", "--unsafe-fixes", str(path)],
        capture_output=True, text=True, env=child_env(), timeout=120,
    )
    tail = ((proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""])[0]
    if proc.returncode not in (0, 1):
        return FixAttempt(False, f"fixer exited {proc.returncode}: {tail}")
    changed = path.read_bytes() != before
    # Unchanged: say what ddplint printed (e.g. no such rule, or no ddplint at all).
    return FixAttempt(changed, "" if changed else f"ddplint exited {proc.returncode}: {tail}")


Fixer = Callable[[Path], FixAttempt]


# --------------------------------------------------------------------------- running


@dataclass
class Options:
    topology: Topology
    timeout: float = 180.0
    fixer: Fixer = ddplint_fixer
    log: Callable[[str], None] = lambda msg: None


def child_env() -> dict[str, str]:
    """This environment, with the ddplint being run importable in the children."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_PARENT), env.get("PYTHONPATH")]))
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    return env


def scenarios_for(rules: list[str]) -> list[Scenario]:
    found = all_scenarios()
    return [found[r] for r in rules]


def _run_phase(phase: str, scenarios: list[Scenario], programs: dict[str, Path], opts: Options,
               timings: dict[str, float]) -> dict[str, dict[str, LaunchResult]]:
    """Launch every scenario of one phase; the batchable ones share one launch."""
    runs: dict[str, dict[str, LaunchResult]] = {}
    batch = [s.rule for s in scenarios if s.batchable]
    if len(batch) > 1:
        opts.log(f"{phase}: {' '.join(batch)} (one launch)")
        res = launcher.run_torchrun(
            "ddplint.harness.batch", opts.topology, timeout=opts.timeout,
            cwd=str(programs[batch[0]].parent), script_args=[f"{r}={programs[r]}" for r in batch],
            env=child_env(), module=True,
        )
        for r in batch:
            found = result(res, r)
            if found is not None and "crashed" not in found:
                runs[r] = {"main": res}
                timings[r] += res.elapsed / len(batch)
            else:
                opts.log(f"{phase}: {r} gave no result in the shared launch; running it alone")
        if res.timed_out:
            opts.log(f"{phase}: shared launch hung: {res.hang_report()}")
    for s in scenarios:
        if s.rule in runs:
            continue
        runs[s.rule] = {}
        for name, spec in s.launches(opts.topology.gpus, phase).items():
            opts.log(f"{phase}: {s.rule} ({name})")
            program = programs[s.rule]
            # Each rule runs in its own folder (checkpoints, logs land there).
            res = launcher.run_torchrun(
                str(program), opts.topology, timeout=opts.timeout, cwd=str(program.parent),
                env=child_env(), pause_tag=spec.pause, on_pause=spec.observe,
                kill_after_pause=spec.kill,
            )
            runs[s.rule][name] = res
            timings[s.rule] += res.elapsed
    return runs


def _copy_program(scenario: Scenario, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(scenario.program, dest / scenario.program.name))


def _fix(path: Path, fixer: Fixer) -> FixAttempt:
    try:
        return fixer(path)
    except (OSError, subprocess.SubprocessError) as exc:
        return FixAttempt(False, f"fixer could not run: {exc}")


def _rewrite(path: Path, recommended: Callable[[str], str]) -> FixAttempt:
    """A rule without a fix: its scenario writes the pattern the rule recommends."""
    text = path.read_text()
    path.write_text(recommended(text))
    return FixAttempt(recommended(text) != text, "the scenario's recommended pattern did not apply")


def verify(rules: list[str], opts: Options) -> list[RuleOutcome]:
    scenarios = scenarios_for(rules)
    ctx = {"gpus": opts.topology.gpus, "backend": opts.topology.backend,
           "nproc": opts.topology.nproc_per_node}
    timings = {r: 0.0 for r in rules}
    fix_times = {r: 0.0 for r in rules}
    work = Path(tempdirs.make("verify"))
    try:
        before_programs, after_programs, fix_notes = {}, {}, {}
        for s in scenarios:
            before_programs[s.rule] = _copy_program(s, work / s.rule / "before")
            fixed = _copy_program(s, work / s.rule / "after")
            t0 = time.monotonic()
            out = _rewrite(fixed, s.recommended) if s.recommended else _fix(fixed, opts.fixer)
            fix_times[s.rule] = time.monotonic() - t0
            if out.changed:
                after_programs[s.rule] = fixed
            else:
                fix_notes[s.rule] = "fix did not apply" + (f" ({out.detail})" if out.detail else "")
        before_runs = _run_phase("before", scenarios, before_programs, opts, timings)
        fixed_scenarios = [s for s in scenarios if s.rule in after_programs]
        after_runs = _run_phase("after", fixed_scenarios, after_programs, opts, timings)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    outcomes = []
    for s in scenarios:
        r = s.rule
        before = s.measure(before_runs[r], ctx)
        after = s.measure(after_runs[r], ctx) if r in after_runs else None
        verdict, reason = judge(before, after, fix_notes.get(r))
        if s.recommended is not None and verdict == CONFIRMED:
            verdict = SHOWN_NO_FIX
            reason = ("symptom present before, absent with the pattern the rule recommends; "
                      "ddplint has no fix for it")
        outcomes.append(RuleOutcome(r, before, after, verdict, reason,
                                    timings[r] + fix_times[r], fix_times[r],
                                    before.data.get("mode", "")))
    return outcomes


def passed(outcomes: list[RuleOutcome]) -> bool:
    """Every rule behaved as ddplint says: its fix confirmed, or, for a rule without a fix,
    its symptom shown and the recommended pattern clear of it."""
    return bool(outcomes) and all(o.verdict in (CONFIRMED, SHOWN_NO_FIX) for o in outcomes)


def judge(before: Measurement, after: Measurement | None, fix_note: str | None):
    if before.needs_gpu or (after is not None and after.needs_gpu):
        return NEEDS_GPU, "symptom observable only on GPUs; none visible"
    if before.symptom is None:
        return FAILED, "symptom could not be measured before the fix"
    if not before.symptom:
        return FAILED, "symptom not present before the fix"
    if fix_note:
        return FAILED, fix_note
    if after is None or after.symptom is None:
        return FAILED, "symptom could not be measured after the fix"
    if after.symptom:
        return FAILED, "symptom still present after the fix"
    if not after.completed:
        return FAILED, "fixed program did not complete"
    return CONFIRMED, "symptom present before, absent after; fixed run completed"
