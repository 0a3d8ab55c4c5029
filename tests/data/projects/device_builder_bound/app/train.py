import os

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from app.gpu import setup_gpu
from app.models import build_model


def main(args):
    dist.init_process_group("nccl")
    setup_gpu(int(os.environ["LOCAL_RANK"]))
    return DDP(build_model(args))
