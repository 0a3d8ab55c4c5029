import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from data.loaders import build_loaders, build_streaming_loaders


def train(args):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = DistributedDataParallel(torch.nn.Linear(2, 2).cuda())
    make_loader = build_loaders if args.data_path else build_streaming_loaders
    loader = make_loader(args)
    for batch in loader:
        model(batch).sum().backward()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_path")
    parser.add_argument("--cache", default="cache.pt")
    train(parser.parse_args())
