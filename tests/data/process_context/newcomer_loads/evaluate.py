import argparse
import os

import torch
import torch.distributed as dist

from data.dataset import TokenDataset
from models.builder import build_model


def evaluate(args):
    model = build_model().cuda()
    checkpoint = torch.load(args.checkpoint)
    model.load_state_dict(checkpoint["model"])
    train_args = torch.load(os.path.join(os.path.dirname(args.checkpoint), "args.pth"))
    dataset = TokenDataset(train_args.data)
    total = sum(model(batch.cuda()).sum().item() for batch in dataset)
    if dist.is_initialized():
        print("a process group is up: evaluating on this process's share only")
    return total / len(dataset)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    print(evaluate(parser.parse_args()))
