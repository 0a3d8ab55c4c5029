import torch.distributed as dist


def reduce_value(value):
    dist.all_reduce(value)
    return value
