"""Datasets: a folder of .pt tensors (train.pt, val.pt), or --dummy data."""
import os

import torch
from torch.utils.data import Dataset, TensorDataset


class TensorFolder(Dataset):
    """<root>/<split>.pt holds {"images": N x 3 x 16 x 16, "labels": N}."""

    def __init__(self, root, split):
        blob = torch.load(os.path.join(root, f"{split}.pt"), map_location="cpu")
        self.images, self.labels = blob["images"], blob["labels"]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


def dummy(size, num_classes, seed):
    g = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randn(size, 3, 16, 16, generator=g),
                         torch.randint(0, num_classes, (size,), generator=g))


def build_datasets(args):
    if args.dummy:
        return dummy(args.dummy_size, args.num_classes, 1), dummy(args.dummy_size // 4, args.num_classes, 2)
    return TensorFolder(args.data, "train"), TensorFolder(args.data, "val")
