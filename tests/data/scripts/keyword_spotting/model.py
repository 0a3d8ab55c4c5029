"""A small convolutional keyword-spotting model."""
from torch import nn


class KWSNet(nn.Module):
    def __init__(self, n_mels, num_classes, channels=16):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(n_mels, channels, 3, padding=1), nn.BatchNorm1d(channels), nn.ReLU(),
            nn.Conv1d(channels, channels, 3, padding=1), nn.BatchNorm1d(channels), nn.ReLU(),
        )
        self.head = nn.Linear(channels, num_classes)

    def forward(self, feats):  # feats: batch x frames x mels
        return self.head(self.conv(feats.transpose(1, 2)).mean(dim=2))
