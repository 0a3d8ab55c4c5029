import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler

from data.loaders import build_eval_loader, build_loader, ToyDataset


def worker(rank, world_size, cfg):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    dataset = ToyDataset(1024)
    loader = build_loader(cfg, dataset, DistributedSampler(dataset))
    eval_loader = build_eval_loader(cfg, dataset, DistributedSampler(dataset, shuffle=False))
    model = DDP(torch.nn.Linear(16, 2).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(cfg.epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda(rank)), y.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            correct = sum((model(x.cuda(rank)).argmax(1) == y.cuda(rank)).sum().item() for x, y in eval_loader)
        print(f"rank {rank} epoch {epoch}: {correct} right")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    gpus = torch.cuda.device_count()
    mp.spawn(worker, args=(gpus, args), nprocs=gpus)
