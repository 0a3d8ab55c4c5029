import torch
from torch.utils.data import DataLoader


def make_data_loader(args, datasets):
    if args.mode == "search":
        val_set = datasets["search"]
        val_sampler = torch.utils.data.distributed.DistributedSampler(val_set, drop_last=True)
        val_loader = DataLoader(val_set, batch_size=1, sampler=val_sampler)
    elif args.mode == "semantic":
        val_set = datasets["semantic"]
        val_sampler = torch.utils.data.distributed.DistributedSampler(val_set)
        val_loader = DataLoader(val_set, batch_size=1, sampler=val_sampler)
    elif args.mode == "panoptic":
        val_set = datasets["panoptic"]
        val_sampler = torch.utils.data.distributed.DistributedSampler(val_set)
        val_loader = DataLoader(val_set, batch_size=1, sampler=val_sampler)
    else:
        raise ValueError(args.mode)
    return val_loader, val_sampler
