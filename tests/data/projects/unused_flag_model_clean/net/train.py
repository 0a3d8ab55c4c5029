import os

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from net import model as models
from net.model import Stacked


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    aux = models.WithAux(128, 10).cuda(local_rank)
    aux = DistributedDataParallel(aux, device_ids=[local_rank], find_unused_parameters=True)
    stacked = DistributedDataParallel(Stacked(128).cuda(local_rank), device_ids=[local_rank], find_unused_parameters=True)
    return aux, stacked
