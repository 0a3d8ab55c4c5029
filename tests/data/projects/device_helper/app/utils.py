import os

import torch.distributed as dist


def init_distributed_mode(args):
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("nccl", init_method="env://")
    dist.barrier()
