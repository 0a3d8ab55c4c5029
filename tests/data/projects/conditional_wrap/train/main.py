import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from train.engine import finetune_one_epoch, train_one_epoch


def main(args, net, loader, optimizer):
    dist.init_process_group("nccl")
    net = net.cuda(args.gpu)
    model = DDP(net, device_ids=[args.gpu], broadcast_buffers=False) if args.swin else DDP(net, device_ids=[args.gpu])
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, optimizer, args.accum_iter)


def finetune(args, net, loader, optimizer):
    model = DDP(net, device_ids=[args.gpu]) if args.distributed else net
    finetune_one_epoch(model, loader, optimizer, accum_iter=args.accum_iter)
