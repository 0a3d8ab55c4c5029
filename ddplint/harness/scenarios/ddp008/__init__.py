"""DDP008: a collective (or DDP's own forward) run by only some ranks, which hangs or
mismatches. No bundled scenario: the fix (calling `model.module` for rank-0-only evaluation) is
exercised by `verify --script` runs, which record the collectives each rank calls."""

from ...measuring import Measurement
from ...script_symptoms import failed_run

RULE = "DDP008"


def script_symptom(run, ctx: dict) -> Measurement:
    seqs = [r["collectives"] for r in run.ranks]
    inside = {r["rank"]: r.get("inside") for r in run.ranks if r.get("inside")}
    if run.launch.timed_out:
        stacks = "; ".join(f"rank {r['rank']} at {r['stack'][-1].strip().splitlines()[0]}"
                           for r in run.ranks if r.get("stack"))
        return Measurement(True, f"hang: {run.failure()}; waiting in {inside or 'no collective'}"
                           + (f"; {stacks}" if stacks else ""), data={"fatal": "the job hung"})
    if not any(seqs):
        return failed_run(run, "no torch.distributed collective was called")
    counts = [len(s) for s in seqs]
    if len({tuple(s) for s in seqs}) > 1:
        return Measurement(True, f"ranks called different collectives: {counts} calls per rank"
                           + (f"; still waiting: {inside}" if inside else "")
                           + (f"; {run.failure()}" if not run.completed else ""))
    return Measurement(False, f"every rank called the same {counts[0]} collectives")
