"""DDP018: num_workers=os.cpu_count() in every rank. Measured: DataLoader worker processes per
rank against the node's cores."""

from ...measuring import Measurement, completed
from ...script_symptoms import failed_run, loaders_of

RULE = "DDP018"


def measure_result(run, found, ctx) -> Measurement:
    workers, cpus, local = found["workers"], found["cpus"], found["local_world"]
    # The ranks of one node share its cores; the first local_world ranks are this node's.
    on_node = sum(workers[:local])
    text = (f"DataLoader worker processes per rank {workers}; {on_node} on a node "
            f"of {cpus} CPU cores")
    return Measurement(on_node > max(cpus, local), text, completed(run, found), data=found)


def script_symptom(run, ctx: dict) -> Measurement:
    """The workers of the loaders the finding is about (made at its line, else in its file),
    summed over the node's ranks, against the node's cores."""
    chosen, which = loaders_of(run, ctx["finding"], lambda ld: True)
    if not chosen:
        return failed_run(run, "no DataLoader was iterated on every rank")
    per_rank = [max(per_rank_loaders[rank]["num_workers"] for _, per_rank_loaders in chosen)
                for rank in range(len(run.ranks))]
    cpus = run.ranks[0]["cpus"]
    on_node = sum(per_rank[: run.ranks[0]["local_world_size"]])
    numbers = ", ".join(str(n) for n, _ in chosen)
    return Measurement(on_node > cpus, f"DataLoader {numbers} ({which}): workers per rank {per_rank}; "
                       f"{on_node} on a node of {cpus} CPU cores")
