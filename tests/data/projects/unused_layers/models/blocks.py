from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, 1)

    def forward(self, x):
        return x + self.fc(self.norm(x))


class Adapter(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.down = nn.Linear(dim, dim // 4)
        self.up = nn.Linear(dim // 4, dim)

    def forward(self, x):
        return self.down(x)
