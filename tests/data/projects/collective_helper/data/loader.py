import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_loader(batch_size):
    dataset = TensorDataset(torch.randn(64, 3, 8, 8), torch.randint(0, 10, (64,)))
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler), sampler
