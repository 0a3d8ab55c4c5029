import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from seg.models import UNet
from seg.utils import save_checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", default="runs/unet.pth")
    parser.add_argument("--ema_ckpt", default="runs/ema.pth")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    model = DDP(UNet().cuda())
    ema = UNet().cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        if dist.get_rank() == 0:
            save_checkpoint(model, optimizer, epoch, args.ckpt)
            save_checkpoint(ema, optimizer, epoch, path=args.ema_ckpt)


if __name__ == "__main__":
    main()
