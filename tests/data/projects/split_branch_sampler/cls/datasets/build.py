from torch.utils.data import DataLoader, SequentialSampler
from torch.utils.data.distributed import DistributedSampler


def build_loader(dataset, split, batch_size):
    if split == "train":
        sampler = DistributedSampler(dataset, shuffle=True)
    else:
        sampler = SequentialSampler(dataset)  # every rank evaluates the whole set
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def build_test_loader(dataset, split, batch_size):
    if split != "train":
        sampler = DistributedSampler(dataset, shuffle=False)
    else:
        sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)
