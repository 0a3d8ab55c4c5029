import torch.distributed as dist
from torch.utils.data.sampler import Sampler


def make_exact_sampler(dataset, shuffle, distributed):
    if distributed:
        return DistributedSampler(dataset, shuffle=shuffle)
    return None


# Every rank takes every world_size-th sample: nothing is repeated.
class DistributedSampler(Sampler):
    def __init__(self, dataset, shuffle=False):
        self.dataset = dataset
        self.shuffle = shuffle

    def __iter__(self):
        return iter(range(dist.get_rank(), len(self.dataset), dist.get_world_size()))

    def __len__(self):
        return len(range(dist.get_rank(), len(self.dataset), dist.get_world_size()))
