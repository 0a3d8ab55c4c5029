import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data.loaders import setup_loaders
from models.net import build_model
from utils.misc import shuffle_dataset
from utils.trainer import Trainer


@torch.no_grad()
def evaluate(model, loader):
    return sum(model(images, labels).item() for images, labels in loader)


def train_with_trainer(args, model, optimizer):
    trainer = Trainer(model, optimizer, args.train_loader, args.val_loader)
    trainer.fit(args.epochs)


def train_by_steps(args, model, optimizer):
    for step in range(args.steps):
        images, labels = next(iter(args.train_loader))
        loss = model(images, labels)
        loss.backward()
        optimizer.step()


def train_shuffled(args, model, optimizer):
    for epoch in range(args.epochs):
        shuffle_dataset(args.train_loader, epoch)
        for images, labels in args.train_loader:
            model(images, labels).backward()
            optimizer.step()
        print(epoch, evaluate(model, args.val_loader))


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(build_model(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_set = torch.utils.data.TensorDataset(torch.randn(256, 16), torch.randn(256, 1))
    val_set = torch.utils.data.TensorDataset(torch.randn(64, 16), torch.randn(64, 1))
    setup_loaders(args, train_set, val_set)
    if args.mode == "trainer":
        train_with_trainer(args, model, optimizer)
    elif args.mode == "steps":
        train_by_steps(args, model, optimizer)
    else:
        train_shuffled(args, model, optimizer)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="shuffled")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--distributed", action="store_true")
    main(parser.parse_args())
