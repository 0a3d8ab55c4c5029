import torch

from cls.utils import AverageMeter


@torch.no_grad()
def evaluate(model, data_loader):
    meter = AverageMeter()
    for images, target in data_loader:
        meter.update((model(images).argmax(1) == target).float().mean().item(), images.size(0))
    return meter.all_reduce()
