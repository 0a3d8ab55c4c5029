import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from app.data import loaders


def main(model):
    dist.init_process_group("nccl")
    model = DDP(model)
    train, val = loaders()
    return model, train, val
