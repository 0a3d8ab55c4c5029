import os

import torch.distributed as dist


def init_distributed_mode(args):
    args.rank = int(os.environ["RANK"])
    dist.init_process_group(backend="nccl", init_method="env://")
