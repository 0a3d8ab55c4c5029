import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer import Trainer


def main(settings):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    model = DDP(torch.nn.Linear(2, 2).to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = Trainer(model=model, optimizer=optimizer, device=rank, **settings)
    trainer.train([torch.randn(4, 2)])


if __name__ == "__main__":
    main({"epochs": 2})
