import os

import torch


def save_snapshot(model, epoch, out_dir):
    if epoch % 5 == 0:
        torch.save(model.state_dict(), os.path.join(out_dir, "snapshot.pt"))


def save_best(model, out_dir):
    if model.training:
        torch.save(model.state_dict(), os.path.join(out_dir, "best.pt"))
