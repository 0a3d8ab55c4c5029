from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def train_loader(dataset, batch_size):
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def eval_loader(dataset, batch_size):
    sampler = DistributedSampler(dataset, shuffle=False)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)
