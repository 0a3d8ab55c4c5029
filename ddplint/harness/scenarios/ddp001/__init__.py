"""DDP001: a CUDA tensor as a default argument, built at import in every process.

With GPUs: the processes holding a CUDA context on GPU 0 (observed from outside while the job
is paused). On a CPU build: whether the module can be imported in the ranks at all.
"""

from ... import launcher
from ...measuring import LaunchSpec, Measurement, completed, no_result, result

RULE = "DDP001"
BATCHABLE = False  # spawned workers re-import __main__


def _contexts(run_id: str) -> dict:
    from ...probes import cuda_context_pids

    held = cuda_context_pids(launcher.job_pids(run_id))
    return {"contexts": [{"pid": p, "name": launcher.proc_name(p), "gpus": g}
                         for p, g in sorted(held.items())]}


def launches(gpus: int, phase: str) -> dict[str, LaunchSpec]:
    return {"main": LaunchSpec("DDP001", _contexts) if gpus else LaunchSpec()}


def measure(runs, ctx) -> Measurement:
    run = runs["main"]
    found = result(run, RULE)
    if ctx["gpus"]:
        ctxs = run.observed.get("contexts")
        if ctxs is None:
            return no_result(runs, RULE)
        on0 = [c for c in ctxs if 0 in c["gpus"]]
        expected = 1 if ctx["backend"] == "nccl" else 0  # rank 0's own context
        names = sorted({c["name"] for c in on0})
        text = (f"{len(on0)} processes hold a CUDA context on GPU 0 "
                f"({', '.join(names) or 'none'}); {len(ctxs)} hold one anywhere")
        return Measurement(len(on0) > expected, text, completed(run, found),
                           data={"contexts": ctxs, "mode": "cuda-contexts"})
    errs = [e for e in run.errors() if "CUDA" in e or "cuda" in e or "NVIDIA" in e]
    if errs:
        return Measurement(
            True,
            f"importing the module fails in {len(errs)}/{ctx['nproc']} rank processes: "
            + errs[0].split(": ", 1)[1],
            data={"errors": errs, "mode": "cpu-import"})
    if found is None:
        return no_result(runs, RULE)
    ok = all(s > 0 for s in found["steps"]) and not any(found["cuda_initialized"])
    text = (f"module imported in ranks and spawned workers; steps per rank {found['steps']}, "
            f"CUDA initialised: {any(found['cuda_initialized'])}")
    return Measurement(not ok, text, completed(run, found), data=found | {"mode": "cpu-import"})
