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
    workers = max(2, os.cpu_count() - 1)  # all cores but the main process's
    return DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=workers, pin_memory=True)


def build_eval_loader(cfg, dataset, sampler):
    # at most the --workers setting: the cores matter only when it is larger
    return DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=min(cfg.workers, os.cpu_count() - 1))
