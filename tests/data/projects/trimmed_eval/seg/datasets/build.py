from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def build_loader(dataset, is_train):
    sampler = DistributedSampler(dataset, shuffle=is_train)
    return DataLoader(dataset, batch_size=8, sampler=sampler, drop_last=is_train)


def build_aux_loader(dataset):
    return DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset, shuffle=False))
