import torch
from torch import nn

from net.blocks import Block


class WithAux(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.encoder = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, classes)
        self.aux = nn.Linear(dim, classes)

    def forward(self, x):
        h = torch.relu(self.encoder(x))
        return self.head(h), self.aux(h)


class Stacked(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.block = Block(dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, x):
        return self.head(self.block(x))
