"""``ddplint verify``: prove each rule's fix on a real DDP run.

    ddplint verify [CODE ...] [--nproc-per-node N] [--nnodes N] [--node-rank R]
                   [--rdzv-endpoint HOST:PORT] [--timeout SECONDS] [--json PATH]

Exit 0 only if every rule that ran is CONFIRMED; 1 otherwise; 2 on usage errors.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time

from . import launcher, report, runner


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ddplint verify",
        description="Run each rule's pitfall program under torchrun, apply ddplint's fix to a "
        "copy, run the fixed copy, and report the symptom measured before and after.",
    )
    p.add_argument("rules", nargs="*", metavar="CODE", help="rule codes (default: all)")
    p.add_argument("--nproc-per-node", type=int, default=None,
                   help="ranks per node (default: number of GPUs, at least 2; 2 on CPU)")
    p.add_argument("--nnodes", default="1", help="passed to torchrun")
    p.add_argument("--node-rank", type=int, default=None, help="passed to torchrun")
    p.add_argument("--rdzv-endpoint", default=None, help="passed to torchrun")
    p.add_argument("--timeout", type=float, default=180.0,
                   help="seconds allowed for each launch (default 180)")
    p.add_argument("--json", metavar="PATH", default=None, help="also write the report as JSON")
    return p


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    rules = [r.upper() for r in args.rules] or list(runner.RULE_CODES)
    unknown = [r for r in rules if r not in runner.RULE_CODES]
    if unknown:
        print(f"ddplint verify: unknown rule(s): {', '.join(unknown)} "
              f"(known: {', '.join(runner.RULE_CODES)})", file=sys.stderr)
        return 2
    if args.nproc_per_node is not None and args.nproc_per_node < 1:
        print("ddplint verify: --nproc-per-node must be at least 1", file=sys.stderr)
        return 2
    if shutil.which(sys.executable) is None:
        print("ddplint verify: no Python interpreter to launch", file=sys.stderr)
        return 2
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        print("ddplint verify: needs PyTorch (pip install torch)", file=sys.stderr)
        return 2

    start = time.monotonic()
    gpus = launcher.count_gpus()
    topo = launcher.choose_topology(gpus, args.nproc_per_node, args.nnodes, args.node_rank,
                                    args.rdzv_endpoint)
    opts = runner.Options(topo, timeout=args.timeout,
                          log=lambda msg: print(f"  .. {msg}", file=sys.stderr, flush=True))
    print(f"ddplint verify: {' '.join(rules)} on {topo.backend}, "
          f"{topo.nproc_per_node} ranks per node", file=sys.stderr, flush=True)
    outcomes = runner.verify(rules, opts)
    total = time.monotonic() - start
    print(report.table(outcomes, topo, total))
    if args.json:
        report.write_json(args.json, report.to_json(outcomes, topo, total))
    return 0 if outcomes and all(o.verdict == runner.CONFIRMED for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
