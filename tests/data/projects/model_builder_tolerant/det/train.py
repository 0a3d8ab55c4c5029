import os

import torch.distributed as dist

from det.engine import wrap
from det.models import build_model


def main(cfg):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = build_model(cfg).cuda(local_rank)
    model = wrap(model, local_rank, cfg)
    return model
