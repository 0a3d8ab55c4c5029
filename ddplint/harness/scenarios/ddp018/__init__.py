"""DDP018: num_workers=os.cpu_count() in every rank. Measured: DataLoader worker processes per
rank against the node's cores."""

from ...measuring import Measurement, completed, no_result, payload

RULE = "DDP018"
BATCHABLE = True


def measure(runs, ctx) -> Measurement:
    run, found = payload(runs, RULE)
    if found is None:
        return no_result(runs, RULE)
    workers, cpus, local = found["workers"], found["cpus"], found["local_world"]
    # The ranks of one node share its cores; the first local_world ranks are this node's.
    on_node = sum(workers[:local])
    text = (f"DataLoader worker processes per rank {workers}; {on_node} on a node "
            f"of {cpus} CPU cores")
    return Measurement(on_node > max(cpus, local), text, completed(run, found), data=found)
