"""Before -> fix -> after, per rule, and the verdict.

For each rule: copy ``fixtures/<CODE>/scenario*.py`` to a temporary folder,
run it under torchrun ("before"), fix a second copy with ddplint's own fixer,
run that ("after"), and judge from what was measured. A verdict is CONFIRMED
only when the symptom was seen before, was not seen after, and the fixed run
completed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import launcher
from .launcher import LaunchResult, Topology

ROOT = Path(__file__).resolve().parents[2]  # the folder holding the ddplint package
FIXTURES = ROOT / "fixtures"
RULE_CODES = ("DDP001", "DDP002", "DDP003", "DDP004", "DDP005", "DDP006", "DDP007",
              "DDP009", "DDP010", "DDP012", "DDP018")
# Scenarios that share one launch: no hang, no process-wide settings, no
# spawned workers re-importing __main__ (forked DataLoader workers are fine),
# no killing.
BATCHABLE = {"DDP003", "DDP004", "DDP006", "DDP007", "DDP009", "DDP010", "DDP012",
             "DDP018"}

CONFIRMED, FAILED, NEEDS_GPU = "CONFIRMED", "FAILED", "NEEDS GPU"


@dataclass
class Measurement:
    symptom: bool | None  # None: could not be observed
    text: str
    completed: bool = False
    needs_gpu: bool = False
    data: dict = field(default_factory=dict)


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
class FixOutcome:
    changed: bool
    detail: str = ""


def ddplint_fixer(path: Path) -> FixOutcome:
    """ddplint's own fixer on one file (exit 0 and 1 both mean it ran)."""
    before = path.read_bytes()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "ddplint", "check", "--fix", "--unsafe-fixes", str(path)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    tail = ((proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""])[0]
    if proc.returncode not in (0, 1):
        return FixOutcome(False, f"fixer exited {proc.returncode}: {tail}")
    changed = path.read_bytes() != before
    # Unchanged: say what ddplint printed (e.g. no such rule, or no ddplint at all).
    return FixOutcome(changed, "" if changed else f"ddplint exited {proc.returncode}: {tail}")


Fixer = Callable[[Path], FixOutcome]


# --------------------------------------------------------------------------- measuring


def _no_result(runs: dict[str, LaunchResult], rule: str) -> Measurement:
    parts = []
    for name, r in runs.items():
        if r.timed_out:
            parts.append(f"{name}: hang after {r.elapsed:.0f}s; last output: {r.hang_report()}")
        else:
            errs = r.errors()
            parts.append(f"{name}: exit {r.returncode}" + (f"; {errs[0]}" if errs else ""))
    return Measurement(None, f"no {rule} result (" + "; ".join(parts) + ")")


def _result(run: LaunchResult, rule: str) -> dict | None:
    for payload in run.results:
        if payload.get("rule") == rule:
            return payload
    return None


def _completed(run: LaunchResult, payload: dict | None) -> bool:
    return payload is not None and "crashed" not in payload and not run.timed_out


def measure_ddp001(runs, ctx) -> Measurement:
    run = runs["main"]
    payload = _result(run, "DDP001")
    if ctx["gpus"]:
        ctxs = run.observed.get("contexts")
        if ctxs is None:
            return _no_result(runs, "DDP001")
        on0 = [c for c in ctxs if 0 in c["gpus"]]
        expected = 1 if ctx["backend"] == "nccl" else 0  # rank 0's own context
        names = sorted({c["name"] for c in on0})
        text = (f"{len(on0)} processes hold a CUDA context on GPU 0 "
                f"({', '.join(names) or 'none'}); {len(ctxs)} hold one anywhere")
        return Measurement(len(on0) > expected, text, _completed(run, payload),
                           data={"contexts": ctxs, "mode": "cuda-contexts"})
    errs = [e for e in run.errors() if "CUDA" in e or "cuda" in e or "NVIDIA" in e]
    if errs:
        return Measurement(
            True,
            f"importing the module fails in {len(errs)}/{ctx['nproc']} rank processes: "
            + errs[0].split(": ", 1)[1],
            data={"errors": errs, "mode": "cpu-import"})
    if payload is None:
        return _no_result(runs, "DDP001")
    ok = all(s > 0 for s in payload["steps"]) and not any(payload["cuda_initialized"])
    text = (f"module imported in ranks and spawned workers; steps per rank {payload['steps']}, "
            f"CUDA initialised: {any(payload['cuda_initialized'])}")
    return Measurement(not ok, text, _completed(run, payload), data=payload | {"mode": "cpu-import"})


def measure_ddp002(runs, ctx) -> Measurement:
    run = runs["main"]
    payload = _result(run, "DDP002")
    if payload is None or "crashed" in payload:
        return _no_result(runs, "DDP002")
    ranks = payload["ranks"]
    errors = [r["error"] for r in ranks if "error" in r]
    if errors:
        return Measurement(True, f"spawned workers cannot start: {errors[0]}", data=payload)
    expected = sorted(set(payload["in_process"].values()))
    got = sorted({i for r in ranks for i in r["worker_unknown_ids"]})
    steps = [r["steps"] for r in ranks]
    fine = all(steps) and got == expected and got
    text = (f"steps per rank {steps}; missing words -> {got} in workers, "
            f"{expected} in-process")
    return Measurement(not fine, text, _completed(run, payload), data=payload)


def measure_ddp003(runs, ctx) -> Measurement:
    run = runs["main"]
    payload = _result(run, "DDP003")
    if payload is None or "crashed" in payload:
        return _no_result(runs, "DDP003")
    e0, e1, n = payload["epoch0"], payload["epoch1"], payload["dataset"]
    same = [a == b for a, b in zip(e0, e1)]
    disjoint = all(
        sum(len(r) for r in ep) == len(set().union(*map(set, ep))) == n for ep in (e0, e1)
    )
    text = (f"epoch 1 repeats epoch 0 on {sum(same)}/{len(same)} ranks "
            f"(rank 0: {e0[0][:6]}... vs {e1[0][:6]}...); ranks disjoint and covering: {disjoint}")
    symptom = any(same) or not disjoint
    return Measurement(symptom, text, _completed(run, payload), data=payload)


def measure_ddp004(runs, ctx) -> Measurement:
    run = runs["main"]
    payload = _result(run, "DDP004")
    if payload is None or "crashed" in payload:
        return _no_result(runs, "DDP004")
    ranks = payload["ranks"]
    errors = [f"rank {r['rank']}: {r['error']}" for r in ranks if "error" in r]
    gpu0 = {r["rank"]: r.get("gpu0_bytes", 0) for r in ranks}
    stray = {k: v for k, v in gpu0.items() if k >= 1 and v > 0}
    if errors:
        text = f"load fails on {len(errors)}/{len(ranks)} ranks: {errors[0].split(': ', 1)[1]}"
    elif stray:
        text = f"ranks >= 1 allocate on GPU 0: {stray} bytes"
    else:
        devs = sorted({d for r in ranks for d in r.get("devices", [])})
        equal = all(r.get("equal") for r in ranks)
        text = f"loads on all {len(ranks)} ranks to {devs}; weights equal to saved: {equal}"
        return Measurement(not equal, text, _completed(run, payload), data=payload)
    return Measurement(True, text, _completed(run, payload), data=payload)


def measure_ddp005(runs, ctx) -> Measurement:
    # "kill": paused mid-training, inspected from outside, then every process
    # of the job SIGKILLed at once. "live" (after the fix only): the same
    # program left to finish, to show the fixed program still completes.
    kill = runs["kill"]
    obs = kill.observed
    if "files" not in obs:
        return _no_result(runs, "DDP005")
    workers = obs.get("workers", 0)
    leaked = kill.shm_leftover
    leaked_mib = sum(leaked.values()) / 2**20
    text = (f"while training: {obs['files']} /dev/shm/torch_* files ({obs['bytes'] / 2**20:.0f} MiB), "
            f"{obs['managers']} torch_shm_manager; after killing the job: {len(leaked)} files "
            f"({leaked_mib:.1f} MiB) left, {workers} workers")
    symptom = obs["files"] > 0 or obs["managers"] > 0 or len(leaked) > workers
    data = {"live": obs, "leaked_files": len(leaked), "leaked_bytes": sum(leaked.values()),
            "leaked_paths": sorted(leaked)}
    completed = False
    if "live" in runs:
        live = runs["live"]
        payload = _result(live, "DDP005")
        completed = _completed(live, payload) and live.returncode == 0
        data["result"] = payload
        if payload:
            text += f"; uninterrupted run: steps per rank {payload['steps']}, strategy {payload['strategy']}"
        else:
            text += "; uninterrupted run did not finish"
    return Measurement(symptom, text, completed, data=data)


def measure_ddp006(runs, ctx) -> Measurement:
    run = runs["main"]
    payload = _result(run, "DDP006")
    if payload is None or "crashed" in payload:
        return _no_result(runs, "DDP006")
    even_n, odd_n = payload["sizes"]
    even, odd = payload["even"], payload["odd"]
    shared = len(set.intersection(*map(set, even))) if len(even) > 1 else 0
    total = sum(len(r) for r in even)
    disjoint = total == len(set().union(*map(set, even)))
    covers = set().union(*map(set, even)) == set(range(even_n)) and set().union(
        *map(set, odd)) == set(range(odd_n))
    even_lens, odd_lens = [len(r) for r in even], [len(r) for r in odd]
    equal = len(set(even_lens)) == 1 and len(set(odd_lens)) == 1
    text = (f"size {even_n}: per-rank {even_lens}, {shared} indices on every rank, "
            f"disjoint: {disjoint}; size {odd_n}: per-rank {odd_lens}; covering: {covers}")
    symptom = not (disjoint and equal and covers)
    return Measurement(symptom, text, _completed(run, payload), data=payload)


def _payload(runs, rule: str) -> tuple[LaunchResult, dict | None]:
    run = runs["main"]
    payload = _result(run, rule)
    return run, (None if payload is None or "crashed" in payload else payload)


def _overlap(per_rank: list[list[int]], n: int) -> tuple[int, bool]:
    """Indices read by every rank, and whether the ranks' reads are disjoint and cover 0..n-1."""
    sets = [set(r) for r in per_rank]
    shared = len(set.intersection(*sets)) if len(sets) > 1 else 0
    union = set().union(*sets)
    return shared, sum(len(r) for r in per_rank) == len(union) and union == set(range(n))


def measure_ddp007(runs, ctx) -> Measurement:
    run, payload = _payload(runs, "DDP007")
    if payload is None:
        return _no_result(runs, "DDP007")
    seen, n = payload["seen"], payload["dataset"]
    shared, partition = _overlap(seen, n)
    text = (f"samples read per rank {[len(r) for r in seen]} of {n}; {shared} read by every rank; "
            f"ranks disjoint and covering: {partition}")
    return Measurement(not partition, text, _completed(run, payload), data=payload)


def measure_ddp010(runs, ctx) -> Measurement:
    run, payload = _payload(runs, "DDP010")
    if payload is None:
        return _no_result(runs, "DDP010")
    val = payload["val"]
    distinct = len({tuple(v) for v in val})
    shared = len(set.intersection(*map(set, val)))
    text = (f"ranks drew {distinct} distinct validation split(s) over {len(val)} ranks; {shared}/{len(val[0])} "
            f"validation indices common to all ranks (rank 0: {val[0][:5]}...)")
    return Measurement(distinct > 1, text, _completed(run, payload), data=payload)


def measure_ddp009(runs, ctx) -> Measurement:
    run, payload = _payload(runs, "DDP009")
    if payload is None:
        return _no_result(runs, "DDP009")
    ranks = payload["ranks"]
    errors = [r["error"] for r in ranks if "error" in r]
    if errors:
        return Measurement(True, f"load into the unwrapped model fails on {len(errors)}/{len(ranks)} "
                           f"ranks: {errors[0][:160]}", _completed(run, payload), data=payload)
    equal = all(r["equal"] for r in ranks)
    text = f"loads into the unwrapped model on all {len(ranks)} ranks; weights equal to trained: {equal}"
    return Measurement(not equal, text, _completed(run, payload), data=payload)


def measure_ddp012(runs, ctx) -> Measurement:
    run, payload = _payload(runs, "DDP012")
    if payload is None:
        return _no_result(runs, "DDP012")
    ranks = payload["ranks"]
    parsed, env = [r["parsed"] for r in ranks], [r["env"] for r in ranks]
    text = f"args.local_rank per rank {parsed}; LOCAL_RANK set by torchrun {env}"
    return Measurement(parsed != env, text, _completed(run, payload), data=payload)


def measure_ddp018(runs, ctx) -> Measurement:
    run, payload = _payload(runs, "DDP018")
    if payload is None:
        return _no_result(runs, "DDP018")
    workers, cpus, local = payload["workers"], payload["cpus"], payload["local_world"]
    # The ranks of one node share its cores; the first local_world ranks are this node's.
    on_node = sum(workers[:local])
    text = (f"DataLoader worker processes per rank {workers}; {on_node} on a node "
            f"of {cpus} CPU cores")
    return Measurement(on_node > max(cpus, local), text, _completed(run, payload), data=payload)


def _shm_observer(run_id: str) -> dict:
    pids = launcher.job_pids(run_id)
    files = launcher.shm_files(pids)
    names = [launcher.proc_name(p) for p in pids]
    return {
        "files": len(files),
        "bytes": sum(files.values()),
        "managers": sum(n.startswith("torch_shm_manag") for n in names),
        "workers": sum(n == "pt_data_worker" for n in names),
        "processes": len(pids),
    }


def _context_observer(run_id: str) -> dict:
    from .probes import cuda_context_pids

    held = cuda_context_pids(launcher.job_pids(run_id))
    return {"contexts": [{"pid": p, "name": launcher.proc_name(p), "gpus": g}
                         for p, g in sorted(held.items())]}


@dataclass
class LaunchSpec:
    pause: str | None = None
    observe: Callable[[str], dict] | None = None
    kill: bool = False


def launches_for(rule: str, gpus: int, phase: str) -> dict[str, LaunchSpec]:
    if rule == "DDP005":
        specs = {"kill": LaunchSpec("DDP005", _shm_observer, kill=True)}
        if phase == "after":
            specs["live"] = LaunchSpec()
        return specs
    if rule == "DDP001" and gpus:
        return {"main": LaunchSpec("DDP001", _context_observer)}
    return {"main": LaunchSpec()}


MEASURE = {
    "DDP001": measure_ddp001, "DDP002": measure_ddp002, "DDP003": measure_ddp003,
    "DDP004": measure_ddp004, "DDP005": measure_ddp005, "DDP006": measure_ddp006,
    "DDP007": measure_ddp007, "DDP009": measure_ddp009, "DDP010": measure_ddp010,
    "DDP012": measure_ddp012, "DDP018": measure_ddp018,
}


# --------------------------------------------------------------------------- running


@dataclass
class Options:
    topology: Topology
    timeout: float = 180.0
    fixer: Fixer = ddplint_fixer
    log: Callable[[str], None] = lambda msg: None


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    return env


def _copy_scenario(rule: str, dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    files = sorted((FIXTURES / rule).glob("scenario*.py"))
    out = []
    for f in files:
        shutil.copy2(f, dest / f.name)
        out.append(dest / f.name)
    return out


def _run_phase(phase: str, rules: list[str], scripts: dict[str, Path], opts: Options,
               timings: dict[str, float]) -> dict[str, dict[str, LaunchResult]]:
    """Launch every rule's scenario for one phase; batch the ones that can share."""
    gpus = opts.topology.gpus
    runs: dict[str, dict[str, LaunchResult]] = {}
    batch = [r for r in rules if r in BATCHABLE]
    if len(batch) > 1:
        opts.log(f"{phase}: {' '.join(batch)} (one launch)")
        args = [f"{r}={scripts[r]}" for r in batch]
        res = launcher.run_torchrun(
            "ddplint.harness.batch", opts.topology, timeout=opts.timeout,
            cwd=str(scripts[batch[0]].parent), script_args=args, env=_child_env(), module=True,
        )
        for r in batch:
            if _result(res, r) is not None and "crashed" not in _result(res, r):
                runs[r] = {"main": res}
                timings[r] += res.elapsed / len(batch)
            else:
                opts.log(f"{phase}: {r} gave no result in the shared launch; running it alone")
        if res.timed_out:
            opts.log(f"{phase}: shared launch hung: {res.hang_report()}")
    for r in rules:
        if r in runs:
            continue
        runs[r] = {}
        for name, spec in launches_for(r, gpus, phase).items():
            opts.log(f"{phase}: {r} ({name})")
            # Each rule runs in its own folder (checkpoints, logs land there).
            res = launcher.run_torchrun(
                str(scripts[r]), opts.topology, timeout=opts.timeout, cwd=str(scripts[r].parent),
                env=_child_env(), pause_tag=spec.pause, on_pause=spec.observe,
                kill_after_pause=spec.kill,
            )
            runs[r][name] = res
            timings[r] += res.elapsed
    return runs


def verify(rules: list[str], opts: Options) -> list[RuleOutcome]:
    ctx = {"gpus": opts.topology.gpus, "backend": opts.topology.backend,
           "nproc": opts.topology.nproc_per_node}
    timings = {r: 0.0 for r in rules}
    fix_times = {r: 0.0 for r in rules}
    work = Path(tempfile.mkdtemp(prefix="ddplint-verify-"))
    try:
        before_scripts, after_scripts, fix_notes = {}, {}, {}
        for r in rules:
            before_scripts[r] = _copy_scenario(r, work / r / "before")[0]
            fixed = _copy_scenario(r, work / r / "after")
            t0 = time.monotonic()
            changed, details = False, []
            for f in fixed:
                try:
                    out = opts.fixer(f)
                except (OSError, subprocess.SubprocessError) as exc:
                    out = FixOutcome(False, f"fixer could not run: {exc}")
                changed |= out.changed
                if out.detail:
                    details.append(out.detail)
            fix_times[r] = time.monotonic() - t0
            if changed:
                after_scripts[r] = fixed[0]
            else:
                fix_notes[r] = "fix did not apply" + (f" ({details[0]})" if details else "")
        before_runs = _run_phase("before", rules, before_scripts, opts, timings)
        after_rules = [r for r in rules if r in after_scripts]
        after_runs = _run_phase("after", after_rules, after_scripts, opts, timings)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    outcomes = []
    for r in rules:
        before = MEASURE[r](before_runs[r], ctx)
        after = MEASURE[r](after_runs[r], ctx) if r in after_runs else None
        mode = before.data.get("mode", "") if isinstance(before.data, dict) else ""
        verdict, reason = judge(before, after, fix_notes.get(r))
        outcomes.append(RuleOutcome(r, before, after, verdict, reason,
                                    timings[r] + fix_times[r], fix_times[r], mode))
    return outcomes


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
