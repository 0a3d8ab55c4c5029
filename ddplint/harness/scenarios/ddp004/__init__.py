"""DDP004: every rank loads a checkpoint whose storages are tagged cuda:0/cuda:1, without
map_location. Measured: the load error per rank, or GPU-0 bytes on ranks >= 1, or the devices
and weights loaded."""

from ...measuring import Measurement, completed, no_result, payload

RULE = "DDP004"
BATCHABLE = True


def measure(runs, ctx) -> Measurement:
    run, found = payload(runs, RULE)
    if found is None:
        return no_result(runs, RULE)
    ranks = found["ranks"]
    errors = [f"rank {r['rank']}: {r['error']}" for r in ranks if "error" in r]
    gpu0 = {r["rank"]: r.get("gpu0_bytes", 0) for r in ranks}
    stray = {k: v for k, v in gpu0.items() if k >= 1 and v > 0}
    if errors:
        text = f"load fails on {len(errors)}/{len(ranks)} ranks: {errors[0].split(': ', 1)[1]}"
    elif stray:
        text = f"ranks >= 1 allocate on GPU 0: {stray} bytes"
    else:
        devs = sorted({d for r in ranks for d in r.get("devices", [])})
        equal = all(r.get("equal") for r in ranks)
        text = f"loads on all {len(ranks)} ranks to {devs}; weights equal to saved: {equal}"
        return Measurement(not equal, text, completed(run, found), data=found)
    return Measurement(True, text, completed(run, found), data=found)
