from torch import nn

from net.layers.act import make_backbone
from net.layers.dense import DenseLayer, Skippy


class SRNet(nn.Module):
    def __init__(self, channels=32):
        super().__init__()
        self.head = DenseLayer(3, channels)
        self.tail = nn.Conv2d(channels, 3, 3, padding=1)

    def forward(self, x):
        return self.tail(self.head(x))


class Deep(nn.Module):
    def __init__(self, channels=32, n=4):
        super().__init__()
        self.head = nn.Conv2d(3, channels, 3, padding=1)
        self.body = Skippy(channels, n)

    def forward(self, x):
        return self.body(self.head(x))


class WithBackbone(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.backbone = make_backbone(name)
        self.head = nn.Conv2d(32, 3, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.extra = nn.Linear(4, 4)

    def forward(self, x, extra=False):
        if extra:
            x = self.extra(x)
        return self.fc(x)


class Full(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)
