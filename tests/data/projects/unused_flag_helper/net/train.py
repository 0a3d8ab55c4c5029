import os

import torch.distributed as dist
from torch import nn

from net.build import create_model, network_class


def main(args):
    dist.init_process_group("nccl")
    device = int(os.environ["LOCAL_RANK"])
    Network = network_class(args.network)
    model = Network(n=args.n).to(device)
    model = nn.parallel.DistributedDataParallel(module=model, device_ids=[device], find_unused_parameters=True)
    other = create_model(args).to(device)
    other = nn.parallel.DistributedDataParallel(other, device_ids=[device], find_unused_parameters=True)
    return model, other
