import torch

from engine import train_one_epoch
from utils import NativeScalerWithGradNormCount


def main(args, model, data_loader, optimizer):
    torch.distributed.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    train_one_epoch(model, data_loader, optimizer, NativeScalerWithGradNormCount(), args.update_freq)
