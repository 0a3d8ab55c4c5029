import torch
from torch import nn


class TinyUNet(nn.Module):
    def __init__(self, channels=3, width=32):
        super().__init__()
        self.down = nn.Conv2d(channels, width, 3, padding=1)
        self.time = nn.Embedding(1000, width)
        self.up = nn.Conv2d(width, channels, 3, padding=1)

    def forward(self, x, timesteps):
        h = torch.relu(self.down(x) + self.time(timesteps)[:, :, None, None])
        return self.up(h)
