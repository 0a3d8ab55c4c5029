import torch
from torch.utils.data import Dataset

from nmt.text import CharMap


class PairDataset(Dataset):
    def __init__(self, pairs, src_index, hist):
        self.pairs = pairs
        self.src_index = src_index
        self.weights = [hist[len(p[0].split())] for p in pairs]  # the histogram is read here only
        self.charmap = CharMap("abc")

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        return torch.tensor([self.src_index[t] for t in self.pairs[i][0].split()])
