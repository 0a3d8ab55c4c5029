"""Train a classifier with DistributedDataParallel, in the style of pytorch/examples' imagenet.

    torchrun --nproc-per-node 2 main.py --dummy --epochs 2
"""
import argparse
import os
import shutil
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from data import build_datasets
from models import build_model

parser = argparse.ArgumentParser(description="PyTorch ImageNet-style training")
parser.add_argument("data", nargs="?", default="data", help="path to dataset")
parser.add_argument("-a", "--arch", default="tinyresnet")
parser.add_argument("--epochs", default=90, type=int)
parser.add_argument("-b", "--batch-size", default=32, type=int)
parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, dest="lr")
parser.add_argument("--momentum", default=0.9, type=float)
parser.add_argument("--wd", "--weight-decay", default=1e-4, type=float, dest="weight_decay")
parser.add_argument("-p", "--print-freq", default=10, type=int)
parser.add_argument("--resume", default="", type=str, help="path to latest checkpoint")
parser.add_argument("--dummy", action="store_true", help="use fake data")
parser.add_argument("--dummy-size", default=256, type=int)
parser.add_argument("--num-classes", default=10, type=int)
parser.add_argument("--seed", default=0, type=int)
parser.add_argument("--local_rank", default=0, type=int)
parser.add_argument("--dist-backend", default="gloo", type=str)


def main():
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    dist.init_process_group(backend=args.dist_backend)
    device = torch.device("cuda", args.local_rank) if torch.cuda.is_available() else torch.device("cpu")

    model = build_model(args.arch, args.num_classes).to(device)
    model = DDP(model, device_ids=[args.local_rank] if device.type == "cuda" else None)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)

    start_epoch, best_acc1 = 0, 0.0
    if args.resume and os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume)
        start_epoch, best_acc1 = checkpoint["epoch"], checkpoint["best_acc1"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])

    train_set, val_set = build_datasets(args)
    train_sampler = DistributedSampler(train_set)
    val_sampler = DistributedSampler(val_set, shuffle=False, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=os.cpu_count(), pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, sampler=val_sampler,
                            num_workers=os.cpu_count(), pin_memory=True)
    for epoch in range(start_epoch, args.epochs):
        train(train_loader, model, criterion, optimizer, epoch, device, args)
        acc1 = validate(val_loader, model, criterion, device, args)
        scheduler.step()
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        save_checkpoint({
            "epoch": epoch + 1,
            "arch": args.arch,
            "state_dict": model.state_dict(),
            "best_acc1": best_acc1,
            "optimizer": optimizer.state_dict(),
        }, is_best)

    # Report the best model on the validation set.
    best = torch.load("model_best.pth.tar")
    model.load_state_dict(best["state_dict"])
    print(f"best acc@1 {validate(val_loader, model, criterion, device, args):.2f}")
    dist.destroy_process_group()


def train(loader, model, criterion, optimizer, epoch, device, args):
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(loader):
        images, target = images.to(device, non_blocking=True), target.to(device, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % args.print_freq == 0 and dist.get_rank() == 0:
            print(f"Epoch: [{epoch}][{i}/{len(loader)}] loss {loss.item():.4f} "
                  f"time {time.time() - end:.3f}")
        end = time.time()


def validate(loader, model, criterion, device, args):
    model.eval()
    correct = torch.zeros(2, device=device)
    with torch.no_grad():
        for images, target in loader:
            output = model(images.to(device))
            correct[0] += (output.argmax(1) == target.to(device)).sum()
            correct[1] += len(target)
    dist.all_reduce(correct)
    return 100.0 * (correct[0] / correct[1].clamp(min=1)).item()


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


if __name__ == "__main__":
    main()
