"""DDP014: every rank writes the same checkpoint file. No bundled scenario (the rule offers
no fix); `verify --script` records the files torch.save writes on each rank."""

import os

from ...measuring import Measurement
from ...script_symptoms import failed_run

RULE = "DDP014"


def script_symptom(run, ctx: dict) -> Measurement:
    writers: dict[str, set[int]] = {}
    for r in run.ranks:
        for path in r["saves"]:
            writers.setdefault(path, set()).add(r["rank"])
    if not writers:
        return failed_run(run, "torch.save was never called")
    shared = {p: sorted(w) for p, w in writers.items() if len(w) > 1}
    if shared:
        path, ranks = next(iter(shared.items()))
        return Measurement(True, f"{len(shared)} file(s) written by several ranks: "
                           f"{os.path.basename(path)} by ranks {ranks}")
    return Measurement(False, f"{len(writers)} file(s) written, each by one rank")
