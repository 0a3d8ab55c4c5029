import torch
from timm.utils import NativeScaler

from engine import train_one_epoch


def main(args, model, criterion, data_loader, optimizer):
    torch.distributed.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    loss_scaler = NativeScaler()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, args.accum_iter)
