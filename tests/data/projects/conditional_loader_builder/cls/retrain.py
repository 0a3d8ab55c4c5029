import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torchvision.models import resnet50

DATASET = os.environ.get("DATASET", "imagenet")
if DATASET == "folder":
    from cls.data.folder import get_loaders
else:
    from cls.data.imagenet import get_loaders
try:
    from cls.engine import validate
except ImportError:
    raise


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(resnet50().cuda(), device_ids=[local_rank])
    loaders, samplers = get_loaders("/data/imagenet", 64)
    train_loader, valid_loader = loaders
    for epoch in range(90):
        samplers[0].set_epoch(epoch)
        print(validate(valid_loader, model, dist.get_world_size()))


if __name__ == "__main__":
    main()
