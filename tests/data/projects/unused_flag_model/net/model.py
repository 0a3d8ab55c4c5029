import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.encoder = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))
