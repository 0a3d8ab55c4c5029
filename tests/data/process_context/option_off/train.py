import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--resume", default="", help="checkpoint to resume from (run.sh never passes it)")
parser.add_argument("--init", default="", help="weights to start from (run.sh passes them)")
args = parser.parse_args()


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.Linear(8, 8).cuda()
    if args.resume != "":
        model.load_state_dict(torch.load(args.resume))
    if args.init:
        model.load_state_dict(torch.load(args.init))
    model = DistributedDataParallel(model)
    for epoch in range(args.epochs):
        pass
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "last.pt")


if __name__ == "__main__":
    main()
