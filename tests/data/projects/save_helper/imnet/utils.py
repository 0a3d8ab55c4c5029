import os
import shutil

import torch
import torch.distributed as dist


def save_checkpoint(state, is_best, out_dir):
    path = os.path.join(out_dir, "checkpoint.pth.tar")
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(out_dir, "model_best.pth.tar"))


def save_on_master(state, path):
    if dist.get_rank() == 0:
        torch.save(state, path)


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0
