"""DDP003: a DistributedSampler never told the epoch. Measured: each rank's indices in
epochs 0 and 1."""

from ...measuring import Measurement, completed
from ...script_symptoms import failed_run, loaders

RULE = "DDP003"


def measure_result(run, found, ctx) -> Measurement:
    e0, e1, n = found["epoch0"], found["epoch1"], found["dataset"]
    same = [a == b for a, b in zip(e0, e1)]
    disjoint = all(
        sum(len(r) for r in ep) == len(set().union(*map(set, ep))) == n for ep in (e0, e1)
    )
    text = (f"epoch 1 repeats epoch 0 on {sum(same)}/{len(same)} ranks "
            f"(rank 0: {e0[0][:6]}... vs {e1[0][:6]}...); ranks disjoint and covering: {disjoint}")
    return Measurement(any(same) or not disjoint, text, completed(run, found), data=found)


def script_symptom(run, ctx: dict) -> Measurement:
    for number, per_rank in loaders(run, lambda ld: ld["distributed"] and ld["shuffle"]):
        pairs = [ld["passes"][:2] for ld in per_rank if len(ld["passes"]) >= 2]
        if len(pairs) < len(per_rank) or not all(a and b for a, b in pairs):
            continue
        same = [a[:len(b)] == b[:len(a)] for a, b in pairs]
        n = min(min(len(a), len(b)) for a, b in pairs)
        return Measurement(any(same), f"DataLoader {number}: epoch 1 repeats epoch 0 on "
                           f"{sum(same)}/{len(same)} ranks ({n} samples compared per rank; rank 0 "
                           f"epoch 0 {pairs[0][0][:5]}..., epoch 1 {pairs[0][1][:5]}...)")
    return failed_run(run, "no shuffling DistributedSampler was iterated for two epochs "
                       "(run at least 2 epochs)")
