"""``ddplint doctor``: check the machine, and optionally a launch command, before a multi-GPU run.

    ddplint doctor [--format text|json|sarif] [--workers N] [--shm-per-worker SIZE] [--probe]
                   [--list] [--] [LAUNCH COMMAND ...]

The launch command is words (`torchrun --nproc_per_node 8 train.py --lr 0.1`), or a shell or
SLURM script that holds one (`run.sh`, `bash run.sh`, `sbatch job.slurm`). The doctor's own
options come before it. Exit 0 when no check found a problem, 1 when one did, 2 on a usage
error (an unknown option, a launch file that cannot be read or holds no launch) or a bug in a
check (reported as its "could not check: internal error" line).
"""

from __future__ import annotations

import argparse
import sys

EXIT_CLEAN, EXIT_PROBLEMS, EXIT_ERROR = 0, 1, 2
_VALUED = {"--format", "--output-format", "--workers", "--shm-per-worker"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(  # its errors: the usage, "ddplint doctor: error: ...", exit 2
        prog="ddplint doctor",
        usage="ddplint doctor [options] [--] [LAUNCH COMMAND ...]",
        description="Check the machine (GPUs, CUDA_VISIBLE_DEVICES, /dev/shm, open files), its environment "
        "(NCCL_*, TORCH_*, CUDA_*, threads), its software (torch and the packages built for it) and, given one, the "
        "launch command and its script, before a multi-GPU run. Nothing on the machine is changed.",
        epilog="The launch command: words (torchrun --nproc_per_node 8 train.py --lr 0.1), or a shell or SLURM script "
        "that holds one (run.sh). Exit 0: no problem; 1: problems; 2: usage error.",
    )
    parser.add_argument("--format", "--output-format", dest="format", choices=("text", "json", "sarif"), default="text",
                        help="how to print the report (default: text)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="DataLoader workers per rank, where the script does not say (or to override it)")
    parser.add_argument("--shm-per-worker", metavar="SIZE",
                        help="shared memory one DataLoader worker holds: its prefetched batches (default 128M)")
    parser.add_argument("--probe", action="store_true",
                        help="also run the live probes: allocate the workers' shared memory for a moment, and have two "
                        "processes meet over gloo on 127.0.0.1 (imports torch; a few seconds)")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    return parser


def split(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the doctor's options, the launch command): the command starts at the first word that
    is not an option of the doctor's, or after `--`."""
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            return argv[:index], argv[index + 1 :]
        if not word.startswith("-"):
            break
        index += 2 if word in _VALUED else 1
    return argv[:index], argv[index:]


def _list_checks() -> int:
    from ddplint.doctor.checks import all_checks

    for check in all_checks():
        print(f"{check.code}  {check.subject:<12} {check.name:<30} {check.summary}")
    return EXIT_CLEAN


def main(argv: list[str], system=None) -> int:
    """`system`: the machine as read (ddplint.doctor.system.System); the real one by default."""
    from ddplint.doctor.checks import all_checks, run
    from ddplint.doctor.command import CommandError, read_command
    from ddplint.doctor.facts import Options, gather
    from ddplint.doctor.machine import parse_size
    from ddplint.doctor.probes import run_probes
    from ddplint.doctor.report import RENDERERS
    from ddplint.doctor.system import System

    own, words = split(list(argv))
    try:
        args = _parser().parse_args(own)
    except SystemExit as stop:  # --help (0), or a usage error already printed (2)
        return EXIT_CLEAN if stop.code == 0 else EXIT_ERROR
    if args.list:
        return _list_checks()
    try:
        options = Options(args.workers, parse_size(args.shm_per_worker) if args.shm_per_worker else None)
        if args.workers is not None and args.workers < 0:
            raise ValueError("--workers must be 0 or more")
        system = system or System()
        launch = read_command(words, system.cwd) if words else None
    except (ValueError, CommandError) as error:
        print(f"ddplint doctor: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    facts = gather(system, launch, options)
    if args.probe:
        run_probes(facts)
    outcomes = run(all_checks(), facts)
    sys.stdout.write(RENDERERS[args.format](facts, outcomes))
    if any(outcome.crashed for outcome in outcomes):
        return EXIT_ERROR
    return EXIT_PROBLEMS if any(outcome.found for outcome in outcomes) else EXIT_CLEAN
