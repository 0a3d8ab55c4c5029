import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from engine.trainer import Trainer
from models.net import Denoiser
from utils.losses import NoiseLoss


def main(loader, accumulate=4):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    model = DDP(Denoiser().cuda(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    Trainer(model, optimizer, accumulate).fit(loader)
    criterion = NoiseLoss(0.1)
    for step, batch in enumerate(loader):
        loss = criterion.train_losses(model, batch.cuda(rank)) / accumulate
        loss.backward()
        if (step + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main(loader=[torch.randn(8, 16) for _ in range(16)])
