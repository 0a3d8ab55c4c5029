"""DDP009: the DDP wrapper's state dict loaded into the bare model. Measured: the load error
per rank, or whether the loaded weights equal the trained ones."""

from ...measuring import Measurement, completed
from ...script_symptoms import exception

RULE = "DDP009"


def measure_result(run, found, ctx) -> Measurement:
    ranks = found["ranks"]
    errors = [r["error"] for r in ranks if "error" in r]
    if errors:
        return Measurement(True, f"load into the unwrapped model fails on {len(errors)}/{len(ranks)} "
                           f"ranks: {errors[0][:160]}", completed(run, found), data=found)
    equal = all(r["equal"] for r in ranks)
    text = f"loads into the unwrapped model on all {len(ranks)} ranks; weights equal to trained: {equal}"
    return Measurement(not equal, text, completed(run, found), data=found)


# What `ddplint verify --script` looks for on the user's script.
script_symptom = exception(('Unexpected key(s) in state_dict: "module.', "Missing key(s) in state_dict"),
                           "state dict key mismatch")
