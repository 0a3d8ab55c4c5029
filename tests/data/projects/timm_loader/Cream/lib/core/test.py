import torch

from lib.utils.util import reduce_tensor


def validate(epoch, model, loader, cfg):
    top1 = []
    model.eval()
    with torch.no_grad():
        for input, target in loader:
            prec1 = (model(input).argmax(1) == target).float().mean() * 100
            if cfg.NUM_GPU > 1:
                prec1 = reduce_tensor(prec1, cfg.NUM_GPU)
            top1.append(prec1.item())
    return sum(top1) / len(top1)
