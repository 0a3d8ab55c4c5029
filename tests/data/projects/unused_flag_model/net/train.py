import os

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from net.model import Classifier


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = Classifier(128, 10).cuda(local_rank)
    model = DistributedDataParallel(model, device_ids=[local_rank], find_unused_parameters=True)
    return model
