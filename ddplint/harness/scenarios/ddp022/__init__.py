"""DDP022: an evaluation DistributedSampler that pads the dataset by repeating samples, whose
per-rank results are combined into one metric. No bundled scenario (the rule offers no fix);
`tests/test_new_rule_symptoms.py` shows the padding with DistributedSampler alone.

A script run shows the padding: in the first pass over the distributed loader the finding is
about, the samples read by more than one rank (each is counted twice in a combined metric)."""

from ...measuring import Measurement
from ...script_symptoms import failed_run, loaders_of

RULE = "DDP022"


def script_symptom(run, ctx: dict) -> Measurement:
    """In the first pass over the distributed loader the finding is about (shuffling or not:
    DistributedSampler pads either way, unless drop_last), the samples read by more than one
    rank."""
    chosen, which = loaders_of(run, ctx["finding"], lambda ld: ld["distributed"])
    for number, per_rank in chosen:
        reads = [ld["passes"][0] if ld["passes"] else [] for ld in per_rank]
        if not all(reads):
            continue
        seen = [i for r in reads for i in r]
        twice = len(seen) - len(set(seen))
        text = (f"DataLoader {number} ({which}; dataset of {per_rank[0]['dataset']}): samples read per "
                f"rank {[len(r) for r in reads]}; {twice} read by more than one rank")
        cut = any(r.get("stopped") == "max-steps" for r in run.ranks)
        if cut and not twice:  # the padding comes last: a pass cut short never reaches it
            return Measurement(None, f"{text}; the passes were cut short by --max-steps")
        return Measurement(twice > 0, text)
    return failed_run(run, "no DistributedSampler's loader was read on every rank")
