from torch.utils.data import DistributedSampler


def make_sampler(dataset, distributed):
    if distributed:
        return DistributedSampler(dataset)
    return None
