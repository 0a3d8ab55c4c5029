import os

import torch
import torch.distributed as dist


class DistEnv:
    """The job's ranks as SLURM gives them."""

    def __init__(self):
        self.rank = int(os.environ["SLURM_PROCID"])
        self.world_size = int(os.environ["SLURM_NTASKS"])
        self.local_rank = int(os.environ["SLURM_LOCALID"])

    def setup(self):
        dist.init_process_group("nccl", rank=self.rank, world_size=self.world_size)
        torch.cuda.set_device(self.local_rank)
        return torch.device("cuda", self.local_rank)
