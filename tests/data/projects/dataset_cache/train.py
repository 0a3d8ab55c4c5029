"""Train a text classifier and a graph model on every GPU: torchrun --nproc_per_node=4 train.py"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from data import build_graphs
from data.text import TokenizedCorpus
from models.net import Classifier
from utils.checkpoint import save_best, save_snapshot
from utils.dist import is_main_process


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    corpus = TokenizedCorpus(args.data, args.cache)
    graphs = build_graphs(args.graphs, args.data)
    sampler = DistributedSampler(corpus)
    loader = DataLoader(corpus, batch_size=32, sampler=sampler)
    model = DDP(Classifier(len(graphs)).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    best = 0.0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for tokens, label in loader:
            optimizer.zero_grad()
            model(tokens.cuda()).sum().backward()
            optimizer.step()
        save_snapshot(model.module, epoch, args.out)
        if is_main_process():
            save_best(model.module, args.out)
            torch.save(optimizer.state_dict(), os.path.join(args.out, "optimizer.pt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/")
    parser.add_argument("--cache", default="data/tokens.pt")
    parser.add_argument("--graphs", default="Citations")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--out", default="runs/")
    main(parser.parse_args())
