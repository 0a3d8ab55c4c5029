import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from app.models import build_on, build_ranked


def main(args, device):
    dist.init_process_group("nccl")
    model = DDP(build_on(args, device))
    head = DDP(build_ranked(args))
    return model, head
