# Another program, in its own folder: its final.pth holds CUDA tensors, and its evaluation is flagged.
import os

import torch
import torch.distributed as dist


def main(net, out):
    dist.init_process_group("gloo")
    if dist.get_rank() == 0:
        torch.save(net.module.state_dict(), os.path.join(out, "final.pth"))


def evaluate(net, out):
    net.load_state_dict(torch.load(os.path.join(out, "final.pth")))
