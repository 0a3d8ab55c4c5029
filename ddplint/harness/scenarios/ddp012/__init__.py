"""DDP012: an argparse --local_rank option under torchrun. Measured: args.local_rank against
the LOCAL_RANK torchrun sets, per rank."""

from ...measuring import Measurement, completed, no_result, payload

RULE = "DDP012"
BATCHABLE = True


def measure(runs, ctx) -> Measurement:
    run, found = payload(runs, RULE)
    if found is None:
        return no_result(runs, RULE)
    ranks = found["ranks"]
    parsed, env = [r["parsed"] for r in ranks], [r["env"] for r in ranks]
    text = f"args.local_rank per rank {parsed}; LOCAL_RANK set by torchrun {env}"
    return Measurement(parsed != env, text, completed(run, found), data=found)
