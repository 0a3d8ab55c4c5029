import torch.distributed as dist

from utils.checkpoints import *


class Trainer:
    def __init__(self, model, local_rank):
        dist.init_process_group("nccl")
        self.device = local_rank
        self.model = model

    def resume(self, path):
        return load_checkpoint(path, self.model, map_location=self.device)

    def test(self, path):
        load_checkpoint(path, self.model, map_location=self.device)
