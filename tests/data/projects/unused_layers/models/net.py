from torch import nn

from .blocks import Block


class Net(nn.Module):
    def __init__(self, dim, depth, classes):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def build_model(cfg):
    model = Net(cfg.dim, cfg.depth, cfg.classes)
    return model
