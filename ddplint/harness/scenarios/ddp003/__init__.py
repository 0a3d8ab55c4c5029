"""DDP003: a DistributedSampler never told the epoch. Measured: each rank's indices in
epochs 0 and 1."""

from ...measuring import Measurement, completed, no_result, payload

RULE = "DDP003"
BATCHABLE = True


def measure(runs, ctx) -> Measurement:
    run, found = payload(runs, RULE)
    if found is None:
        return no_result(runs, RULE)
    e0, e1, n = found["epoch0"], found["epoch1"], found["dataset"]
    same = [a == b for a, b in zip(e0, e1)]
    disjoint = all(
        sum(len(r) for r in ep) == len(set().union(*map(set, ep))) == n for ep in (e0, e1)
    )
    text = (f"epoch 1 repeats epoch 0 on {sum(same)}/{len(same)} ranks "
            f"(rank 0: {e0[0][:6]}... vs {e1[0][:6]}...); ranks disjoint and covering: {disjoint}")
    return Measurement(any(same) or not disjoint, text, completed(run, found), data=found)
