import torch.distributed as dist

from lib.models import build_model
from lib.trainer import Trainer


def main(net, optimizer, loader, rank):
    dist.init_process_group("nccl")
    model = build_model(net, rank)
    trainer = Trainer(model, optimizer, accumulation_steps=8)
    trainer.fit(loader)
