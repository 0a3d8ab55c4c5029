import torch.distributed as dist

from captioner.data import create_loader
from captioner.train import train_one_epoch


def pretrain(model, optimizer, dataset, epochs):
    # No sampler for pretraining: `samplers = [None]` gives the loader none (train.py hands
    # create_loader the DistributedSamplers of create_sampler; this call does not).
    dist.barrier()
    samplers = [None]
    loader = create_loader([dataset], samplers, batch_size=[32], num_workers=[4], is_trains=[True], collate_fns=[None])[0]
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer)
