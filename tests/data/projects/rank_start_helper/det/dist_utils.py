import os

import torch


def init_mode(args):
    args.rank = int(os.environ["RANK"])
    torch.distributed.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
