from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def make_sampler(dataset, seed=0):
    sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
    return sampler
