import os

import torch
import torch.distributed as dist

from megatron_lite import mpu


def initialize_megatron(args):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    mpu.initialize_model_parallel(args.tp, args.pp)
