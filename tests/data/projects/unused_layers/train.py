import os
from types import SimpleNamespace

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from models import build_model


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    cfg = SimpleNamespace(dim=64, depth=4, classes=10)
    model = build_model(cfg).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters())
    for _ in range(10):
        x = torch.randn(8, 64, device=local_rank)
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()
