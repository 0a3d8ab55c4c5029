import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from app.models import build_head, build_initialised, build_model, load_backbone
from app.parallel import wrap


def main(cfg, rank):
    dist.init_process_group("nccl")
    model = build_model(cfg)
    model = DDP(model, device_ids=[rank])
    model.to(rank)
    other = build_initialised(cfg)
    other = DDP(other, device_ids=[rank])
    other.to(rank)
    head = build_head(cfg)
    head = DDP(head, device_ids=[rank])
    head.to(rank)
    backbone = load_backbone(cfg)
    backbone = DDP(backbone, device_ids=[rank])
    backbone.cuda(rank)
    probe = nn.Linear(4, 2)
    probe = wrap(probe, rank)
    probe.cuda(rank)
    return model, other, head, backbone, probe
