import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(model):
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{local_rank}"
    torch.cuda.set_device(device)
    model.to(device)
    return DDP(model, device_ids=[local_rank]), device


def setup_single(model):
    device = "cuda"
    return model.to(device), device
