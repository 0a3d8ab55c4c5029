import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from simclr.model import SimCLR, save_checkpoint, save_model


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = SimCLR()
    if args.reload:
        model_fp = os.path.join(args.model_path, "checkpoint_{}.tar".format(args.epoch_num))
        model.load_state_dict(torch.load(model_fp, map_location="cpu"))
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        if dist.get_rank() == 0:
            save_model(args, model, epoch)
            save_checkpoint(model, optimizer, "runs/last.pth")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", default="save")
    parser.add_argument("--epoch_num", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--reload", action="store_true")
    main(parser.parse_args())
