"""DDP012: an argparse --local_rank option under torchrun. Measured: args.local_rank against
the LOCAL_RANK torchrun sets, per rank."""

import re

from ...measuring import Measurement, completed
from ...script_symptoms import failed_run, fatal

RULE = "DDP012"


def measure_result(run, found, ctx) -> Measurement:
    ranks = found["ranks"]
    parsed, env = [r["parsed"] for r in ranks], [r["env"] for r in ranks]
    text = f"args.local_rank per rank {parsed}; LOCAL_RANK set by torchrun {env}"
    return Measurement(parsed != env, text, completed(run, found), data=found)


def script_symptom(run, ctx: dict) -> Measurement:
    """What the launcher passes (torchrun: nothing, LOCAL_RANK set) and the value of
    args.local_rank where the script reads it, not just after parsing (a script may set it
    from LOCAL_RANK itself); argparse exiting on a local-rank option is the symptom too."""
    refused = [f"rank {r['rank']}: error: {e}" for r in run.ranks for e in r.get("parse_errors", ())
               if re.search(r"local.rank", e)]
    if refused:
        return Measurement(True, f"argparse exits: {refused[0]}", data=fatal(run, refused[0]))
    seen = [r.get("local_rank") for r in run.ranks]
    if not run.ranks or not all(seen):
        return failed_run(run, "no argument parser with local_rank ran")
    f = ctx["finding"]
    defined = {s.get("defined_at") for s in seen} - {None}
    elsewhere = sorted(d for d in defined if d.rpartition(":")[0] != f.path)
    if elsewhere and len(elsewhere) == len(defined):
        return Measurement(None, f"the local_rank option this run parsed was defined at "
                           f"{', '.join(elsewhere)}, not in {f.path}")
    env = [s["env"] for s in seen]
    text = f"args.local_rank parsed {[s['parsed'] for s in seen]}, LOCAL_RANK {env}"
    launch = next((s["launch_option"] for s in seen if s.get("launch_option")), None)
    later = (f"; under torch.distributed.launch, which passes --local-rank=N, the parser would "
             f"exit: {launch}") if launch else ""
    reads = [(r["rank"], read[0], read[1], s["env"], read[2] if len(read) > 2 else False)
             for r, s in zip(run.ranks, seen) for read in s.get("reads", ())]
    uses = [(rank, value, where, env) for rank, value, where, env, compared in reads if not compared]
    wrong = [(rank, value, where) for rank, value, where, env in uses if str(value) != env]
    if wrong:
        rank, value, where = wrong[0]
        return Measurement(True, f"{text}; rank {rank} used args.local_rank = {value} at {where}{later}")
    if reads and not uses:  # `args.local_rank if args.local_rank != -1 else LOCAL_RANK`
        return Measurement(False, f"{text}; the script only compared args.local_rank (at {reads[0][2]}), "
                           f"a fallback check, and never used its value{later}")
    if not reads:  # on GPUs it might (a CUDA-only branch): not seen, not absent
        return Measurement(None, f"{text}; the script never read args.local_rank after parsing{later}")
    return Measurement(False, f"{text}; where the script uses args.local_rank ({uses[0][2]}) it "
                       f"equals LOCAL_RANK on every rank{later}")
