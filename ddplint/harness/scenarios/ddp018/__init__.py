"""DDP018: num_workers=os.cpu_count() in every rank. Measured: DataLoader worker processes per
rank against the node's cores."""

from ...measuring import Measurement, completed
from ...script_symptoms import failed_run

RULE = "DDP018"


def measure_result(run, found, ctx) -> Measurement:
    workers, cpus, local = found["workers"], found["cpus"], found["local_world"]
    # The ranks of one node share its cores; the first local_world ranks are this node's.
    on_node = sum(workers[:local])
    text = (f"DataLoader worker processes per rank {workers}; {on_node} on a node "
            f"of {cpus} CPU cores")
    return Measurement(on_node > max(cpus, local), text, completed(run, found), data=found)


def script_symptom(run, ctx: dict) -> Measurement:
    per_rank = [max((ld["num_workers"] for ld in r["loaders"]), default=0) for r in run.ranks]
    if not any(per_rank) and not all(r["loaders"] for r in run.ranks):
        return failed_run(run, "no DataLoader was iterated")
    cpus = run.ranks[0]["cpus"]
    on_node = sum(per_rank[: run.ranks[0]["local_world_size"]])
    return Measurement(on_node > cpus, f"DataLoader workers per rank {per_rank}; {on_node} on a "
                       f"node of {cpus} CPU cores")
