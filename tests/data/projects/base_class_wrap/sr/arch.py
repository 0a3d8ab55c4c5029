import torch
from torch import nn


class SwinIR(nn.Module):
    def __init__(self, window=8):
        super().__init__()
        self.body = nn.Conv2d(3, 3, 3, padding=1)
        self.register_buffer("relative_position_index", torch.arange(window * window))

    def forward(self, x):
        return self.body(x)
