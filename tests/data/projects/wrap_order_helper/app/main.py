import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from app.models import build_head, build_model
from app.parallel import wrap


def main(cfg, rank):
    dist.init_process_group("nccl")
    model = build_model(cfg)
    model = DDP(model, device_ids=[rank])
    model.to(rank)
    head = build_head(cfg)
    head = wrap(head, rank)
    head.cuda(rank)
    tail = build_head(cfg)
    tail = wrap(module=tail, rank=rank)
    tail.cuda(rank)
    return model, head, tail
