from torch.utils.data import DataLoader, DistributedSampler

from .utils import cycle, repeat


def pretrain(model, dataset, steps):
    dl = cycle(DataLoader(dataset, sampler=DistributedSampler(dataset)))
    for step in range(steps):
        model(next(dl))


def finetune(model, dataset, steps, steps_per_epoch):
    sampler = DistributedSampler(dataset)
    batches = repeat(DataLoader(dataset, sampler=sampler))
    for step in range(steps):
        if step % steps_per_epoch == 0:
            sampler.set_epoch(step // steps_per_epoch)
        model(next(batches))


def evaluate(model, dataset, steps):
    batches = repeat(DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False)))
    for step in range(steps):
        model(next(batches))
