import os

import torch
import torch.distributed as dist
from torch.utils.data import Dataset


class TokenDataset(Dataset):
    def __init__(self, root):
        encoded = torch.load(os.path.join(root, "train_ids.pt"))
        self.input_ids = encoded["input_ids"]
        self.rank = dist.get_rank() if dist.is_initialized() else 0

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, index):
        return self.input_ids[index]
