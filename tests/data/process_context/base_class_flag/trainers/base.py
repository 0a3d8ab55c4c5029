import torch.distributed as dist


class Trainer:
    def __init__(self, distributed: bool):
        self.rank = dist.get_rank() if distributed else 0
        self._primary = self.rank == 0
        self.steps = 0


class CountingTrainer(Trainer):
    def __init__(self, distributed: bool):
        super().__init__(distributed)
        self.steps += 1
