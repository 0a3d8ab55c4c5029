"""DDP003: a DistributedSampler never told the epoch. Measured: each rank's indices in
epochs 0 and 1."""

from ...measuring import Measurement, completed
from ...script_symptoms import failed_run, loaders, passes_through

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


def _epochs(loader: dict, finding) -> tuple[list[list[int]], int]:
    """The passes over a loader begun inside the finding's epoch loop (a warm-up pass before
    it is not an epoch), and how many passes were begun elsewhere."""
    sites = loader.get("pass_sites") or [[] for _ in loader["passes"]]
    inside = [p for p, at in zip(loader["passes"], sites) if passes_through(at, finding)]
    if not any(sites):  # facts without places: every pass
        return loader["passes"], 0
    return inside, len(loader["passes"]) - len(inside)


def script_symptom(run, ctx: dict) -> Measurement:
    """Epoch 1 against epoch 0, each a pass over a shuffling DistributedSampler's loader begun
    inside the loop the finding is about."""
    f = ctx["finding"]
    for number, per_rank in loaders(run, lambda ld: ld["distributed"] and ld["shuffle"]):
        epochs = [_epochs(ld, f) for ld in per_rank]
        pairs = [passes[:2] for passes, _ in epochs]
        if any(len(p) < 2 or not all(p) for p in pairs):
            continue
        same = [a[:len(b)] == b[:len(a)] for a, b in pairs]
        n = min(min(len(a), len(b)) for a, b in pairs)
        outside = max(other for _, other in epochs)
        skipped = f"; {outside} pass(es) begun outside that loop not compared" if outside else ""
        return Measurement(any(same), f"DataLoader {number}, passes begun in the loop at {f.path}:{f.line}: "
                           f"epoch 1 repeats epoch 0 on {sum(same)}/{len(same)} ranks ({n} samples "
                           f"compared per rank; rank 0 epoch 0 {pairs[0][0][:5]}..., epoch 1 "
                           f"{pairs[0][1][:5]}...){skipped}")
    return failed_run(run, f"no shuffling DistributedSampler was iterated for two epochs inside the "
                      f"loop at {f.path}:{f.line} (run at least 2 epochs)")
