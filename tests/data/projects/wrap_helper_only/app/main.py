import torch.distributed as dist
from torch import nn

from app.parallel import wrap as setup_ddp


def main(cfg, rank):
    dist.init_process_group("nccl")
    head = nn.Linear(cfg.dim, cfg.classes)
    head = setup_ddp(module=head, rank=rank)
    head.cuda(rank)
    body = nn.Linear(cfg.dim, cfg.dim).cuda(rank)
    body = setup_ddp(body, rank)
    return head, body
