"""DDP004: every rank loads a checkpoint whose storages are tagged cuda:0/cuda:1, without
map_location. Measured: the load error per rank, or GPU-0 bytes on ranks >= 1, or the devices
and weights loaded."""

from ...measuring import Measurement, completed
from ...script_symptoms import failed_run, fatal

RULE = "DDP004"
CPU_MAPPING_HIDES = ("every tensor is on the CPU, so no checkpoint this run saves carries the GPU "
                     "that torch.load would restore it to")


def measure_result(run, found, ctx) -> Measurement:
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


def script_symptom(run, ctx: dict) -> Measurement:
    loads = [(r["rank"], ld) for r in run.ranks for ld in r["loads"]]
    if not loads:
        return failed_run(run, "torch.load was never called")
    errors = [f"rank {rank}: {ld['error']}" for rank, ld in loads if "error" in ld]
    cuda_errors = [e for e in errors if "cuda" in e.lower()]
    if cuda_errors:
        return Measurement(True, f"torch.load fails on {len(cuda_errors)} load(s): {cuda_errors[0]}",
                           data=fatal(run, cuda_errors[0]))
    on_gpu0 = sorted({rank for rank, ld in loads if rank >= 1 and "cuda:0" in ld.get("devices", [])})
    devices = sorted({d for _, ld in loads for d in ld.get("devices", [])})
    text = f"{len(loads)} load(s) over {len(run.ranks)} ranks put tensors on {devices}"
    if on_gpu0:
        return Measurement(True, f"{text}; ranks {on_gpu0} load onto cuda:0")
    if all(ld.get("mapped") for _, ld in loads):
        return Measurement(False, f"{text}, where map_location put them")
    if not ctx["gpus"] and all(d == "cpu" for d in devices):
        # Absent here proves nothing: a checkpoint saved on the CPU loads there anyway.
        return Measurement(False, f"{text}: the checkpoint was saved without a GPU, so the "
                           "symptom (tensors restored to the saving GPU) cannot show",
                           needs_gpu=True)
    return Measurement(False, text)
