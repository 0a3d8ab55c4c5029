import torch.distributed as dist


def reduce_tensor(tensor, world_size):
    reduced = tensor.clone()
    dist.all_reduce(reduced)
    return reduced / world_size
