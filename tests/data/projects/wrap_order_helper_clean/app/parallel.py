from torch.nn.parallel import DistributedDataParallel


def wrap(module, rank):
    module = module.to(rank)
    return DistributedDataParallel(module, device_ids=[rank])
