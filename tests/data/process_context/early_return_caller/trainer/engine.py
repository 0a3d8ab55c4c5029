import torch.distributed as dist

from trainer.checkpoint import save_checkpoint, save_last


class Trainer:
    def __init__(self, model, paths):
        self.model = model
        self.paths = paths
        self.distributed_rank = dist.get_rank()

    def save(self, epoch):
        state = {"model": self.model.state_dict(), "epoch": epoch}
        # DDP checkpoints are only saved on rank 0 (all workers are identical)
        if self.distributed_rank != 0:
            return
        for path in self.paths:
            save_checkpoint(state, path, None)

    def finish(self):
        save_last({"model": self.model.state_dict()}, "last.pt")
