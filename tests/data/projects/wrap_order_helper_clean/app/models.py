import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x)


def init_weights(model):
    nn.init.zeros_(model.fc.bias)


def build_model(cfg):
    model = Net(cfg.dim)
    return model.cuda(cfg.rank)


def build_initialised(cfg):
    model = Net(cfg.dim)
    init_weights(model)
    return model


def build_head(cfg):
    return nn.Linear(cfg.dim, cfg.classes, device=cfg.device)


def load_backbone(cfg):
    return torch.hub.load(cfg.repo, cfg.name)
