import torch


def setup_gpu(local_rank):
    torch.cuda.set_device(local_rank)
