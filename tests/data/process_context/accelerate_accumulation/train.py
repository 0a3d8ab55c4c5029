from multiprocessing import cpu_count

from accelerate import Accelerator
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model, dataset, opt, accumulate_every):
        self.accelerator = Accelerator(split_batches=True)
        self.model = model
        self.opt = opt
        self.accumulate_every = accumulate_every
        dl = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=cpu_count())
        self.dl = self.accelerator.prepare(dl)
        self.model, self.opt = self.accelerator.prepare(self.model, self.opt)

    def train(self, steps):
        for step in range(steps):
            for _ in range(self.accumulate_every):
                data = next(self.dl)
                loss = self.model(data) / self.accumulate_every
                self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()

    def train_accumulating(self, steps):
        for step in range(steps):
            data = next(self.dl)
            with self.accelerator.accumulate(self.model):
                loss = self.model(data)
                self.accelerator.backward(loss)
                self.opt.step()
                self.opt.zero_grad()
