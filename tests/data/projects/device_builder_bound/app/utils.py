import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    args.gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.gpu)
    dist.init_process_group(backend="nccl", init_method="env://")
