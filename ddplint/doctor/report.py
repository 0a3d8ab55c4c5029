"""The doctor's report: what it saw, then one line per problem (code, severity, fix) and one per
check it could not run, as text, JSON or SARIF.

Text, like the linter's: `where: CODE severity: message; fix: ...`, where is a file position
(`train.py:40:5`) or the subject (machine, environment, software, launch).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ddplint import __version__
from ddplint.commands.output.sarif import SCHEMA
from ddplint.doctor.checks import Check, Outcome, Severity, Unknown
from ddplint.doctor.environment import relevant
from ddplint.doctor.facts import Facts
from ddplint.doctor.machine import DOCKER_DEFAULT_SHM, format_size
from ddplint.doctor.script import ScriptFacts
from ddplint.doctor.software import COMPANIONS, LIBRARIES, TORCH

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def _or_reason(value, text) -> str:
    return f"unknown ({value.reason})" if isinstance(value, Unknown) else text(value)


def _machine(facts: Facts) -> list[str]:
    lines = [_or_reason(facts.gpus, lambda gpus: _gpus(gpus, facts))]
    lines.append(f"a container ({', '.join(facts.container)})" if facts.container else
                 "no sign of a container (no /.dockerenv or /run/.containerenv; /proc/1/cgroup names no container runtime)")
    lines.append(f"{facts.cpus} CPU core(s) usable")
    shm = facts.shm
    lines.append(f"{facts.system.shm}: " + ("missing" if shm is None else _or_reason(shm, _shm)))
    limits = facts.open_files
    lines.append("open files: " + ("no limit to read" if limits is None else f"soft limit {limits[0]}, hard {limits[1]}"))
    return lines


def _shm(shm) -> str:
    text = f"{format_size(shm.free)} free of {format_size(shm.total)}"
    return text + (" (Docker's default size)" if shm.total == DOCKER_DEFAULT_SHM else "")


def _gpus(gpus, facts: Facts) -> str:
    if gpus.failure is not None:
        return f"nvidia-smi is installed and fails ({gpus.failure})"
    if not gpus.listed:
        return f"no NVIDIA GPU ({gpus.source})"
    names = sorted({gpu.name for gpu in gpus.listed})
    text = f"{len(gpus.listed)} NVIDIA GPU(s): {', '.join(names)} (driver {gpus.driver or '?'}, CUDA {gpus.cuda or '?'})"
    variable = facts.environment.get("CUDA_VISIBLE_DEVICES")
    if variable is not None:
        visible = facts.visible
        text += f"; CUDA_VISIBLE_DEVICES={variable!r} shows " + _or_reason(visible, lambda shown: str(len(shown.gpus)))
    return text


def _software(facts: Facts) -> list[str]:
    software = facts.software
    if isinstance(software, Unknown):
        return [f"not read: {software.reason}"]
    lines = [software.python]
    torch = software.torch
    if torch is None:
        lines.append("torch: not installed")
    else:
        build = ("ROCm " + software.torch_hip if isinstance(software.torch_hip, str) else
                 "CUDA " + software.torch_cuda if isinstance(software.torch_cuda, str) else
                 "build unknown" if isinstance(software.torch_cuda, Unknown) else "a CPU build")
        lines.append(f"torch {torch.version} ({build})")
    installed = [f"{name} {software.packages[name].version}" for name in (*COMPANIONS, *LIBRARIES) if name in software.packages]
    if installed:
        lines.append(", ".join(installed))
    if isinstance(software.torch_cuda, str) and not any(name.startswith("nvidia-nccl") for name in software.packages):
        lines.append("NCCL: linked into torch, no NCCL wheel (--probe reads its version)")
    missing = [name for name in COMPANIONS if name not in software.packages]
    if missing and torch is not None:
        lines.append(f"not installed: {', '.join(missing)}")
    probe = facts.probes.get("torch")
    if probe is not None and not probe.failed:
        values = probe.values
        lines.append(f"torch, imported by the probe: CUDA available {values.get('cuda_available')}, "
                     f"{values.get('gpus')} GPU(s), NCCL {values.get('nccl') or 'none'}")
    return lines


def _environment(facts: Facts) -> list[str]:
    found = relevant(facts.environment)
    if not found:
        return ["nothing set that NCCL, torch.distributed or CUDA reads"]
    return [f"{name}={value}: {known.does}; hurts: {known.hurts}" if known else f"{name}={value} (ddplint knows nothing of it)"
            for name, value, known in found]


def _launch(facts: Facts) -> list[str]:
    launch = facts.launch
    if launch is None:
        return ["none given (`ddplint doctor torchrun --nproc_per_node 8 train.py` checks one)"]
    lines = [f"{launch.text}" + (f" ({launch.origin})" if launch.origin else "")]
    lines.append(f"{launch.launcher}; ranks per node: {_or_reason(facts.ranks_per_node, str)}; "
                 f"nodes: {_or_reason(facts.nodes, str)}")
    script = facts.script
    if isinstance(script, Unknown):
        lines.append(f"script not read: {script.reason}")
    elif isinstance(script, ScriptFacts):
        lines.append(_script(facts, script))
    return lines + launch.notes


def _script(facts: Facts, script: ScriptFacts) -> str:
    parts = [f"script {script.path}: {len(script.loaders)} DataLoader(s)"]
    parts.append(f"workers per rank: {_or_reason(facts.workers, str)}")
    if facts.backends:
        parts.append(f"backend {', '.join(sorted(facts.backends))}")
    if script.uses_cuda:
        parts.append("uses CUDA" + (" where torch.cuda.is_available(), else the CPU" if script.cpu_fallback else ""))
    timeout = script.timeout
    if script.init_calls:
        parts.append("timeout " + ("default" if timeout is None else _or_reason(timeout, lambda s: f"{s:g} s")))
    return "; ".join(parts)


def _probes(facts: Facts) -> list[str]:
    if not facts.probes:
        return ["not run (--probe allocates the workers' shared memory and has two processes meet over gloo)"]
    return [f"{probe.name}: {'FAILED: ' if probe.failed else ''}{probe.detail}" for probe in facts.probes.values()]


def seen(facts: Facts) -> dict[str, list[str]]:
    """What the doctor read, by subject, in words."""
    return {"machine": _machine(facts), "software": _software(facts), "environment": _environment(facts),
            "launch": _launch(facts), "probes": _probes(facts)}


def _problems(outcomes: Sequence[Outcome]):
    return [(outcome.check, found) for outcome in outcomes for found in outcome.found]


def summary(outcomes: Sequence[Outcome]) -> str:
    problems = _problems(outcomes)
    errors = sum(1 for _, found in problems if found.severity is Severity.ERROR)
    unchecked = sum(1 for outcome in outcomes if outcome.unchecked is not None)
    text = "No problems found." if not problems else (
        f"Found {len(problems)} problem{'s' * (len(problems) != 1)} ({errors} error{'s' * (errors != 1)}, "
        f"{len(problems) - errors} warning{'s' * (len(problems) - errors != 1)})."
    )
    if unchecked:
        text += f" {unchecked} check{'s' * (unchecked != 1)} could not run (see 'could not check' above)."
    return text


def render_text(facts: Facts, outcomes: Sequence[Outcome]) -> str:
    lines = ["ddplint doctor: this machine" + (" and the launch command" if facts.launch else "")]
    for subject, described in seen(facts).items():
        for index, line in enumerate(described):
            lines.append(f"  {subject if index == 0 else '':<12} {line}")
    lines.append("")
    for check, found in _problems(outcomes):
        where = str(found.where) if found.where is not None else check.subject
        lines.append(f"{where}: {check.code} {found.severity.value}: {found.message}; fix: {found.fix}")
    reasons: dict[str, list[Check]] = {}
    for outcome in outcomes:
        if outcome.unchecked is not None:
            reasons.setdefault(outcome.unchecked, []).append(outcome.check)
    for reason, checks in reasons.items():  # one line per reason, naming each check it stopped
        lines.append(f"could not check {', '.join(f'{c.code} {c.name}' for c in checks)}: {reason}")
    lines.append(summary(outcomes))
    return "\n".join(lines) + "\n"


def _location(found) -> dict | None:
    if found.where is None:
        return None
    return {"path": found.where.path, "line": found.where.line, "column": found.where.col}


def render_json(facts: Facts, outcomes: Sequence[Outcome]) -> str:
    """Every problem with its code, name, subject, severity, message, fix and location (null
    for the machine, software and environment), every check that could not run and why, and
    what the doctor saw."""
    document = {
        "version": __version__,
        "launch": facts.launch.text if facts.launch else None,
        "seen": seen(facts),
        "problems": [
            {"code": check.code, "name": check.name, "subject": check.subject, "severity": found.severity.value,
             "message": found.message, "fix": found.fix, "location": _location(found)}
            for check, found in _problems(outcomes)
        ],
        "unchecked": [
            {"code": outcome.check.code, "name": outcome.check.name, "subject": outcome.check.subject,
             "reason": outcome.unchecked}
            for outcome in outcomes if outcome.unchecked is not None
        ],
        "probes": [{"name": probe.name, "failed": probe.failed, "detail": probe.detail, "seconds": round(probe.seconds, 2)}
                   for probe in facts.probes.values()],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _rule(check: Check) -> dict:
    return {"id": check.code, "name": check.name, "shortDescription": {"text": check.summary},
            "fullDescription": {"text": check.explanation}, "properties": {"subject": check.subject}}


def _result(check: Check, found, index: int) -> dict:
    result = {"ruleId": check.code, "ruleIndex": index, "level": _LEVELS[found.severity],
              "message": {"text": f"{found.message}; fix: {found.fix}"}}
    if found.where is not None:
        result["locations"] = [{"physicalLocation": {
            "artifactLocation": {"uri": found.where.path.replace("\\", "/")},
            "region": {"startLine": found.where.line, "startColumn": found.where.col},
        }}]
    else:
        result["properties"] = {"subject": check.subject}
    return result


def render_sarif(facts: Facts, outcomes: Sequence[Outcome]) -> str:
    """SARIF 2.1.0: the checks as rules, the problems as results (with a location where they
    are about a file), the checks that could not run as notifications."""
    checks = [outcome.check for outcome in outcomes]
    index = {check.code: number for number, check in enumerate(checks)}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "ddplint doctor", "version": __version__, "rules": [_rule(c) for c in checks]}},
            "invocations": [{
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "note", "message": {"text": f"could not check: {outcome.unchecked}"},
                     "descriptor": {"id": outcome.check.code}}
                    for outcome in outcomes if outcome.unchecked is not None
                ],
            }],
            "results": [_result(check, found, index[check.code]) for check, found in _problems(outcomes)],
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "sarif": render_sarif}
