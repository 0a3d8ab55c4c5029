"""``ddplint verify --script``: what ddplint's fixes change on the user's own training script.

The project (the script's folder, or ``--project``) is copied twice to a temporary folder; the
original is never touched. One copy is linted as it is; ddplint's fixes (safe and unsafe) are
applied to the other. Both run under torchrun with the probes of :mod:`.observe` started by a
``sitecustomize`` shim, and for each finding the symptom its rule causes is looked up in what
the probes recorded before and after the fix.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import cpu_mapping, gpu_failure, launcher, tempdirs
from .launcher import LaunchResult, Topology
from .measuring import Measurement
from .observe import DEADLINE_VAR, MAX_STEPS_VAR, OBSERVE_VAR, PROJECT_VAR, STOP_AT_VAR
from .reach import WATCH_VAR
from .runner import CONFIRMED, NEEDS_GPU, child_env
from .scenarios import all_evidence
from .script_symptoms import unobserved
from .script_verdicts import NOT_IMPORTED, NOT_REACHED, blocker, changed_lines, judge

SHIM = Path(__file__).resolve().parent / "shim"
SKIP = shutil.ignore_patterns(".git", "__pycache__", ".venv", "venv", ".ddplint_cache", "*.egg-info",
                              ".mypy_cache", ".pytest_cache", ".tox", "node_modules", "wandb")
TAIL_LINES = 5  # of each rank's output, shown for a run that did not complete


@dataclass
class ScriptOptions:
    script: Path
    script_args: list[str]
    project: Path
    topology: Topology
    timeout: float = 180.0
    max_steps: int | None = None
    max_seconds: float | None = None
    cpu_mapping: str = ""  # why GPU placement is mapped to the CPU ranks; "" when it is not
    notes: list[str] = field(default_factory=list)  # what the environment check noted
    log: Callable[[str], None] = lambda msg: None


@dataclass
class Run:
    """One launch of the script and what each rank's probes recorded."""

    launch: LaunchResult
    ranks: list[dict]
    max_seconds: float | None = None
    root: Path | None = None  # the copy it ran in

    @property
    def errors(self) -> list[str]:
        seen = [f"rank {r['rank']}: {e}" for r in self.ranks for e in r.get("exceptions", [])]
        return list(dict.fromkeys(seen + self.launch.errors()))

    @property
    def finished(self) -> bool:
        """Every rank reached its end (atexit) without an exception. A nonzero exit after that
        comes from native teardown (gloo can abort there), which the script's work no longer
        depends on."""
        return (bool(self.ranks) and all(r.get("finished") for r in self.ranks)
                and not self.launch.timed_out)

    @property
    def stopped(self) -> bool:
        """Stopped by --max-seconds: neither completed nor failed."""
        return (bool(self.ranks) and not self.launch.timed_out
                and any(r.get("stopped") == "max-seconds" for r in self.ranks))

    def tails(self) -> dict[int, list[str]]:
        return {rank: self.launch.tail(rank, TAIL_LINES) for rank in sorted(self.launch.rank_lines)}

    @property
    def gpu_missing(self) -> str | None:
        """Why this run needs a GPU it did not have, or None. A script may also say so itself
        and exit 0; the exceptions of a run that finished were caught by the script."""
        printed = [ln for lines in self.tails().values() for ln in lines[-3:]]
        return gpu_failure.needs_gpu([] if self.finished else self.errors, printed)

    @property
    def completed(self) -> bool:
        return self.finished and not self.gpu_missing

    def state(self) -> str:
        if self.completed:
            return "completed"
        if self.stopped:
            return f"stopped after {self.max_seconds:g}s by --max-seconds (not completed)"
        if self.gpu_missing and not self.launch.timed_out:
            return f"{'exited' if self.finished else 'failed'} for want of a GPU: {self.gpu_missing}"
        return f"did not complete: {self.failure()}"

    def failure(self) -> str:
        if self.launch.timed_out:
            return (f"hung, killed at --timeout after {self.launch.elapsed:.0f}s; last output: "
                    f"{self.launch.hang_report()}")
        if self.errors:
            return self.errors[0]
        if not self.ranks:
            return f"exit {self.launch.returncode}; no rank reported (probes did not start)"
        return f"exit {self.launch.returncode}"

    def to_json(self) -> dict:
        return {"returncode": self.launch.returncode, "timed_out": self.launch.timed_out,
                "seconds": round(self.launch.elapsed, 2), "completed": self.completed,
                "stopped": self.stopped, "state": self.state(), "errors": self.errors,
                "needs_gpu": self.gpu_missing, "silent_ranks": self.silent_ranks(),
                "output_tail": {str(rank): lines for rank, lines in self.tails().items()},
                "ranks": self.ranks}

    def imported(self, path: str) -> bool:
        return any(path in r.get("modules", ()) for r in self.ranks)

    def reached(self, f: "Finding") -> dict[int, int] | None:
        """Per rank, how many times it ran the finding's line; None if the run did not count."""
        counted = [r for r in self.ranks if r.get("reached") is not None]
        if not counted:
            return None
        key = f"{f.path}:{f.watched_line()}"
        return {r["rank"]: r["reached"].get(key, 0) for r in counted}

    def silent_ranks(self) -> list[int]:
        """The ranks that ended without their final report (stopped by torchrun when another
        rank failed, killed, or aborted in native code): their facts are from before that."""
        return [r["rank"] for r in self.ranks if r.get("finished") is None and not r.get("exceptions")
                and r.get("stopped") not in ("hang", "max-seconds")]

    def end_places(self) -> list[tuple[int, str, int]]:
        """(rank, path, line): where each rank that raised, hung or was stopped was in the
        project's code when it ended."""
        out = []
        for r in self.ranks:
            if r.get("exceptions") and r.get("raised_at"):
                path, line = r["raised_at"][-1][:2]
            elif r.get("stopped_in"):
                path, _, line = r["stopped_in"][0].rpartition(":")
            else:
                continue
            out.append((r["rank"], path, int(line)))
        return out

    def _ended_as(self) -> tuple[str, frozenset]:
        """How the run failed, comparable across the two copies: the failure without rank,
        copy folder or addresses, and the files and functions where the ranks raised."""
        text = self.failure() if not self.launch.timed_out else "hung"
        if self.root is not None:
            text = text.replace(str(self.root), "<project>")
        text = re.sub(r"0x[0-9a-fA-F]+", "0x..", re.sub(r"^rank \d+: ", "", text))
        return text, frozenset((r["raised_at"][-1][0], r["raised_at"][-1][2]) for r in self.ranks
                               if r.get("exceptions") and r.get("raised_at"))

    def ending(self, before: "Run | None" = None) -> str:
        """How a run ended, and where each rank was; with ``before``, whether that is how the
        run before the fix ended too."""
        if self.completed:
            return self.state()
        if before is not None and not self.stopped and not before.completed and before._ended_as() == self._ended_as():
            why = f"for want of a GPU: {self.gpu_missing}" if self.gpu_missing else self.failure()
            text = f"ended as the script before the fix did: {why}"
        else:
            text = self.state()
        places = ", ".join(f"rank {rank} at {path}:{line}" for rank, path, line in self.end_places())
        silent = self.silent_ranks()
        if silent:
            places += ("; " if places else "") + f"rank(s) {silent} ended without a final report"
        return f"{text} ({places})" if places else text


@dataclass
class Finding:
    code: str
    name: str
    path: str
    line: int
    column: int
    message: str
    end_line: int = 0
    fixable: bool = True
    span: tuple[int, int] = (0, 0)  # the lines of the statement the finding is in
    fixed: "Finding | None" = None  # where its lines are in the fixed copy, when the fix moved them
    reached: dict = field(default_factory=dict)  # per run, per rank: times its line ran
    before: Measurement | None = None
    after: Measurement | None = None
    verdict: str = ""
    reason: str = ""
    diff: str = ""

    def __post_init__(self) -> None:
        if self.span == (0, 0):
            self.span = (self.line, max(self.line, self.end_line))

    def in_fixed_copy(self) -> "Finding":
        return self.fixed or self

    def watched_line(self) -> int:
        """The line whose runs say that the finding's code ran: its statement's first."""
        return self.span[0]

    def to_json(self) -> dict:
        def m(x):
            return None if x is None else {"symptom": x.symptom, "text": x.text,
                                           "needs_gpu": x.needs_gpu}

        return {"code": self.code, "name": self.name, "path": self.path, "line": self.line,
                "column": self.column, "message": self.message, "verdict": self.verdict,
                "reason": self.reason, "before": m(self.before), "after": m(self.after),
                "reached": {phase: counts and {str(rank): n for rank, n in counts.items()}
                            for phase, counts in self.reached.items()},
                "diff": self.diff}


@dataclass
class ScriptReport:
    findings: list[Finding]
    before: Run | None
    after: Run | None
    diff: str
    other_changes: str = ""
    notes: list[str] = field(default_factory=list)
    unchecked: bool = False  # some file could not be checked, so "nothing found" proves nothing

    @property
    def ok(self) -> bool:
        return all(f.verdict == CONFIRMED for f in self.findings) and not (self.unchecked and not self.findings)


# --------------------------------------------------------------------------- the loop


def symptom(code: str) -> Callable[[Run, dict], Measurement]:
    """What a finding's rule tells ``--script`` to look for (its scenario folder's
    ``script_symptom``)."""
    evidence = all_evidence().get(code)
    return evidence.script_symptom if evidence else unobserved("no probe observes this rule's symptom")


def _ddplint(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddplint", "check", "--no-cache", *args, "."],
                          cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=600)


def lint(root: Path) -> tuple[list[dict], list[str]]:
    """The copy's findings, and what ddplint said of the files it could not check (exit 2:
    a file it cannot read or parse, or a rule that failed on it)."""
    proc = _ddplint(["--output-format", "json", "--unsafe-fixes"], root)
    try:
        found = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        found = None
    if found is None or proc.returncode not in (0, 1, 2):
        raise RuntimeError(f"ddplint could not lint the copy (exit {proc.returncode}): "
                           f"{proc.stderr.strip()[-300:]}")
    unchecked = [line for line in proc.stderr.splitlines() if proc.returncode == 2 and line.strip()
                 and not line.startswith("ddplint: warning")]
    return found, unchecked


def _diff(before: Path, after: Path) -> dict[str, str]:
    out = {}
    for path in sorted(after.rglob("*.py")):
        rel = path.relative_to(after).as_posix()
        old = (before / rel).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        new = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        if old != new:
            out[rel] = "".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}", n=2))
    return out


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? ")


def _hunks(diff: str) -> list[tuple[int, int, str]]:
    """(first old line, last old line, text) per hunk of one file's unified diff."""
    hunks, head = [], "".join(diff.splitlines(keepends=True)[:2])
    for part in re.split(r"(?m)^(?=@@ )", diff)[1:]:
        m = _HUNK.match(part)
        start, length = int(m.group(1)), int(m.group(2) or 1)
        hunks.append((start, start + max(length, 1) - 1, head + part))
    return hunks


def _attach_diffs(findings: list[Finding], diffs: dict[str, str]) -> str:
    """Give each hunk to the findings whose line it touches, or else to the nearest finding in
    its file (an added import, a method added at the end of a class); return the hunks of
    files with no finding."""
    left = []
    for rel, diff in diffs.items():
        here = [f for f in findings if f.path == rel]
        for first, last, text in _hunks(diff):
            takers = [f for f in here if first <= f.line <= last + 1]
            if not takers and here:
                takers = [min(here, key=lambda f: min(abs(f.line - first), abs(f.line - last)))]
            for f in takers:
                f.diff += text
            if not takers:
                left.append(text)
    return "".join(left)


def _launch(opts: ScriptOptions, root: Path, facts: Path, watch: dict[str, list[int]]) -> Run:
    facts.mkdir(parents=True, exist_ok=True)
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(SHIM), env["PYTHONPATH"]])
    env[OBSERVE_VAR] = str(facts)
    env[PROJECT_VAR] = str(root)
    env.pop(cpu_mapping.MAP_VAR, None)
    if opts.cpu_mapping:
        env[cpu_mapping.MAP_VAR] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""  # with --cpu on a GPU machine too, torch sees no GPU
    now = time.time()
    env[DEADLINE_VAR] = str(now + max(opts.timeout - 3, opts.timeout * 0.8))
    limits = {MAX_STEPS_VAR: opts.max_steps, STOP_AT_VAR: opts.max_seconds and now + opts.max_seconds}
    for var, value in limits.items():
        env.pop(var, None)
        if value:
            env[var] = str(value)
    env[WATCH_VAR] = json.dumps(watch)
    script = root / opts.script.relative_to(opts.project)
    res = launcher.run_torchrun(str(script), opts.topology, timeout=opts.timeout, cwd=str(root),
                                script_args=opts.script_args, env=env)
    ranks = []
    for path in sorted(facts.glob("rank*.json")):
        try:
            ranks.append(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError):
            pass
    return Run(res, sorted(ranks, key=lambda r: r["rank"]), opts.max_seconds, root)


def check_syntax(script: Path) -> None:
    """Raise ValueError with one line (path: cannot parse: message (line, column)) if the
    script is not valid Python: there is nothing to run then."""
    try:
        ast.parse(script.read_bytes(), str(script))
    except SyntaxError as exc:
        raise ValueError(f"{script}: cannot parse: {exc.msg} (line {exc.lineno}, column "
                         f"{exc.offset})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{script}: cannot parse: {exc}") from None


def statement_span(source: str, line: int) -> tuple[int, int]:
    """The first and last lines of the innermost statement that holds ``line`` (a loop, with
    its body; a call, with all its arguments)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return line, line
    spans = [(node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
             if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)]
    return min(spans, key=lambda span: span[1] - span[0], default=(line, line))


def _findings(found: list[dict], root: Path) -> list[Finding]:
    findings = [Finding(d["code"], d["name"], d["filename"].removeprefix("./"), d["line"],
                        d["column"], d["message"], d.get("end_line") or d["line"],
                        d.get("fix") is not None) for d in found]
    sources: dict[str, str] = {}
    for f in findings:
        if f.path not in sources:
            sources[f.path] = (root / f.path).read_text(encoding="utf-8", errors="replace")
        f.span = statement_span(sources[f.path], f.line)
    return findings


def line_map(old: str, new: str) -> dict[int, tuple[int, int]]:
    """Where each line of ``old`` is in ``new``: its first and last line there (a rewritten
    line: the lines of its rewrite)."""
    a, b = old.splitlines(), new.splitlines()
    out = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for k in range(i1, i2):
            if tag == "equal":
                out[k + 1] = (j1 + 1 + k - i1,) * 2
            else:
                out[k + 1] = (j1 + 1, max(j1 + 1, j2))
    return out


def _follow_the_fix(findings: list[Finding], roots: dict[str, Path], diffs: dict[str, str]) -> None:
    """Give each finding in a file the fix changed its place in the fixed copy, so that the
    fixed run is asked about the same code."""
    maps = {rel: line_map(*((roots[p] / rel).read_text(encoding="utf-8", errors="replace")
                            for p in ("before", "after"))) for rel in diffs}
    for f in findings:
        moved = maps.get(f.path)
        if moved:
            def first(line: int) -> int:
                return moved.get(line, (line, line))[0]

            def last(line: int) -> int:
                return moved.get(line, (line, line))[1]

            f.fixed = dataclasses.replace(f, line=first(f.line), end_line=last(f.end_line),
                                          span=(first(f.span[0]), last(f.span[1])))


def _watch(findings: list[Finding]) -> dict[str, list[list[int]]]:
    """The statements whose runs the probes count, per file: [first line, last line]."""
    watch: dict[str, dict[int, int]] = {}
    for f in findings:
        watch.setdefault(f.path, {})[f.span[0]] = f.span[1]
    return {path: sorted([first, last] for first, last in statements.items())
            for path, statements in watch.items()}


def judge_findings(findings: list[Finding], before: Run, after: Run | None, changed: dict[str, set[int]],
                   cpu_mapping_reason: str = "", gpus: int = 0) -> None:
    """Measure each finding's symptom in both runs and set its verdict and reason."""
    for f in findings:
        observe = symptom(f.code)
        ctx = {"gpus": 0 if cpu_mapping_reason else gpus, "finding": f}
        f.before = observe(before, ctx)
        f.after = observe(after, {**ctx, "finding": f.in_fixed_copy()}) if after is not None else None
        f.reached = {"before": before.reached(f)}
        if after is not None:
            f.reached["after"] = after.reached(f.in_fixed_copy())
    ended_by = None if before.completed else blocker(findings)
    for f in findings:
        f.verdict, f.reason = judge(f, before, after, ended_by, changed)
        evidence = all_evidence().get(f.code)
        hides = evidence.cpu_mapping_hides if evidence else ""
        hidden = cpu_mapping_reason and cpu_mapping.hidden_reason(hides, bool(f.before.symptom))
        if hidden and f.verdict not in (NOT_IMPORTED, NOT_REACHED):
            f.verdict, f.reason = NEEDS_GPU, hidden


def verify_script(opts: ScriptOptions) -> ScriptReport:
    work = Path(tempdirs.make("script"))
    try:
        name = opts.project.name or "project"
        roots = {phase: work / phase / name for phase in ("before", "after")}
        for root in roots.values():
            shutil.copytree(opts.project, root, symlinks=True, ignore=SKIP)
        found, unchecked = lint(roots["before"])
        findings = _findings(found, roots["before"])
        notes = [*opts.notes, *(f"not checked by ddplint: {line}" for line in unchecked)]
        if not findings:
            return ScriptReport([], None, None, "", notes=[*notes, "ddplint found nothing to verify"],
                                unchecked=bool(unchecked))
        opts.log(f"{len(findings)} finding(s); fixing a copy")
        _ddplint(["--fix", "--unsafe-fixes"], roots["after"])
        diffs = _diff(roots["before"], roots["after"])
        other = _attach_diffs(findings, diffs)
        _follow_the_fix(findings, roots, diffs)
        opts.log("running the script as it is")
        before = _launch(opts, roots["before"], work / "facts-before", _watch(findings))
        opts.log("running the fixed copy")
        after = _launch(opts, roots["after"], work / "facts-after",
                        _watch([f.in_fixed_copy() for f in findings])) if diffs else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    judge_findings(findings, before, after, changed_lines(diffs), opts.cpu_mapping, opts.topology.gpus)
    return ScriptReport(findings, before, after, "".join(diffs.values()), other, notes)


# --------------------------------------------------------------------------- report


def render(report: ScriptReport, opts: ScriptOptions, total_s: float) -> str:
    topo = opts.topology
    lines = [f"ddplint verify --script {opts.script}: what was observed on this script "
             f"({topo.backend}, {topo.nproc_per_node} ranks, {topo.gpus} GPU(s); {total_s:.1f}s)"]
    if opts.cpu_mapping:
        lines.append(f"CPU mapping on ({opts.cpu_mapping}): the script's CUDA placement runs on "
                     "the CPU ranks, NCCL on gloo")
    lines += report.notes
    for phase, run in (("before the fix", report.before), ("after the fix", report.after)):
        if run is not None:
            lines.append(f"run {phase}: {run.state()} ({run.launch.elapsed:.1f}s)")
            if opts.cpu_mapping:
                lines.append(f"  mapped to the CPU: {cpu_mapping.redirected(run.ranks)}")
                if run.gpu_missing:
                    lines.append(f"  not mapped: {run.gpu_missing}")
            if not run.completed:
                for rank, tail in run.tails().items():
                    lines.append(f"  rank {rank}, last lines:")
                    lines += [f"    | {ln[:300]}" for ln in tail]
    shown: dict[str, str] = {}  # each hunk is printed once, under the first finding it fixes
    for f in report.findings:
        lines += ["", f"{f.path}:{f.line}:{f.column}: {f.code} {f.name}: {f.verdict}",
                  f"  before: {f.before.text}",
                  f"  after:  {f.after.text if f.after else '(not run: ddplint changed nothing)'}",
                  f"  {f.reason}"]
        if f.diff in shown:
            lines.append(f"  the change: shown above under {shown[f.diff]}")
        elif f.diff:
            shown[f.diff] = f"{f.path}:{f.line}"
            lines += ["  " + ln for ln in f.diff.rstrip("\n").splitlines()]
    if report.other_changes:
        lines += ["", "other changes the fixes made:", report.other_changes.rstrip("\n")]
    return "\n".join(lines)


def to_json(report: ScriptReport, opts: ScriptOptions, total_s: float) -> dict:
    from .report import nnodes_json

    topo = opts.topology
    return {"script": str(opts.script), "args": opts.script_args, "project": str(opts.project),
            "backend": topo.backend, "nproc_per_node": topo.nproc_per_node,
            "nnodes": nnodes_json(topo.nnodes), "gpus": topo.gpus,
            "cpu_mapping": opts.cpu_mapping or None,
            "total_seconds": round(total_s, 2), "ok": report.ok,
            "findings": [f.to_json() for f in report.findings],
            "runs": {"before": report.before and report.before.to_json(),
                     "after": report.after and report.after.to_json()},
            "diff": report.diff, "notes": report.notes}
