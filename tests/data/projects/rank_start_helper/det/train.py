import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from det import dist_utils
from det.evaluate import score
from det.optim_utils import build_optimizer, build_scheduler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()
    dist_utils.init_mode(args)
    model = DDP(torch.nn.Linear(4, 4).cuda())
    optimizer = build_optimizer(model, args.resume)
    scheduler = build_scheduler(optimizer, args.resume)
    for epoch in range(10):
        scheduler.step()
        print(score(model.module))
        if dist.get_rank() == 0:
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "epoch": epoch}, "last.pth")


if __name__ == "__main__":
    main()
