"""DDP005: the file_system sharing strategy. Measured from outside while training is paused
(/dev/shm files, torch_shm_manager processes), then after SIGKILLing the whole job (files
left). After the fix, the same program is also left to finish."""

from ... import launcher
from ...measuring import LaunchSpec, Measurement, completed, no_result, result
from ...script_symptoms import unobserved

RULE = "DDP005"
BATCHABLE = False  # kills the job; changes a process-wide setting


def _shm(run_id: str) -> dict:
    pids = launcher.job_pids(run_id)
    files = launcher.shm_files(pids)
    names = [launcher.proc_name(p) for p in pids]
    return {
        "files": len(files),
        "bytes": sum(files.values()),
        "managers": sum(n.startswith("torch_shm_manag") for n in names),
        "workers": sum(n == "pt_data_worker" for n in names),
        "processes": len(pids),
    }


def launches(gpus: int, phase: str) -> dict[str, LaunchSpec]:
    specs = {"kill": LaunchSpec("DDP005", _shm, kill=True)}
    if phase == "after":
        specs["live"] = LaunchSpec()
    return specs


def measure(runs, ctx) -> Measurement:
    kill = runs["kill"]
    obs = kill.observed
    if "files" not in obs:
        return no_result(runs, RULE)
    workers = obs.get("workers", 0)
    leaked = kill.shm_leftover
    leaked_mib = sum(leaked.values()) / 2**20
    text = (f"while training: {obs['files']} /dev/shm/torch_* files ({obs['bytes'] / 2**20:.0f} MiB), "
            f"{obs['managers']} torch_shm_manager; after killing the job: {len(leaked)} files "
            f"({leaked_mib:.1f} MiB) left, {workers} workers")
    symptom = obs["files"] > 0 or obs["managers"] > 0 or len(leaked) > workers
    data = {"live": obs, "leaked_files": len(leaked), "leaked_bytes": sum(leaked.values()),
            "leaked_paths": sorted(leaked)}
    done = False
    if "live" in runs:
        live = runs["live"]
        found = result(live, RULE)
        done = completed(live, found) and live.returncode == 0
        data["result"] = found
        if found:
            text += f"; uninterrupted run: steps per rank {found['steps']}, strategy {found['strategy']}"
        else:
            text += "; uninterrupted run did not finish"
    return Measurement(symptom, text, done, data=data)


# What `ddplint verify --script` looks for on the user's script.
script_symptom = unobserved("the /dev/shm leak shows when the job is killed; the bundled DDP005 "
                            "scenario measures it, script runs do not")
