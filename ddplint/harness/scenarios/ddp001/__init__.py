"""DDP001: a CUDA tensor as a default argument, built at import in every process.

With GPUs: the processes holding a CUDA context on GPU 0, as nvidia-smi lists them while the
job is paused. On a CPU build: whether the module can be imported in the ranks at all.
"""

from ... import gpu_failure, launcher
from ...measuring import LaunchSpec, Measurement, completed, no_result, result
from ...script_symptoms import failed_run, fatal

RULE = "DDP001"
BATCHABLE = False  # spawned workers re-import __main__


def _contexts(run_id: str) -> dict:
    from ...probes import cuda_context_pids

    held = cuda_context_pids(launcher.job_pids(run_id))
    if held is None:
        return {"uncounted": "nvidia-smi could not list the processes holding CUDA contexts"}
    return {"contexts": [{"pid": p, "name": launcher.proc_name(p), "gpus": g}
                         for p, g in sorted(held.items())]}


def launches(gpus: int, phase: str) -> dict[str, LaunchSpec]:
    return {"main": LaunchSpec("DDP001", _contexts) if gpus else LaunchSpec()}


def measure(runs, ctx) -> Measurement:
    run = runs["main"]
    found = result(run, RULE)
    if ctx["gpus"]:
        ctxs = run.observed.get("contexts")
        if "uncounted" in run.observed:
            return Measurement(None, run.observed["uncounted"])
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


def script_symptom(run, ctx: dict) -> Measurement:
    """The CUDA call in a default argument fails while its ``def`` runs, at import: seen as a
    no-CUDA exception raised from the finding's lines."""
    if ctx["gpus"]:
        return Measurement(None, "on GPUs the symptom is extra CUDA contexts on GPU 0, which "
                           "script runs do not count (the bundled DDP001 scenario does)")
    f = ctx["finding"]
    failed = [f"rank {r['rank']}: {r['exceptions'][-1]}" for r in run.ranks
              if r.get("exceptions") and gpu_failure.exception_reason(r["exceptions"][-1])
              and any(p == f.path and f.line <= line <= max(f.line, f.end_line)
                      for p, line, _ in r.get("raised_at", ()))]
    if failed:
        return Measurement(True, f"importing {f.path} fails at line {f.line} in {len(failed)}/"
                           f"{len(run.ranks)} rank(s): {failed[0]}", data=fatal(run, failed[0]))
    if run.ranks and all(f.path in r.get("modules", ()) for r in run.ranks):
        return Measurement(False, f"{f.path} imported on every rank without a CUDA call at "
                           f"line {f.line}" + ("" if run.completed else f"; the script then {run.state()}"))
    return failed_run(run, f"{f.path} was not imported on every rank")
