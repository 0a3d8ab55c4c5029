import os

import torch
import torch.distributed as dist


def save_checkpoint(state, path, keep):
    torch.save(state, path)
    if dist.get_rank() == 0 and keep is not None:
        os.remove(keep)


def save_last(state, path):
    torch.save(state, path)
    dist.barrier()
