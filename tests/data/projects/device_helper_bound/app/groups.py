import torch.distributed as dist


def init_group():
    dist.init_process_group(backend="nccl")
