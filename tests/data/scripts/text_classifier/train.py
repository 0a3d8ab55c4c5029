"""Fine-tune a text classifier on a TSV file with DistributedDataParallel.

    torchrun --nproc-per-node 2 train.py --train-file data/train.tsv --output-dir out
"""
import argparse
import os
import random

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, random_split
from torch.utils.data.distributed import DistributedSampler

from data import TextClassificationDataset, read_tsv
from model import FastText
from vocab import Vocab


def parse_args():
    parser = argparse.ArgumentParser(description="Train a text classifier")
    parser.add_argument("--train-file", required=True)
    parser.add_argument("--output-dir", default="output")
    parser.add_argument("--val-fraction", type=float, default=0.2)
    parser.add_argument("--num-train-epochs", type=int, default=3)
    parser.add_argument("--per-device-batch-size", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=0.5)
    parser.add_argument("--embed-dim", type=int, default=32)
    parser.add_argument("--num-workers", type=int, default=1)
    parser.add_argument("--start-method", default="spawn", help="how DataLoader workers start")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    torch.manual_seed(seed)


def main():
    args = parse_args()
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    set_seed(args.seed + rank)  # different dropout and augmentation on each rank

    rows = read_tsv(args.train_file)
    vocab = Vocab(text for _, text in rows)
    dataset = TextClassificationDataset(rows, vocab)
    n_val = int(len(dataset) * args.val_fraction)
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val])

    train_loader = DataLoader(train_set, batch_size=args.per_device_batch_size,
                              sampler=DistributedSampler(train_set, seed=args.seed),
                              num_workers=args.num_workers,
                              multiprocessing_context=args.start_method)
    val_loader = DataLoader(val_set, batch_size=args.per_device_batch_size,
                            sampler=DistributedSampler(val_set, shuffle=False))

    num_classes = max(label for label, _ in rows) + 1
    model = DDP(FastText(len(vocab), args.embed_dim, num_classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(args.num_train_epochs):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for ids, labels in train_loader:
            loss = loss_fn(model(ids), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        accuracy = evaluate(model, val_loader)
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f} val accuracy {accuracy:.3f}", flush=True)

    if rank == 0:
        os.makedirs(args.output_dir, exist_ok=True)
        torch.save({"model": model.module.state_dict(), "itos": vocab.itos},
                   os.path.join(args.output_dir, "model.pt"))
    dist.destroy_process_group()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    stats = torch.zeros(2)
    for ids, labels in loader:
        stats += torch.tensor([(model(ids).argmax(1) == labels).sum().item(), len(labels)])
    dist.all_reduce(stats)
    return (stats[0] / stats[1].clamp(min=1)).item()


if __name__ == "__main__":
    main()
