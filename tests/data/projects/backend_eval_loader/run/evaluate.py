import torch
import torch.distributed as dist


@torch.no_grad()
def evaluate(model, loader):
    hits = torch.zeros(2)
    for x, y in loader:
        hits += torch.stack([(model(x).argmax(1) == y).sum(), torch.tensor(len(y))])
    dist.all_reduce(hits)
    return hits[0] / hits[1]
