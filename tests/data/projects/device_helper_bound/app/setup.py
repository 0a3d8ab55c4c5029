import torch.distributed as dist

from app.launch import bind


def setup(args):
    dist.init_process_group("nccl", init_method="env://")
    bind(args.local_rank)
