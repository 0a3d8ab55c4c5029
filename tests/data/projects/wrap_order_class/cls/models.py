import torch.nn as nn


class ResNetLite(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc(x)


class PlacedNet(nn.Module):
    def __init__(self, rank):
        super().__init__()
        self.fc = nn.Linear(32, 2)
        self.cuda(rank)
