import torch
import torch.distributed as dist

import utils.dist as utils
from utils.dist import is_master, should_write


def main(args):
    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2).cuda())
    if utils.is_main_process():
        torch.save(model.state_dict(), "main.pt")
    if should_write():
        torch.save(model.state_dict(), "written.pt")
    if is_master(args):
        torch.save(model.state_dict(), "master.pt")
    if utils.is_main_process:
        torch.save(model.state_dict(), "uncalled.pt")
