import os

import torch
from torch.utils.data import Dataset


class TokenizedCorpus(Dataset):
    """Tokenizes the corpus once and keeps the tokens in a cache file next to it."""

    def __init__(self, root, cache):
        if os.path.exists(cache):
            self.samples = torch.load(cache)
        else:
            self.samples = [self.tokenize(line) for line in open(os.path.join(root, "corpus.txt"))]
            torch.save(self.samples, cache)

    def tokenize(self, line):
        return torch.tensor([ord(c) % 256 for c in line.strip()])

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        return self.samples[index], 0
