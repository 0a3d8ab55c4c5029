from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.skip = nn.Linear(dim, dim)

    def forward(self, x, skip=False):
        return self.skip(x) if skip else self.fc(x)
