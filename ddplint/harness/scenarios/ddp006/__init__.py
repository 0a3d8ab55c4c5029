"""DDP006: a DistributedSampler subclass whose __iter__ never takes the rank's share.
Measured: each rank's indices for an even and an odd dataset size."""

from ...measuring import Measurement, completed
from ...script_symptoms import rank_overlap

RULE = "DDP006"


def measure_result(run, found, ctx) -> Measurement:
    even_n, odd_n = found["sizes"]
    even, odd = found["even"], found["odd"]
    shared = len(set.intersection(*map(set, even))) if len(even) > 1 else 0
    disjoint = sum(len(r) for r in even) == len(set().union(*map(set, even)))
    covers = set().union(*map(set, even)) == set(range(even_n)) and set().union(
        *map(set, odd)) == set(range(odd_n))
    even_lens, odd_lens = [len(r) for r in even], [len(r) for r in odd]
    equal = len(set(even_lens)) == 1 and len(set(odd_lens)) == 1
    text = (f"size {even_n}: per-rank {even_lens}, {shared} indices on every rank, "
            f"disjoint: {disjoint}; size {odd_n}: per-rank {odd_lens}; covering: {covers}")
    return Measurement(not (disjoint and equal and covers), text, completed(run, found), data=found)


# What `ddplint verify --script` looks for on the user's script.
script_symptom = rank_overlap(lambda ld: ld["distributed"], "DistributedSampler")
