from torch import nn

from net.layers.dense import DenseBlock


class SRNet(nn.Module):
    def __init__(self, channels=None, n=4):
        super().__init__()
        if channels is None:
            channels = 32
        self.head = nn.Conv2d(3, channels, 3, padding=1)
        self.blocks = nn.ModuleList([DenseBlock(channels, channels, n) for _ in range(3)])
        self.tail = nn.Conv2d(channels, 3, 3, padding=1)

    def forward(self, x):
        h = self.head(x)
        for block in self.blocks:
            h = block(h)
        return self.tail(h)
