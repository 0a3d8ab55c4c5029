import torch
from torch import nn

from net.layers.act import make_act


class DenseLayer(nn.Module):
    def __init__(self, channels, growth, act="silu"):
        super().__init__()
        self.conv = nn.Conv2d(channels, growth, 3, padding=1)
        self.act = make_act(act)

    def forward(self, x):
        return torch.cat([x, self.act(self.conv(x))], dim=1)


class DenseBlock(nn.Module):
    def __init__(self, channels, growth, n):
        super().__init__()
        layers = []
        for _ in range(n):
            layers.append(DenseLayer(channels, growth))
            channels += growth
        self.body = nn.Sequential(*layers)
        self.fuse = nn.Conv2d(channels, growth, 1)

    def forward(self, x):
        return self.fuse(self.body(x))
