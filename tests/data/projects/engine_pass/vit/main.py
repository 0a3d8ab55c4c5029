import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from vit import engine
from vit.engine import evaluate, train_one_epoch


def main(args, model, dataset, val_set, criterion, optimizer, logger):
    dist.init_process_group("nccl")
    device = torch.device("cuda", args.gpu)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)
    val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, loader, optimizer, device, epoch, logger=logger)
        evaluate(model, val_loader)


def finetune(args, model, dataset, optimizer):
    # look-alikes: the helper sets the epoch, or hands the loader to something unknown
    loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset))
    for epoch in range(args.epochs):
        engine.train_and_set_epoch(model, loader, optimizer, epoch)
    other = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset))
    for epoch in range(args.epochs):
        engine.train_with_hook(model, other, args.hook)


def resume(args, model, dataset, optimizer, criterion, logger):
    # set here, before the helper's pass
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler)
    for epoch in range(args.start, args.epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, criterion, loader, optimizer, "cuda", epoch, logger)
