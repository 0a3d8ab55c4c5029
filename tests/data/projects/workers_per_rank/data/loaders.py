import os

import torch
from torch.utils.data import DataLoader, Dataset


class ToyDataset(Dataset):
    def __init__(self, size):
        self.x = torch.randn(size, 16)
        self.y = torch.randint(0, 2, (size,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


def build_loader(cfg, dataset, sampler):
    workers = min(cfg.workers, os.cpu_count() - 1)
    return DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=workers, pin_memory=True)
