import os

import torch
import torch.distributed as dist


def main(net, out):
    dist.init_process_group("gloo")
    fit(net)
    if dist.get_rank() == 0:
        torch.save(net.module.state_dict(), os.path.join(out, "last.pth"))  # CUDA tensors
    net.cpu()
    state = net.module.state_dict()
    if dist.get_rank() == 0:
        torch.save(state, os.path.join(out, "final.pth"))


def fit(net):
    pass
