import torch.distributed as dist
from torch.utils.data import DataLoader

from proj import data


def main(args, train_set, val_set):
    dist.init_process_group("nccl")
    sampler = data.make_sampler(train_set, True)
    loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=2)
    val_sampler = data.make_sampler(val_set, True)
    val_loader = DataLoader(val_set, batch_size=32, sampler=val_sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        val_sampler.set_epoch(epoch)
        for batch in loader:
            pass
        for batch in val_loader:
            pass
