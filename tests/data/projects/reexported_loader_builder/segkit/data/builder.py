import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

from segkit.sampler import RepeatedSampler


def get_data_loader(cfg, ds, mode="train"):
    if mode == "train":
        batchsize = cfg.ims_per_gpu
        shuffle = True
        drop_last = True
    elif mode == "val":
        batchsize = cfg.eval_ims_per_gpu
        shuffle = False
        drop_last = False

    if dist.is_initialized():
        if mode == "train":
            sampler = RepeatedSampler(ds, cfg.max_iter, shuffle=shuffle)
        else:
            sampler = torch.utils.data.distributed.DistributedSampler(ds, shuffle=shuffle)
        batchsampler = torch.utils.data.sampler.BatchSampler(sampler, batchsize, drop_last=drop_last)
        dl = DataLoader(ds, batch_sampler=batchsampler, num_workers=4)
    else:
        dl = DataLoader(ds, batch_size=batchsize, shuffle=shuffle, drop_last=drop_last)
    return dl
