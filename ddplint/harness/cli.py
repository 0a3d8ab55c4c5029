"""``ddplint verify``: prove each rule's fix on a real DDP run.

    ddplint verify [CODE ...] [--nproc-per-node N] [--nnodes N] [--node-rank R]
                   [--rdzv-endpoint HOST:PORT] [--timeout SECONDS] [--json PATH]
    ddplint verify --script PATH [--project DIR] [--max-steps N] [--max-seconds S] [--cpu]
                   [--nproc-per-node N] [--timeout SECONDS] [--json PATH] [-- SCRIPT ARGS]

Exit 0 only if every rule is CONFIRMED (or, for a rule without a fix, SYMPTOM SHOWN, NO FIX)
and every finding of --script is CONFIRMED; 1 otherwise; 2 on usage errors (a script that is
not valid Python among them).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path

from . import environment, launcher, report, runner, tempdirs
from .scenarios import all_scenarios


class UsageError(Exception):
    """Bad input: one line on stderr, exit 2."""


class Interrupted(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ddplint verify",
        description="Run each rule's pitfall program under torchrun, apply ddplint's fix to a "
        "copy, run the fixed copy, and report the symptom measured before and after.",
        epilog="On your own script: ddplint verify --script train.py [--max-steps N] "
        "[--max-seconds S] -- SCRIPT ARGS (the script runs on a copy; your files are never "
        "changed).",
    )
    p.add_argument("rules", nargs="*", metavar="CODE", help="rule codes (default: all)")
    p.add_argument("--nproc-per-node", type=int, default=None,
                   help="ranks per node (default: number of GPUs, at least 2; 2 on CPU)")
    p.add_argument("--nnodes", default="1", help="nodes, N or MIN:MAX; passed to torchrun")
    p.add_argument("--node-rank", type=int, default=None, help="passed to torchrun")
    p.add_argument("--rdzv-endpoint", default=None, help="passed to torchrun")
    p.add_argument("--timeout", type=float, default=180.0,
                   help="seconds allowed for each launch (default 180)")
    p.add_argument("--json", metavar="PATH", default=None, help="also write the report as JSON")
    p.add_argument("--script", metavar="PATH", default=None,
                   help="verify ddplint's fixes on this training script instead (on a copy); "
                   "its own arguments go after --")
    p.add_argument("--project", metavar="DIR", default=None,
                   help="with --script: the folder to copy (default: the script's folder)")
    p.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help="with --script: end every pass over a DataLoader after N batches")
    p.add_argument("--max-seconds", type=float, default=None, metavar="S",
                   help="with --script: stop each rank S seconds after the launch (facts kept, exit 0)")
    p.add_argument("--cpu", action="store_true",
                   help="with --script: run a script written for GPUs on CPU ranks, its CUDA "
                   "placement mapped to the CPU and NCCL to gloo (the default when no GPU is "
                   "present)")
    return p


def _check_nnodes(text: str) -> None:
    parts = text.split(":")
    if len(parts) > 2 or not all(p.isdigit() and int(p) >= 1 for p in parts) or (
            len(parts) == 2 and int(parts[0]) > int(parts[1])):
        raise UsageError(f"--nnodes must be N or MIN:MAX with 1 <= MIN <= MAX, not {text!r}")


def _check_json_path(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"--json {path}: is a folder")
    if not os.path.isdir(folder):
        raise UsageError(f"--json {path}: no such folder {folder}")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"--json {path}: not writable")


def check_common(args) -> None:
    """The checks every verify run needs, before anything is launched."""
    if args.nproc_per_node is not None and args.nproc_per_node < 1:
        raise UsageError("--nproc-per-node must be at least 1")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    _check_nnodes(args.nnodes)
    if args.json:
        _check_json_path(args.json)


def check_environment(project: Path | None = None) -> tuple[int, list[str]]:
    """torch, and the packages built against it that the script imports, checked before
    anything runs: the GPUs torch sees, and notes for the report. A problem that stops the
    runs is a UsageError naming what to install."""
    found = environment.probe()
    stops, notes = environment.check(found, environment.imported_companions(project) if project else set())
    if stops:
        raise UsageError(stops[0])
    for note in notes:
        print(f"ddplint verify: note: {note}", file=sys.stderr, flush=True)
    return found.gpus, notes


def _rules(names: list[str]) -> list[str]:
    from ddplint.rules import all_rules

    scenarios = all_scenarios()
    rules = [r.upper() for r in names] or list(scenarios)
    known = {r.code for r in all_rules()}
    unknown = [r for r in rules if r not in known]
    if unknown:
        raise UsageError(f"unknown rule(s): {', '.join(unknown)}")
    missing = [r for r in rules if r not in scenarios]
    if missing:
        raise UsageError(f"no scenario for {', '.join(missing)} (rules with one: "
                         f"{', '.join(scenarios)})")
    return rules


def topology(args, gpus: int | None = None):
    gpus = launcher.count_gpus() if gpus is None else gpus
    return launcher.choose_topology(gpus, args.nproc_per_node, args.nnodes, args.node_rank,
                                    args.rdzv_endpoint)


def log(msg: str) -> None:
    print(f"  .. {msg}", file=sys.stderr, flush=True)


def write_json(path: str | None, data: dict) -> None:
    if path:
        try:
            report.write_json(path, data)
        except OSError as exc:
            raise UsageError(f"--json {path}: cannot write: {exc.strerror or exc}") from None


def cpu_mapping_reason(asked: bool, topo) -> str:
    """Why a script's GPU placement runs on CPU ranks, or "" when it runs on its GPUs. A script
    puts rank i on cuda:i and NCCL refuses two ranks on one GPU, so fewer GPUs than ranks maps
    too."""
    if asked:
        return "--cpu"
    if not topo.gpus:
        return "no GPU found"
    if topo.gpus < topo.nproc_per_node:
        return f"{topo.gpus} GPU(s) for {topo.nproc_per_node} ranks, and a script gives each rank its own GPU"
    return ""


def _script_options(args, script_args: list[str]):
    from . import script as script_mod
    from .script import ScriptOptions

    if args.rules:
        raise UsageError("rule codes and --script do not go together")
    script = os.path.abspath(args.script)
    if not os.path.isfile(script):
        raise UsageError(f"--script {args.script}: no such file")
    project = os.path.abspath(args.project) if args.project else os.path.dirname(script)
    if not os.path.isdir(project):
        raise UsageError(f"--project {args.project}: no such folder")
    if os.path.commonpath([project, script]) != project:
        raise UsageError(f"--script {args.script} is not inside --project {args.project}")
    if args.max_steps is not None and args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    if args.max_seconds is not None and not args.max_seconds > 0:
        raise UsageError("--max-seconds must be more than 0")
    try:
        script_mod.check_syntax(Path(script))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return ScriptOptions(Path(script), script_args, Path(project), None, args.timeout,
                         args.max_steps, args.max_seconds, log=log)


def _run_script(args, script_args: list[str]) -> int:
    from . import script as script_mod

    opts = _script_options(args, script_args)
    check_common(args)
    gpus, opts.notes = check_environment(opts.project)
    start = time.monotonic()
    opts.topology = topology(args, 0 if args.cpu else gpus)
    opts.cpu_mapping = cpu_mapping_reason(args.cpu, opts.topology)
    mapped = ", GPU placement mapped to the CPU" if opts.cpu_mapping else ""
    print(f"ddplint verify: {opts.script} on {opts.topology.backend}, "
          f"{opts.topology.nproc_per_node} ranks per node{mapped}", file=sys.stderr, flush=True)
    try:
        result = script_mod.verify_script(opts)
    except RuntimeError as exc:
        raise UsageError(str(exc)) from None
    total = time.monotonic() - start
    print(script_mod.render(result, opts, total))
    write_json(args.json, script_mod.to_json(result, opts, total))
    return 0 if result.ok else 1


def _run(args) -> int:
    if args.script is None and (args.project or args.max_steps or args.max_seconds or args.cpu):
        raise UsageError("--project, --max-steps, --max-seconds and --cpu go with --script")
    rules = _rules(args.rules)
    check_common(args)
    gpus, _ = check_environment()
    start = time.monotonic()
    topo = topology(args, gpus)
    opts = runner.Options(topo, timeout=args.timeout, log=log)
    print(f"ddplint verify: {' '.join(rules)} on {topo.backend}, "
          f"{topo.nproc_per_node} ranks per node", file=sys.stderr, flush=True)
    outcomes = runner.verify(rules, opts)
    total = time.monotonic() - start
    print(report.table(outcomes, topo, total))
    write_json(args.json, report.to_json(outcomes, topo, total))
    return 0 if runner.passed(outcomes) else 1


def _on_signal(signum, frame):
    # Once: the clean-up that follows (killing the job, removing folders) must not be cut short.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted(signum)


def main(argv: list[str]) -> int:
    parser = _parser()
    script_args: list[str] = []
    if "--" in argv:  # everything after it belongs to the script
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    if script_args and args.script is None:
        print("ddplint verify: arguments after -- go with --script", file=sys.stderr)
        return 2
    main_thread = threading.current_thread() is threading.main_thread()
    signals = (signal.SIGTERM, signal.SIGINT) if main_thread else ()
    previous = {sig: signal.signal(sig, _on_signal) for sig in signals}
    try:
        tempdirs.sweep()  # what runs killed outright (SIGKILL) left behind
        return _run_script(args, script_args) if args.script is not None else _run(args)
    except UsageError as exc:
        print(f"ddplint verify: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(f"ddplint verify: stopped by {signal.Signals(exc.signum).name}; "
              "the launched processes and temporary folders were removed", file=sys.stderr)
        return 128 + exc.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
