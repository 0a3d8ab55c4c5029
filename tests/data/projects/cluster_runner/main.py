import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--local_rank", type=int, default=0)
    return parser


def main(args):
    # the device comes from the environment torchrun or the cluster runner sets
    args.gpu = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda(args.gpu), device_ids=[args.gpu])
    for _ in range(args.epochs):
        model(torch.randn(2, 4, device=args.gpu)).sum().backward()


if __name__ == "__main__":
    main(get_parser().parse_args())
