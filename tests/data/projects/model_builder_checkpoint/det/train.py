import argparse
import os

import torch
import torch.distributed as dist

from det.engine import save_checkpoint, train_one_epoch, wrap
from det.models import build_model


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = build_model(args.pretrained).cuda(local_rank)
    model = wrap(model, local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loader = build_loader(args)
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer)
        save_checkpoint(model, optimizer, epoch, os.path.join(args.output_dir, "checkpoint.pth"))


def build_loader(args):
    from torch.utils.data import DataLoader, DistributedSampler

    dataset = torch.load(os.path.join(args.data, "train_boxes.pt"))
    return DataLoader(dataset, batch_size=args.batch_size, sampler=DistributedSampler(dataset))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained")
    parser.add_argument("--data")
    parser.add_argument("--output-dir", default="out")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=8)
    main(parser.parse_args())
