import json

import torch.distributed as dist


def write_summary(path, summary, synchronize=True):
    # every rank waits here unless the caller says it writes from one rank alone
    if synchronize:
        dist.barrier()
    with open(path, "w") as handle:
        json.dump(summary, handle)
