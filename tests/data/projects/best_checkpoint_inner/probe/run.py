import os

import torch
import torch.distributed as dist
from torch import nn

from probe.checkpoints import store


def main(args):
    dist.init_process_group("nccl")
    net = nn.Linear(8, 2).cuda()
    net_plain = net
    if args.distributed:
        net = nn.parallel.DistributedDataParallel(net, device_ids=[args.gpu])
        net_plain = net.module
    for epoch in range(args.epochs):
        if dist.get_rank() == 0:
            store(args, epoch, net_plain)
    best = torch.load(os.path.join(args.out_dir, "weights-best.pth"), map_location="cpu")
    net.load_state_dict(best["net"], strict=False)
    return net
