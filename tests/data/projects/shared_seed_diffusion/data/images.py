import os
import random

import torch
from torch.utils.data import Dataset


class ImageFolder(Dataset):
    """Tensors saved one per file; the file order is shuffled once, the same on every rank,
    before the DistributedSampler splits it."""

    def __init__(self, folder, seed):
        self.files = sorted(os.path.join(folder, name) for name in os.listdir(folder))
        random.Random(seed).shuffle(self.files)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return torch.load(self.files[index], map_location="cpu")
