import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from train.engine import train_one_epoch


def main(args, net, loader, optimizer):
    dist.init_process_group("nccl")
    model = torch.nn.DataParallel(net) if args.multi_gpu else net
    train_one_epoch(model, loader, optimizer, args.accum_iter)
    ddp_model = DDP(net, device_ids=[args.gpu]) if args.distributed else net
    model_without_ddp = ddp_model.module if args.distributed else ddp_model
    train_one_epoch(model_without_ddp.head, loader, optimizer, args.accum_iter)
