#!/usr/bin/env python3
"""Time ddplint against its peers and against two floors, on the same files.

Every measurement is a whole process: start-up, file discovery, the work, the
exit.  CPU seconds (user + sys of the process and every child it waited for,
from ``os.wait4``) are the figure to trust on a shared machine; wall seconds
are reported beside them.

Runs are interleaved: within each round every tool of a corpus runs once, in an
order rotated from round to round, and each run's ratio is taken against the
libcst-parse floor measured on the same corpus *in the same round*.  The table
gives the median over rounds.

    python benchmarks/run.py                 # full run (samples + full corpora)
    python benchmarks/run.py --quick         # 1 round, samples only
    python benchmarks/run.py --rounds 5 --full-rounds 2

A tool that is not installed, or fails, is reported as such in the table;
it is never dropped and never given a number.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = HERE / "corpus"
VENVS = HERE / "venvs"
FLOORS = HERE / "floors"
RESULTS = HERE / "results"
PY = sys.executable

sys.path.insert(0, str(REPO))
from ddplint.core.processes import die_with_parent  # noqa: E402

SAMPLES = ["sample-packages", "sample-torch"]
FULL = ["packages", "torch", "monorepo"]

# ---------------------------------------------------------------------------
# Commands.  ddplint is being written alongside this file: each command below
# is a list of variants tried in order on a probe file before timing; the
# first that runs is used for every timed run.  A usage error (exit 2, or an
# argparse/click complaint) moves on to the next variant.  Edit freely.
# {path} is replaced by the corpus path (relative to benchmarks/corpus).
DDPLINT_COLD = [
    [PY, "-m", "ddplint", "check", "--no-cache", "{path}"],
    [PY, "-m", "ddplint", "check", "{path}"],
    [PY, "-m", "ddplint", "--no-cache", "{path}"],
    [PY, "-m", "ddplint", "{path}"],
]
DDPLINT_WARM = [
    [PY, "-m", "ddplint", "check", "{path}"],
    [PY, "-m", "ddplint", "{path}"],
]
# Where ddplint may keep its cache (relative to the run's working directory,
# benchmarks/corpus); emptied before the warm row's priming run.
DDPLINT_CACHE_DIRS = [".ddplint_cache"]

FLAKE8_DDP = [PY, "-m", "flake8", "--isolated", "--benchmark", "--select", "DDP", "{path}"]

# Probe programs for the preflight checks.
PROBE_DDP = """\
import torch
import torch.distributed


def resume(model, path):
    state = torch.load(path)
    model.load_state_dict(state)
    return state
"""

# exit codes that mean "ran fine" for a linter (1 = findings)
LINT_OK = (0, 1)


@dataclass
class Tool:
    name: str
    what: str
    variants: list[list[str]]
    scope: str  # "all" or "samples"
    kind: str = "peer"  # "floor", "ddplint", "peer"
    env: dict[str, str] = field(default_factory=dict)
    ok_codes: tuple[int, ...] = LINT_OK
    files_re: str | None = None  # regex on stdout+stderr giving files seen
    needle: str | None = None  # preflight: must appear in probe output
    warm: bool = False  # needs an untimed priming run per corpus
    list_argv: list[str] | None = None  # untimed: lists the files the tool sees
    # filled in by preflight
    argv: list[str] | None = None
    error: str | None = None
    note: str | None = None


def log(msg: str = "") -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# Measuring one process.


@dataclass
class Run:
    rc: int
    cpu: float
    wall: float
    maxrss_kib: int
    out: str
    err: str
    timed_out: bool = False


def measure(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> Run:
    """Run argv to completion; CPU and max RSS from wait4 on that child (which
    include every descendant it reaped, e.g. multiprocessing workers).

    The child runs in a process group of its own, killed whole on the way out: on a
    timeout, and when this process is interrupted while timing it (Ctrl-C, or SIGTERM
    once `exit_on_sigterm` is in force), so nothing outlives the benchmark.  If this
    process is SIGKILLed, the kernel kills the child (die_with_parent)."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=functools.partial(die_with_parent, signal.SIGKILL),
        )
        timed_out = False
        deadline = t0 + timeout
        pid = 0
        try:
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid == p.pid:
                    break
                if time.perf_counter() > deadline:
                    timed_out = True
                    kill_group(p.pid)
                    pid, status, ru = os.wait4(p.pid, 0)
                    break
                time.sleep(0.005 if time.perf_counter() - t0 < 1 else 0.05)
        finally:
            kill_group(p.pid)  # and whatever the child left running
            if pid != p.pid:  # interrupted before the child was reaped
                os.waitpid(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out = fo.read().decode("utf-8", "replace")
        err = fe.read().decode("utf-8", "replace")
    return Run(p.returncode, ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss, out, err, timed_out)


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def exit_on_sigterm() -> None:
    """SIGTERM ends this process the way Ctrl-C does, through `finally` blocks (which
    kill the child being timed) rather than at once."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def failure(tool: Tool, run: Run) -> str | None:
    """Why this run does not count, or None if it ran fine."""
    if run.timed_out:
        return f"timed out after {run.wall:.0f}s"
    if run.rc not in tool.ok_codes:
        return f"exit {run.rc}: {tail(run.err or run.out)}"
    if run.rc != 0 and "Traceback (most recent call last)" in run.err:
        # An uncaught Python exception also exits 1: not a linter's "findings".
        return f"exit {run.rc} with a traceback: {tail(run.err)}"
    if "No module named" in run.err and run.rc != 0:
        return f"exit {run.rc}: {tail(run.err)}"
    return None


def tail(text: str, n: int = 240) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    s = " | ".join(lines[-3:])
    return s[-n:]


USAGE_RE = re.compile(r"usage:|unrecognized arguments|no such option|invalid choice|"
                      r"Error: No such command|unexpected extra argument", re.I)


def files_seen(tool: Tool, run: Run) -> int | None:
    if tool.kind == "floor":
        try:
            return int(json.loads(run.out.strip().splitlines()[-1])["files"])
        except (ValueError, KeyError, IndexError):
            return None
    if tool.files_re:
        m = re.findall(tool.files_re, run.out + "\n" + run.err)
        if m:
            return int(m[-1])
    return None


# ---------------------------------------------------------------------------
# Tools.


def base_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONHASHSEED"] = "0"
    env.setdefault("LC_ALL", "C.UTF-8")
    return env


def ddplint_env(root: Path) -> dict[str, str]:
    env = base_env()
    env["PYTHONPATH"] = str(root)
    return env


def venv_exe(venv: str, exe: str) -> str:
    return str(VENVS / venv / "bin" / exe)


# ddplint prints no file count: list the files its own discovery yields.
DDPLINT_LIST = [PY, "-c", "import sys\nfrom ddplint.engine.files import discover\n"
                "for t in discover(sys.argv[1:]):\n    t.error is None and print(t.path)", "{path}"]


def make_tools(root: Path, full_flake8: bool = False) -> list[Tool]:
    denv = ddplint_env(root)
    tools = [
        Tool("floor: read", "read every file (python start-up + I/O)",
             [[PY, str(FLOORS / "read.py"), "{path}"]], "all", "floor", base_env(), (0,)),
        Tool("floor: libcst parse", "libcst.parse_module on every file, one process",
             [[PY, str(FLOORS / "parse.py"), "{path}"]], "all", "floor", base_env(), (0,)),
        Tool("ddplint (cold)", "python -m ddplint check --no-cache PATH, all rules",
             DDPLINT_COLD, "all", "ddplint", denv, needle="DDP", list_argv=DDPLINT_LIST),
        Tool("ddplint (warm cache)", "same, cache primed by an untimed run",
             DDPLINT_WARM, "all", "ddplint", denv, needle="DDP", warm=True,
             list_argv=DDPLINT_LIST),
        Tool("flake8 --select DDP", "ddplint's flake8 plugin, main python",
             [FLAKE8_DDP], "samples", "ddplint", denv,
             files_re=r"(\d+)\s+total files processed", needle="DDP"),
        Tool("ruff --select B", "ruff check --select B --no-cache, no excludes",
             [[venv_exe("ruff", "ruff"), "check", "--isolated", "--config", "exclude=[]",
               "--no-respect-gitignore", "--no-cache", "--select", "B", "{path}"]],
             "all", env=base_env(), needle="B006",
             list_argv=[venv_exe("ruff", "ruff"), "check", "--isolated", "--config",
                        "exclude=[]", "--no-respect-gitignore", "--show-files", "{path}"]),
        Tool("flake8 + bugbear (B)", "flake8 --select B with flake8-bugbear",
             [[venv_exe("flake8-bugbear", "flake8"), "--isolated", "--benchmark",
               "--select", "B", "{path}"]],
             "samples", env=base_env(), files_re=r"(\d+)\s+total files processed",
             needle="B006"),
        Tool("TorchFix --select ALL", "torchfix --select ALL (skips files without 'torch')",
             [[venv_exe("torchfix", "torchfix"), "--select", "ALL", "{path}"]],
             "samples", env=base_env(), files_re=r"Finished checking (\d+) files",
             needle="TOR102"),
        Tool("Fixit lint", "fixit lint, its default rules",
             [[venv_exe("fixit", "fixit"), "lint", "{path}"]],
             "samples", env=base_env(), files_re=r"(\d+) files? (?:checked|clean)",
             needle="NoInheritFromObject"),
    ]
    if full_flake8:
        # flake8 runs pyflakes and pycodestyle whatever --select says, so on
        # the full corpora this row costs ~11 CPU minutes, mostly not ddplint's.
        next(t for t in tools if t.name == "flake8 --select DDP").scope = "all"
    return tools


PROBE_PEERS = """\
import torch


class Model(object):
    pass


def resume(path, seen=[]):
    return torch.load(path)
"""


def preflight(tool: Tool, root: Path, probe_dir: Path, timeout: float) -> None:
    """Pick the first variant that runs on a probe file; record why none did."""
    if tool.kind == "floor":
        probe = probe_dir / "probe_peers.py"
        tool.argv = tool.variants[0]
        r = measure(subst(tool.argv, str(probe)), CORPUS, tool.env, timeout)
        why = failure(tool, r)
        if why:
            tool.argv, tool.error = None, why
        return
    if tool.kind == "ddplint":
        where = ddplint_origin(root, tool.env)
        if where is None or not is_within(Path(where), root):
            tool.error = (f"ddplint not importable from {root}"
                          + (f" (python would import {where})" if where else ""))
            return
    exe = tool.variants[0][0]
    if exe != PY and not Path(exe).exists():
        tool.error = f"not installed ({Path(exe).relative_to(REPO) if is_within(Path(exe), REPO) else exe} missing; run benchmarks/peers.py)"
        return
    probe = probe_dir / ("probe_ddp.py" if tool.kind == "ddplint" else "probe_peers.py")
    reasons = []
    quiet = None
    for variant in tool.variants:
        r = measure(subst(variant, str(probe)), CORPUS, tool.env, timeout)
        why = failure(tool, r)
        if why:
            reasons.append(f"`{short(variant)}`: {why}")
            if r.rc == 2 or USAGE_RE.search(r.err + r.out):
                continue  # usage error: try the next form of the command
            continue
        if tool.needle and tool.needle not in r.out + r.err:
            quiet = quiet or variant
            reasons.append(f"`{short(variant)}`: ran but did not report {tool.needle} on the probe")
            continue
        tool.argv = variant
        if variant is not tool.variants[0]:
            tool.note = "used `" + short(variant) + "`"
        return
    if quiet is not None and tool.kind != "ddplint":
        tool.argv = quiet
        tool.note = f"did not report {tool.needle} on the probe"
        return
    tool.error = "; ".join(reasons)[-600:]


def subst(argv: list[str], path: str) -> list[str]:
    return [a.replace("{path}", path) for a in argv]


def short(argv: list[str]) -> str:
    out = []
    for a in argv:
        if a == PY:
            a = "python"
        elif a.startswith(str(REPO) + os.sep):
            a = os.path.relpath(a, REPO)
            if a.startswith("benchmarks/venvs/"):
                a = a.split("/")[-1]
        out.append(a)
    return " ".join(shlex.quote(a) for a in out)


def is_within(p: Path, root: Path) -> bool:
    try:
        p.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def ddplint_origin(root: Path, env: dict[str, str]) -> str | None:
    r = subprocess.run(
        [PY, "-c", "import ddplint; print(ddplint.__file__)"],
        cwd=CORPUS, env=env, capture_output=True, text=True,
    )
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def setup_flake8_plugin(tool: Tool, root: Path, workdir: Path) -> None:
    """If no DDP flake8 entry point is installed in this python, load the
    plugin from root as a flake8 local plugin (config written to workdir)."""
    code = (
        "import json\nfrom importlib.metadata import entry_points\n"
        "print(json.dumps([e.value for e in entry_points(group='flake8.extension')"
        " if e.name.startswith('DDP')]))"
    )
    r = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=tool.env)
    registered = json.loads(r.stdout) if r.returncode == 0 else []
    if registered:
        return
    target = None
    pyproject = root / "pyproject.toml"
    if pyproject.exists():
        import tomllib

        data = tomllib.loads(pyproject.read_text())
        eps = data.get("project", {}).get("entry-points", {}).get("flake8.extension", {})
        for name, value in eps.items():
            if name.startswith("DDP"):
                target = (name, value)
    if target is None:
        tool.error = "no flake8.extension entry point DDP installed, none in pyproject.toml"
        return
    cfg = workdir / "flake8-ddp.cfg"
    cfg.write_text(
        "[flake8:local-plugins]\n"
        f"extension =\n    {target[0]} = {target[1]}\n"
        f"paths = {root}\n"
    )
    tool.variants = [[a for a in v if a != "--isolated"] for v in tool.variants]
    for v in tool.variants:
        v[3:3] = ["--config", str(cfg)]
    tool.note = "plugin loaded as a flake8 local plugin from " + str(root)


# ---------------------------------------------------------------------------
# The benchmark proper.


@dataclass
class Cell:
    tool: str
    corpus: str
    runs: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    files: int | None = None
    skipped: str | None = None


def run_corpus(tools: list[Tool], corpus: str, rounds: int, timeout: float,
               cells: dict[tuple[str, str], Cell]) -> None:
    active = [t for t in tools if t.argv and (t.scope == "all" or corpus in SAMPLES)]
    floor = next(t for t in tools if t.name == "floor: libcst parse")
    for t in tools:
        if t.scope == "all" or corpus in SAMPLES:
            c = cells.setdefault((t.name, corpus), Cell(t.name, corpus))
            if not t.argv:
                c.skipped = t.error or "not run"
    # prime the warm cache once per corpus
    for t in active:
        if t.warm:
            for d in DDPLINT_CACHE_DIRS:
                shutil.rmtree(CORPUS / d, ignore_errors=True)
            log(f"  prime {t.name} on {corpus} ...")
            r = measure(subst(t.argv, corpus), CORPUS, t.env, timeout)
            why = failure(t, r)
            if why:
                cells[(t.name, corpus)].errors.append("priming run: " + why)
    for rnd in range(rounds):
        k = rnd % len(active) if active else 0
        order = active[k:] + active[:k]
        for t in order:
            c = cells[(t.name, corpus)]
            if t.warm and c.errors and c.errors[0].startswith("priming"):
                continue
            r = measure(subst(t.argv, corpus), CORPUS, t.env, timeout)
            why = failure(t, r)
            seen = files_seen(t, r)
            if seen is not None:
                c.files = seen
            if why:
                c.errors.append(f"round {rnd + 1}: {why}")
                log(f"  [{corpus} r{rnd + 1}] {t.name:<24} FAILED {why[:150]}")
                continue
            c.runs.append({"round": rnd, "cpu": r.cpu, "wall": r.wall,
                           "maxrss_kib": r.maxrss_kib, "rc": r.rc})
            log(f"  [{corpus} r{rnd + 1}] {t.name:<24} cpu {r.cpu:8.2f}s  wall {r.wall:8.2f}s"
                f"  rc {r.rc}" + (f"  files {seen}" if seen is not None else ""))
    # tools that cannot report a file count while linting: list them, untimed
    for t in active:
        c = cells[(t.name, corpus)]
        if t.list_argv and c.files is None:
            r = measure(subst(t.list_argv, corpus), CORPUS, t.env, timeout)
            if r.rc == 0:
                c.files = sum(1 for line in r.out.splitlines() if line.strip().endswith(".py"))
    # ratios against the parse floor of the same round
    fruns = {x["round"]: x for x in cells[(floor.name, corpus)].runs}
    for t in tools:
        c = cells.get((t.name, corpus))
        if not c:
            continue
        for x in c.runs:
            f = fruns.get(x["round"])
            if f and f["cpu"] > 0:
                x["ratio_cpu"] = x["cpu"] / f["cpu"]
                x["ratio_wall"] = x["wall"] / f["wall"]


def med(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(c: Cell) -> dict:
    runs = c.runs
    return {
        "tool": c.tool,
        "corpus": c.corpus,
        "files": c.files,
        "rounds_ok": len(runs),
        "cpu_s": med([r["cpu"] for r in runs]),
        "wall_s": med([r["wall"] for r in runs]),
        "ratio_cpu": med([r["ratio_cpu"] for r in runs if "ratio_cpu" in r]),
        "ratio_wall": med([r["ratio_wall"] for r in runs if "ratio_wall" in r]),
        "status": status_text(c),
        "runs": runs,
        "errors": c.errors,
    }


def status_text(c: Cell) -> str:
    if c.skipped:
        return "FAILED: " + c.skipped if not c.skipped.startswith("not installed") else c.skipped
    if c.errors and not c.runs:
        return "FAILED: " + c.errors[0]
    if c.errors:
        return f"ok in {len(c.runs)} rounds, failed: " + c.errors[0]
    return "ok"


# ---------------------------------------------------------------------------
# Side measurements: peak RSS on the largest file; the editor case.


def all_files(tree: str) -> list[Path]:
    sys.path.insert(0, str(FLOORS))
    from _walk import py_files  # noqa: PLC0415

    return py_files([str(CORPUS / tree)])


def largest_file() -> Path:
    best = None
    for tree in FULL:
        for p in all_files(tree):
            n = p.read_bytes().count(b"\n")
            if best is None or n > best[0]:
                best = (n, p)
    return best[1]


TORCH_ROOTS = {"torch", "nn", "F", "dist"}


def torch_calls(data: bytes) -> int:
    """Calls in code (not in docstrings) whose callee is an attribute chain
    rooted at torch, nn, F or dist: torch.zeros(...), nn.Linear(...)."""
    import ast  # noqa: PLC0415

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return 0
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            while isinstance(f, ast.Attribute):
                f = f.value
            n += isinstance(f, ast.Name) and f.id in TORCH_ROOTS
    return n


# Run with the measured checkout on PYTHONPATH: for each path read from stdin, does some rule's
# needle occur, does some rule's screen hold, and how many findings are there.
CLASSIFY = """\
import json, sys
from ddplint.engine.lint import rules_for_text, rules_to_run
from ddplint.api import lint_source
from ddplint.rules import all_rules
rules = all_rules()
for path in sys.stdin.read().split():
    text = open(path, encoding="utf-8", errors="replace").read()
    try:
        findings = len(lint_source(text, path))
    except Exception:  # a file ddplint cannot check is no editor case
        findings = -1
    print(json.dumps([path, bool(rules_for_text(text, rules)), bool(rules_to_run(text, rules)),
                      findings]))
"""


def editor_files(root: Path, lo: int = 1400, hi: int = 1600) -> list[tuple[str, Path, int, int]]:
    """Real files of 1,400-1,600 lines, each the one with the most torch calls in code of
    its kind: any file; one where some rule's needles occur; one where ddplint reports."""
    candidates = []
    for tree in FULL:
        for p in all_files(tree):
            data = p.read_bytes()
            n = data.count(b"\n")
            if lo <= n <= hi:
                candidates.append(((torch_calls(data), -abs(n - 1500), p.as_posix()), p, n))
    candidates.sort(reverse=True)
    env = dict(base_env(), PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-c", CLASSIFY], input=" ".join(str(p) for _, p, _ in candidates),
                         capture_output=True, text=True, env=env, cwd=CORPUS)
    kinds = {Path(path): (needles, screens, findings) for path, needles, screens, findings in
             map(json.loads, out.stdout.splitlines())}
    chosen = []
    for label, wanted in (("most torch calls", lambda k: True),
                          ("most torch calls where some rule's needles occur", lambda k: k[0]),
                          ("most torch calls where ddplint reports a finding", lambda k: k[2] > 0)):
        for key, p, n in candidates:
            if p in kinds and wanted(kinds[p]):
                if all(p != q for _, q, _, _ in chosen):
                    chosen.append((label, p, n, key[0]))
                break
    return chosen


def rss_case(tools: list[Tool], rounds: int, timeout: float) -> dict:
    path = largest_file()
    rel = str(path.relative_to(CORPUS))
    lines = path.read_bytes().count(b"\n")
    log(f"\npeak RSS on the largest file: {rel} ({lines} lines)")
    out = {"file": rel, "lines": lines, "rows": []}
    for name in ("floor: read", "floor: libcst parse", "ddplint (cold)"):
        t = next(t for t in tools if t.name == name)
        row = {"tool": name, "maxrss_mib": None, "cpu_s": None, "status": "ok"}
        if not t.argv:
            row["status"] = "FAILED: " + (t.error or "not run")
        else:
            rss, cpu, errs = [], [], []
            for _ in range(rounds):
                r = measure(subst(t.argv, rel), CORPUS, t.env, timeout)
                why = failure(t, r)
                if why:
                    errs.append(why)
                else:
                    rss.append(r.maxrss_kib / 1024)
                    cpu.append(r.cpu)
            if rss:
                row["maxrss_mib"] = max(rss)
                row["cpu_s"] = med(cpu)
            if errs:
                row["status"] = "FAILED: " + errs[0] if not rss else "partly failed: " + errs[0]
        log(f"  {name:<24} maxrss {fmt(row['maxrss_mib'], 1)} MiB  cpu {fmt(row['cpu_s'])}s"
            f"  {row['status'] if row['status'] != 'ok' else ''}")
        out["rows"].append(row)
    return out


def ddp_entry_point(root: Path) -> tuple[str, str] | None:
    pyproject = root / "pyproject.toml"
    if not pyproject.exists():
        return None
    import tomllib  # noqa: PLC0415

    data = tomllib.loads(pyproject.read_text())
    eps = data.get("project", {}).get("entry-points", {}).get("flake8.extension", {})
    for name, value in eps.items():
        if name.startswith("DDP"):
            return name, value
    return None


def editor_cases(rounds: int, timeout: float, root: Path) -> list[dict]:
    return [editor_case(label, path, lines, calls, rounds, timeout, root)
            for label, path, lines, calls in editor_files(root)]


def editor_case(label: str, path: Path, lines: int, calls: int, rounds: int, timeout: float,
                root: Path) -> dict:
    """Plain flake8 (a venv with no plugins) against the same flake8 with
    ddplint loaded from root as a local plugin, on one ~1,500-line file."""
    rel = str(path.relative_to(CORPUS))
    log(f"\neditor case ({label}): {rel} ({lines} lines, {calls} torch calls)")
    flake8 = venv_exe("flake8", "flake8")
    base = [flake8, "--isolated", "--select", "E,F,W", "{path}"]
    env = base_env()
    err = None
    if not Path(flake8).exists():
        err = "not installed (benchmarks/venvs/flake8 missing; run benchmarks/peers.py)"
        cases = [("flake8 --select E,F,W", None, None, err)]
    else:
        cases = [("flake8 --select E,F,W", base, env, None)]
    ep = ddp_entry_point(root)
    if err is None and ep is None:
        err = f"no flake8.extension DDP entry point in {root}/pyproject.toml"
    if err is None:
        cfg = CORPUS / ".work" / "flake8-editor.cfg"
        cfg.parent.mkdir(exist_ok=True)
        cfg.write_text(f"[flake8:local-plugins]\nextension =\n    {ep[0]} = {ep[1]}\n"
                       f"paths = {root}\n")
        with_ddp = [flake8, "--config", str(cfg), "--select"]
        probe = CORPUS / ".work" / "probe_ddp.py"
        probe.write_text(PROBE_DDP)
        r = measure(with_ddp + ["DDP", str(probe)], CORPUS, env, 120)
        if r.rc not in LINT_OK or "DDP" not in r.out:
            err = "plugin did not load or report on the probe: " + tail(r.err or r.out)
        else:
            cases += [("flake8 --select DDP", with_ddp + ["DDP", "{path}"], env, None),
                      ("flake8 --select E,F,W,DDP", with_ddp + ["E,F,W,DDP", "{path}"], env,
                       None)]
    if err is not None:
        cases += [("flake8 --select DDP", None, None, err),
                  ("flake8 --select E,F,W,DDP", None, None, err)]
    lint = Tool("editor", "", [], "all")
    res: dict[str, list[dict]] = {c[0]: [] for c in cases}
    errs: dict[str, list[str]] = {c[0]: [] for c in cases}
    for rnd in range(rounds):
        runnable = [c for c in cases if c[1]]
        if not runnable:
            break
        k = rnd % len(runnable)
        for name, argv, env, _ in runnable[k:] + runnable[:k]:
            r = measure(subst(argv, rel), CORPUS, env, timeout)
            why = failure(lint, r)
            if why:
                errs[name].append(why)
            else:
                res[name].append({"round": rnd, "cpu": r.cpu, "wall": r.wall})
    rows = []
    basis = {x["round"]: x for x in res.get("flake8 --select E,F,W", [])}
    for name, argv, _, err in cases:
        runs = res[name]
        ratios = [x["cpu"] / basis[x["round"]]["cpu"] for x in runs if x["round"] in basis]
        wratios = [x["wall"] / basis[x["round"]]["wall"] for x in runs if x["round"] in basis]
        row = {
            "tool": name,
            "command": short(subst(argv, rel)) if argv else None,
            "cpu_s": med([x["cpu"] for x in runs]),
            "wall_s": med([x["wall"] for x in runs]),
            "ratio_cpu_vs_flake8": med(ratios),
            "ratio_wall_vs_flake8": med(wratios),
            "status": ("FAILED: " + err) if err else ("FAILED: " + errs[name][0]) if errs[name]
            and not runs else "ok",
            "runs": runs,
        }
        rows.append(row)
        log(f"  {name:<26} cpu {fmt(row['cpu_s'])}s  wall {fmt(row['wall_s'])}s  "
            f"x{fmt(row['ratio_cpu_vs_flake8'])} of flake8 E,F,W  "
            f"{row['status'] if row['status'] != 'ok' else ''}")
    return {"label": label, "file": rel, "lines": lines, "torch_calls": calls, "rows": rows}


# ---------------------------------------------------------------------------
# Reporting.


def fmt(v: float | None, nd: int = 2) -> str:
    return "—" if v is None else f"{v:.{nd}f}"


def ratio(v: float | None) -> str:
    return "—" if v is None else (f"{v:.3f}x" if v < 1 else f"{v:.2f}x")


def expected_files(corpus: str) -> int:
    return len(all_files(corpus))


def render(meta: dict, rows: list[dict], rss: dict | None, editor: list[dict] | None) -> str:
    out = ["# ddplint benchmark results", ""]
    out.append(f"- when: {meta['when']}  ")
    out.append(f"- mode: {meta['mode']}; rounds: samples {meta['rounds']}, full corpora "
               f"{meta['full_rounds']}  ")
    out.append(f"- machine: {meta['machine']}  ")
    out.append(f"- load average before / after: {meta['load_before']} / {meta['load_after']}  ")
    out.append(f"- ddplint: {meta['ddplint']}  ")
    out.append(f"- python {meta['python']}, libcst {meta['libcst']} (floor), "
               f"torch {meta['torch']}  ")
    out.append(f"- total time: {meta['elapsed_s']:.0f}s")
    out.append("")
    out.append("CPU = user+sys seconds of the process tree; ratios are per-round against "
               "the libcst-parse floor on the same corpus in the same round, median over "
               "rounds.")
    out.append("")
    out.append("| tool | corpus | files seen / in corpus | CPU s | wall s | CPU / parse floor "
               "| wall / parse floor | rounds | status |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        files = f"{r['files'] if r['files'] is not None else '?'} / {r['expected_files']}"
        out.append(
            f"| {r['tool']} | {r['corpus']} | {files} | {fmt(r['cpu_s'])} | {fmt(r['wall_s'])} "
            f"| {ratio(r['ratio_cpu'])} | {ratio(r['ratio_wall'])} | {r['rounds_ok']} "
            f"| {r['status'].replace('|', '/')} |"
        )
    for case in editor or ():
        out += ["", f"## Editor case: {case['label']} ({case['lines']} lines)",
                "", f"`{case['file']}` ({case['torch_calls']} torch calls), "
                "flake8 7.5.0 from `benchmarks/venvs/flake8` (no plugins installed); for the DDP rows "
                "ddplint is loaded into it from the measured checkout as a flake8 local plugin.", "",
                "| command | CPU s | wall s | CPU / flake8 E,F,W | wall / flake8 E,F,W | status |",
                "|---|---:|---:|---:|---:|---|"]
        for r in case["rows"]:
            out.append(f"| `{r['command'] or r['tool']}` | {fmt(r['cpu_s'])} | {fmt(r['wall_s'])} "
                       f"| {ratio(r['ratio_cpu_vs_flake8'])} | {ratio(r['ratio_wall_vs_flake8'])} "
                       f"| {r['status'].replace('|', '/')} |")
    if rss:
        out += ["", "## Peak RSS on the largest file", "",
                f"`{rss['file']}` ({rss['lines']} lines)", "",
                "| tool | max RSS MiB | CPU s | status |", "|---|---:|---:|---|"]
        for r in rss["rows"]:
            out.append(f"| {r['tool']} | {fmt(r['maxrss_mib'], 1)} | {fmt(r['cpu_s'])} "
                       f"| {r['status'].replace('|', '/')} |")
    out += ["", "## Commands", ""]
    for name, cmd in meta["commands"].items():
        out.append(f"- {name}: `{cmd}`")
    return "\n".join(out) + "\n"


def ddplint_version(root: Path) -> str:
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    return f"{root} @ {head or '?'}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 round, samples only")
    ap.add_argument("--rounds", type=int, default=2, help="rounds on the samples (default 2)")
    ap.add_argument("--full-rounds", type=int, default=1,
                    help="rounds on the full corpora (default 1)")
    ap.add_argument("--full-flake8", action="store_true",
                    help="also run `flake8 --select DDP` on the full corpora (+~6 min)")
    ap.add_argument("--ddplint-root", type=Path, default=REPO,
                    help="checkout whose ddplint is measured (put on PYTHONPATH)")
    ap.add_argument("--corpora", default="",
                    help="comma-separated subset of: " + ", ".join(SAMPLES + FULL))
    ap.add_argument("--only", default="", help="comma-separated substrings of tool names")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per process")
    ap.add_argument("--no-side", action="store_true", help="skip the RSS and editor cases")
    ap.add_argument("--out", type=Path, default=RESULTS / "latest.md")
    args = ap.parse_args()
    exit_on_sigterm()

    if not (CORPUS / "manifest.json").exists():
        log("no corpus: run `python benchmarks/corpus.py` first")
        return 2
    rounds = 1 if args.quick else max(1, args.rounds)
    full_rounds = 0 if args.quick else max(0, args.full_rounds)
    corpora = SAMPLES + (FULL if full_rounds else [])
    if args.corpora:
        wanted = [c.strip() for c in args.corpora.split(",") if c.strip()]
        bad = [c for c in wanted if c not in SAMPLES + FULL]
        if bad:
            ap.error("unknown corpus: " + ", ".join(bad))
        corpora = [c for c in wanted if c in SAMPLES or full_rounds]
    missing = [c for c in corpora if not (CORPUS / c).is_dir()]
    if missing:
        log(f"not built: {', '.join(missing)} (see `python benchmarks/corpus.py`'s output)")
        return 2
    root = args.ddplint_root.resolve()

    t_start = time.perf_counter()
    ddplint_at = ddplint_version(root)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    tools = make_tools(root, args.full_flake8)
    if args.only:
        keep = [s.strip().lower() for s in args.only.split(",") if s.strip()]
        tools = [t for t in tools if t.kind == "floor" or any(k in t.name.lower() for k in keep)]

    log(f"preflight (ddplint from {root})")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "probe_ddp.py").write_text(PROBE_DDP)
        (workdir / "probe_peers.py").write_text(PROBE_PEERS)
        for t in tools:
            if t.name == "flake8 --select DDP":
                (CORPUS / ".work").mkdir(exist_ok=True)
                setup_flake8_plugin(t, root, CORPUS / ".work")
            if t.error is None:
                preflight(t, root, workdir, 120)
            log(f"  {t.name:<24} " + (f"FAILED: {t.error}" if t.error else
                                      "ok: " + short(t.argv) + (f"  ({t.note})" if t.note else "")))

    cells: dict[tuple[str, str], Cell] = {}
    for corpus in corpora:
        n = rounds if corpus in SAMPLES else full_rounds
        log(f"\n== {corpus}: {n} round(s)")
        run_corpus(tools, corpus, n, args.timeout, cells)

    rss = editor = None
    if not args.no_side:
        by_name = {t.name: t for t in tools}
        if all(k in by_name for k in ("floor: read", "ddplint (cold)")):
            rss = rss_case(tools, 1, args.timeout)
        editor = editor_cases(max(5, rounds), args.timeout, root)

    rows = []
    expected = {c: expected_files(c) for c in corpora}
    for corpus in corpora:
        for t in tools:
            c = cells.get((t.name, corpus))
            if c:
                s = summarize(c)
                s["expected_files"] = expected[corpus]
                rows.append(s)

    meta = {
        "when": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "rounds": rounds,
        "full_rounds": full_rounds,
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs",
        "load_before": load_before,
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "ddplint": ddplint_at,
        "python": platform.python_version(),
        "libcst": _version("libcst"),
        "torch": json.loads((CORPUS / "manifest.json").read_text()).get("torch", {}).get("version"),
        "peers": json.loads((VENVS / "peers.json").read_text()) if (VENVS / "peers.json").exists() else {},
        "commands": {t.name: (short(t.argv) if t.argv else f"not run: {t.error}") for t in tools},
        "elapsed_s": time.perf_counter() - t_start,
    }
    text = render(meta, rows, rss, editor)
    log("\n" + text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    args.out.with_suffix(".json").write_text(json.dumps(
        {"meta": meta, "rows": rows, "rss": rss, "editor": editor}, indent=2) + "\n")
    log(f"wrote {args.out} and {args.out.with_suffix('.json').name}")
    return 0


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
