import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.checkpoint import write_summary


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    model = DDP(torch.nn.Linear(8, 2).cuda(rank), device_ids=[rank])
    for epoch in range(3):
        if dist.get_rank() == 0:
            write_summary("last.json", {"epoch": epoch}, synchronize=False)
            write_summary("trainer.json", {"epoch": epoch}, False)
        if dist.get_rank() == 0:
            write_summary("best.json", {"epoch": epoch})


if __name__ == "__main__":
    main()
