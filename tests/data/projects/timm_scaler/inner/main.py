import torch
from timm.utils import NativeScaler

from engine import train_one_epoch


def main(args, model, criterion, data_loader, optimizer):
    torch.distributed.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    model_without_ddp = model.module
    loss_scaler = NativeScaler()
    for epoch in range(args.epochs):
        train_one_epoch(model_without_ddp, criterion, data_loader, optimizer, loss_scaler)
