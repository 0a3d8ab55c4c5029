import os

import torch
from torch.utils.data import DataLoader, random_split


def loaders(dataset=None):
    train_set, val_set = random_split(dataset, [0.9, 0.1])
    train = DataLoader(train_set, batch_size=32, num_workers=os.cpu_count())
    return train, DataLoader(val_set, batch_size=32)
