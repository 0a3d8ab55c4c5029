import torch


def to_gpu(x):
    return x.cuda(non_blocking=True)


def place(x):
    return to_gpu(x)
