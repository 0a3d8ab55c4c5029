import torch

from evalkit import utils


def train_one_epoch(model, loader, optimizer):
    for images, target in loader:
        loss = torch.nn.functional.cross_entropy(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    logger = utils.MetricLogger()
    for images, target in loader:
        logger.update((model(images).argmax(1) == target).sum().item(), len(target))
    logger.synchronize_between_processes()
    return logger.accuracy


@torch.no_grad()
def predict(model, loader):
    return [model(images).argmax(1) for images, _ in loader]
