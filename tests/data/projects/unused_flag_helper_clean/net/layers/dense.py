from torch import nn

from net.layers.act import make_act


class DenseLayer(nn.Module):
    def __init__(self, channels, growth, act="silu"):
        super().__init__()
        self.conv = nn.Conv2d(channels, growth, 3, padding=1)
        self.act = make_act(act)

    def forward(self, x):
        return self.act(self.conv(x))


class Skippy(nn.Module):
    def __init__(self, channels, n):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(channels, channels, 3, padding=1) for _ in range(n)])

    def forward(self, x, depth=None):
        for i, layer in enumerate(self.layers):
            if depth is not None and i >= depth:
                break  # the layers past `depth` get no gradient
            x = layer(x)
        return x
