import torch
from torch.utils.data import DataLoader, DistributedSampler

from detr.engine import evaluate


def main(model, dataset_val):
    torch.distributed.init_process_group("nccl")
    sampler_val = DistributedSampler(dataset_val, shuffle=False)
    data_loader_val = DataLoader(dataset_val, 2, sampler=sampler_val)
    return evaluate(model, data_loader_val)
