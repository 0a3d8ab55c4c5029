import os

import torch
from torch.utils.data import Dataset


class Clips(Dataset):
    """Drops the clips too short to sample, once, and keeps the list in a cache file."""

    def __init__(self, root, mode, length=16):
        self.lengths = torch.load(os.path.join(root, f"lengths_{mode}.pt"), map_location="cpu")
        dropped = os.path.join(root, f"drop_idx_{mode}.pth")
        if os.path.isfile(dropped):
            self.dropped = torch.load(dropped)
        else:
            self.dropped = [i for i, n in enumerate(self.lengths.tolist()) if n < length]
            torch.save(self.dropped, dropped)
        self.kept = [i for i in range(len(self.lengths)) if i not in set(self.dropped)]

    def __len__(self):
        return len(self.kept)

    def __getitem__(self, index):
        return self.lengths[self.kept[index]]


def get_data(root, mode):
    return Clips(root, mode)
