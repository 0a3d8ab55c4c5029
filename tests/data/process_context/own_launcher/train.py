import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.launch import launch_processes


def main(args):
    dist.init_process_group("nccl", rank=args.node * args.gpus + args.local_rank, world_size=args.nodes * args.gpus)
    torch.cuda.set_device(args.local_rank)
    model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[args.local_rank])
    model(torch.randn(2, 4, device="cuda")).sum().backward()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--node", type=int, default=0)
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=-1)
    options = parser.parse_args()
    launch_processes(main, options, options.gpus)
