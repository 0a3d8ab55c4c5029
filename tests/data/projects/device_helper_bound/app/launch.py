import torch


def bind(local_rank):
    torch.cuda.set_device(local_rank)
