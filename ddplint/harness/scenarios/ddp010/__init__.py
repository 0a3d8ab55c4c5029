"""DDP010: random_split without a seeded generator after per-rank seeding. Measured: each
rank's validation indices."""

from ...measuring import Measurement, completed
from ...script_symptoms import failed_run

RULE = "DDP010"


def measure_result(run, found, ctx) -> Measurement:
    val = found["val"]
    distinct = len({tuple(v) for v in val})
    shared = len(set.intersection(*map(set, val)))
    text = (f"ranks drew {distinct} distinct validation split(s) over {len(val)} ranks; {shared}/{len(val[0])} "
            f"validation indices common to all ranks (rank 0: {val[0][:5]}...)")
    return Measurement(distinct > 1, text, completed(run, found), data=found)


def script_symptom(run, ctx: dict) -> Measurement:
    splits = [tuple(r["splits"][0]) for r in run.ranks if r["splits"]]
    if len(splits) < len(run.ranks) or not splits:
        return failed_run(run, "random_split was not called on every rank")
    distinct = len(set(splits))
    return Measurement(distinct > 1, f"ranks drew {distinct} distinct split(s) over {len(splits)} ranks "
                       f"(rank 0's first part starts {list(splits[0][:5])})")
