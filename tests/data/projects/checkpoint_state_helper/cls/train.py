import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from cls.utils import save_checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", default="runs/resnet.pth")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    net = torch.nn.Linear(4, 2).cuda()
    model = DDP(net)
    for epoch in range(10):
        if dist.get_rank() == 0:
            save_checkpoint({"epoch": epoch, "state_dict": model.state_dict()}, False, args.ckpt)
            save_checkpoint({"epoch": epoch, "state_dict": net.state_dict()}, False, filename="runs/plain.pth")


if __name__ == "__main__":
    main()
