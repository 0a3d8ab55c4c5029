"""Train on every GPU: torchrun --nproc_per_node=4 train.py --dist"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torchvision import datasets

import datasets  # the project's module: this later import rebinds the name
from loaders import make_loader
from textdata import QuestionCache


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    questions = QuestionCache(args.data, overwrite_cache=args.overwrite_cache)
    clips = datasets.get_data(args.data, "train")
    loader, sampler = make_loader(args)
    model = DDP(torch.nn.Linear(1, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in loader:
            optimizer.zero_grad()
            model(batch.float().cuda().view(-1, 1)).sum().backward()
            optimizer.step()
    print(len(questions), len(clips))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--dist", "--overwrite_cache"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("--data", default="data/")
    parser.add_argument("--epochs", type=int, default=10)
    main(parser.parse_args())
