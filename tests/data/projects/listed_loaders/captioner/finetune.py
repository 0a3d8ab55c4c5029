import torch.distributed as dist

from captioner.compact import loaders_for, samplers_for
from captioner.train import evaluate


def test(model, val_dataset, test_dataset):
    samplers = samplers_for([val_dataset, test_dataset], [False, False], dist.get_world_size(), dist.get_rank())
    val_loader, test_loader = loaders_for([val_dataset, test_dataset], samplers, batch_size=64)
    return evaluate(model, val_loader), evaluate(model, test_loader)
