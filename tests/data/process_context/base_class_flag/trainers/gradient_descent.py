import torch
import torch.distributed as dist

from trainers.base import CountingTrainer, Trainer


class GradientDescentTrainer(Trainer):
    def train(self, model, best):
        dist.barrier()
        if self._primary:
            torch.save(model.state_dict(), "last.pt")
        if best:
            should_save = self._primary
        else:
            should_save = False
        if should_save:
            torch.save(model.state_dict(), "best.pt")


class CountedTrainer(CountingTrainer):
    def train(self, model):
        dist.barrier()
        if self._primary:
            torch.save(model.state_dict(), "last.pt")
        if self.steps:
            torch.save(model.state_dict(), "steps.pt")
