import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from seg.config import parse
from seg.model import SegNet


def build(local_rank):
    return DDP(SegNet().cuda(local_rank), device_ids=[local_rank])


def save(model, args):
    if dist.get_rank() == 0:
        torch.save({"epoch": 10, "model": model.module.state_dict()}, args.checkpoint)


def main():
    args = parse()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = build(local_rank)
    save(model, args)


if __name__ == "__main__":
    main()
