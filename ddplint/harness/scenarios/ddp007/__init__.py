"""DDP007: a DistributedSampler built but the DataLoader gets shuffle=True. Measured: the
samples each rank reads."""

from ...measuring import Measurement, completed, overlap
from ...script_symptoms import rank_overlap

RULE = "DDP007"


def measure_result(run, found, ctx) -> Measurement:
    seen, n = found["seen"], found["dataset"]
    shared, partition = overlap(seen, n)
    text = (f"samples read per rank {[len(r) for r in seen]} of {n}; {shared} read by every rank; "
            f"ranks disjoint and covering: {partition}")
    return Measurement(not partition, text, completed(run, found), data=found)


# What `ddplint verify --script` looks for on the user's script.
script_symptom = rank_overlap(lambda ld: ld["sharded_dataset"],
                              "DataLoader over a dataset with a DistributedSampler")
