import timm.utils
import torch

from engine import train_one_epoch


def main(args, model, criterion, data_loader, optimizer):
    torch.distributed.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, timm.utils.NativeScaler())
