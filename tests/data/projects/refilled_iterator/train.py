import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from trainer.loop import train_one_epoch


def main(model, optimizer, dataset, epochs):
    dist.init_process_group("nccl")
    model = DistributedDataParallel(model)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    batches = iter(loader)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        batches = train_one_epoch(model, optimizer, loader, batches, len(loader))


if __name__ == "__main__":
    main(None, None, None, 10)
