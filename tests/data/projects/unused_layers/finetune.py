import os

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from models import Detector


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(Detector(64).cuda(local_rank), device_ids=[local_rank], find_unused_parameters=True)
    return model


if __name__ == "__main__":
    main()
