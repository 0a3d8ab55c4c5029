import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from pipeline.collate import get_collate_fn, get_plain_collate


def main(cfg, train_set, val_set):
    dist.init_process_group("nccl")
    collate_fn = get_collate_fn(cfg.modalities)
    train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set), collate_fn=collate_fn, num_workers=cfg.workers)
    val_loader = DataLoader(val_set, collate_fn=get_collate_fn(["image"]), num_workers=4)
    plain_loader = DataLoader(val_set, collate_fn=get_plain_collate(), num_workers=4)
    serial_loader = DataLoader(val_set, collate_fn=get_collate_fn(["image"]))
    for epoch in range(cfg.epochs):
        train_loader.sampler.set_epoch(epoch)
        for batch in train_loader:
            pass
    return val_loader, plain_loader, serial_loader


if __name__ == "__main__":
    main(None, None, None)
