from .data import build_loader
from .utils import infinite_loader


def finetune(model, dataset, steps):
    loader = build_loader(dataset)
    batches = infinite_loader(loader)
    for step in range(steps):
        model(next(batches))
