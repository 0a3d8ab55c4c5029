import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from exp.model import Net


def main(rank):
    dist.init_process_group("nccl")
    ddp_model = DistributedDataParallel(Net().cuda(rank), device_ids=[rank])
    if rank == 0:
        torch.save(ddp_model.state_dict(), "checkpoints/best.pt")
