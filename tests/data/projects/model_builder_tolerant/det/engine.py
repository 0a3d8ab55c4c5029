from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank, cfg):
    return DistributedDataParallel(model, device_ids=[local_rank], find_unused_parameters=cfg.unused)
