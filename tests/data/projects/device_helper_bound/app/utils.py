import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    args.gpu = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl", init_method="env://")
    torch.cuda.set_device(args.gpu)
