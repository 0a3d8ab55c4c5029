from torch import nn


class ControlNet(nn.Module):
    def __init__(self, unet):
        super().__init__()
        self.unet = unet
        self.zero_conv = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.zero_conv(self.unet(x))


def build_unet(args):
    return nn.Conv2d(4, 4, 3, padding=1)
