from torch.nn.parallel import DistributedDataParallel


def wrap(module, rank):
    return DistributedDataParallel(module, device_ids=[rank])
