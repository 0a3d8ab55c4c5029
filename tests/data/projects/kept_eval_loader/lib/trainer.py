import torch
import torch.distributed as dist

from lib.data import get_dataloader
from lib.utils import reduce_value


class Trainer:
    def __init__(self, model, optimizer, train_set, val_set):
        self.model, self.optimizer = model, optimizer
        self.train_loader = get_dataloader(train_set, train=True)
        self.val_loader = get_dataloader(val_set, train=False)

    def train_epoch(self):
        for x, y in self.train_loader:
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            reduce_value(loss.detach())
            self.optimizer.step()

    @torch.no_grad()
    def validate(self):
        hits = torch.zeros(2)
        for x, y in self.val_loader:
            hits += torch.stack([(self.model(x).argmax(1) == y).sum(), torch.tensor(len(y))])
        hits = reduce_value(hits)
        return hits[0] / hits[1]


class Evaluator:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader

    @torch.no_grad()
    def run(self):
        preds = []
        for x, _ in self.loader:
            preds.append(self.model(x).argmax(1))
        everyone = [None] * dist.get_world_size()
        dist.all_gather_object(everyone, preds)
        return everyone


class Predictor:
    """Writes this rank's predictions: nothing is combined across ranks."""

    def __init__(self, model, loader):
        self.model = model
        self.loader = loader

    @torch.no_grad()
    def run(self, path):
        preds = []
        for x, _ in self.loader:
            preds.append(self.model(x).argmax(1))
        torch.save(preds, f"{path}.{dist.get_rank()}")
