import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from app.models import build_model


def main(args, loader, optimizer):
    dist.init_process_group("nccl")
    model = build_model(args)
    model = DDP(model)
    for x, y in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
