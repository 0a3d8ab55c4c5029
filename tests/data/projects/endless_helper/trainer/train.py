from torch.utils.data import DataLoader, DistributedSampler

from trainer.utils import cycle


class Trainer:
    def __init__(self, dataset, steps):
        self.sampler = DistributedSampler(dataset)
        self.dl = cycle(DataLoader(dataset, batch_size=16, sampler=self.sampler))
        self.steps = steps

    def train(self, model):
        step = 0
        while step < self.steps:
            model(next(self.dl))
            step += 1
