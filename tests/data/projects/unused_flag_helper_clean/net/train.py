import os

import torch.distributed as dist
from torch import nn

from net.build import create_model, network_class
from net.models.sr import Deep, SRNet, WithBackbone


def main(args):
    dist.init_process_group("nccl")
    device = int(os.environ["LOCAL_RANK"])
    Network = network_class(args.network)
    model = Network().to(device)
    model = nn.parallel.DistributedDataParallel(module=model, device_ids=[device], find_unused_parameters=True)
    other = create_model(args).to(device)
    other = nn.parallel.DistributedDataParallel(other, device_ids=[device], find_unused_parameters=True)
    sr = nn.parallel.DistributedDataParallel(SRNet().to(device), device_ids=[device], find_unused_parameters=True)
    deep = nn.parallel.DistributedDataParallel(Deep().to(device), device_ids=[device], find_unused_parameters=True)
    wb = WithBackbone(args.backbone).to(device)
    wb = nn.parallel.DistributedDataParallel(wb, device_ids=[device], find_unused_parameters=True)
    return model, other, sr, deep, wb
