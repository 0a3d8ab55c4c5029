"""DDP002: a Dataset holding defaultdict(lambda: UNK), handed to spawned DataLoader workers.

Measured: the error starting the workers, or else the ids the workers gave to missing words
(they must equal what the lambda gave in-process).
"""

from ...measuring import Measurement, completed
from ...script_symptoms import exception

RULE = "DDP002"
BATCHABLE = False  # spawned workers re-import __main__


def measure_result(run, found, ctx) -> Measurement:
    ranks = found["ranks"]
    errors = [r["error"] for r in ranks if "error" in r]
    if errors:
        return Measurement(True, f"spawned workers cannot start: {errors[0]}", data=found)
    expected = sorted(set(found["in_process"].values()))
    got = sorted({i for r in ranks for i in r["worker_unknown_ids"]})
    steps = [r["steps"] for r in ranks]
    fine = all(steps) and got == expected and got
    text = (f"steps per rank {steps}; missing words -> {got} in workers, "
            f"{expected} in-process")
    return Measurement(not fine, text, completed(run, found), data=found)


# What `ddplint verify --script` looks for on the user's script.
script_symptom = exception(("pickl",), "pickling error")
