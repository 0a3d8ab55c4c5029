"""DDP008: a collective (or DDP's own forward) run by only some ranks, which hangs or
mismatches. No bundled scenario: the fix (calling `model.module` for rank-0-only evaluation) is
exercised by `verify --script` runs, which record the collectives each rank calls."""

from ...measuring import Measurement
from ...script_symptoms import failed_run

RULE = "DDP008"


def _waiting(rank: dict) -> str | None:
    """What a hung rank was waiting in: a collective, DDP's own communication, or nothing (it
    was still running the script's code: a download retrying, a long step)."""
    if rank.get("inside"):
        return rank["inside"]
    if rank.get("finished") is not None:
        return "(it had finished)"
    stack = "".join(rank.get("stack") or ())
    return next((what for mark, what in _DISTRIBUTED_CODE if mark in stack), None)


# Where a rank waits on its peers in torch's own code (DDP's buffer broadcast, its reducer).
_DISTRIBUTED_CODE = (("nn/parallel/distributed.py", "DDP's communication"),
                     ("torch/distributed/", "torch's distributed package"))


def _hang(run) -> Measurement:
    """A hang is this rule's symptom only if every rank still running waited on its peers;
    one still at work in the script's code (a download retrying) hung the job itself."""
    waiting = {r["rank"]: _waiting(r) for r in run.ranks}
    where = "; ".join(f"rank {r['rank']} at {r['stopped_in'][0]}" for r in run.ranks if r.get("stopped_in"))
    text = f"hang: {run.failure()}" + (f"; {where}" if where else "")
    busy = [rank for rank, what in waiting.items() if what is None]
    if busy or not waiting:
        return Measurement(None, f"{text}; rank(s) {busy} were not waiting in a collective, so the hang "
                           "is not a collective run by only some ranks")
    stacks = "; ".join(f"rank {r['rank']} at {r['stack'][-1].strip().splitlines()[0]}"
                       for r in run.ranks if r.get("stack"))
    return Measurement(True, f"{text}; waiting in {waiting}" + (f"; {stacks}" if stacks else ""),
                       data={"fatal": "the job hung"})


def _agree_as_reported(run, silent: list[int]) -> bool:
    """Whether the collectives of the ranks that reported to the end are the same, and those
    of the ranks that did not are a beginning of them."""
    full = {tuple(r["collectives"]) for r in run.ranks if r["rank"] not in silent}
    if len(full) > 1:
        return False
    longest = max((tuple(r["collectives"]) for r in run.ranks), key=len)
    return all(tuple(r["collectives"]) == longest[:len(r["collectives"])] for r in run.ranks)


def script_symptom(run, ctx: dict) -> Measurement:
    seqs = [r["collectives"] for r in run.ranks]
    inside = {r["rank"]: r.get("inside") for r in run.ranks if r.get("inside")}
    if run.launch.timed_out:
        return _hang(run)
    counts = [len(s) for s in seqs]
    silent = run.silent_ranks()
    if silent and _agree_as_reported(run, silent):
        # A rank killed or aborted reported only up to its last save: fewer calls are no
        # mismatch. A rank that finished had every collective it called completed by all.
        finished = [r for r in run.ranks if r.get("finished")]
        if finished:
            return Measurement(False, f"no hang: rank(s) {[r['rank'] for r in finished]} finished, so "
                               f"every rank joined their {len(finished[0]['collectives'])} collective(s); "
                               f"rank(s) {silent} then ended without a final report")
        return failed_run(run, "the ranks' collectives agree as far as they were reported")
    if len({tuple(s) for s in seqs}) > 1:
        return Measurement(True, f"ranks called different collectives: {counts} calls per rank"
                           + (f"; still waiting: {inside}" if inside else "")
                           + (f"; {run.failure()}" if not run.completed else ""))
    if not run.completed:
        what = f"every rank called the same {counts[0]} collectives" if any(seqs) else \
            "no torch.distributed collective was called"
        return failed_run(run, what)
    return Measurement(False, f"the job completed without a hang, and every rank called the same "
                       f"{counts[0] if seqs else 0} torch.distributed collectives")
