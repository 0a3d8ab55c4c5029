import os

import torch
from torch import nn


class SimCLR(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 4)

    def forward(self, x):
        return self.encoder(x)


def save_model(args, model, epoch):
    out = os.path.join(args.model_path, "checkpoint_{}.tar".format(epoch))
    # DistributedDataParallel is no DataParallel: its state dict is saved with the prefix
    if isinstance(model, torch.nn.DataParallel):
        torch.save(model.module.state_dict(), out)
    else:
        torch.save(model.state_dict(), out)


def save_checkpoint(model, optimizer, path):
    state = {"optimizer": optimizer.state_dict()}
    state["model"] = model.state_dict()
    torch.save(state, path)
