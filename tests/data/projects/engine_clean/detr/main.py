import torch
import torch.distributed as dist

from detr import engine


def main(args, net, criterion, loader, optimizer):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(net.cuda(), device_ids=[args.gpu])
    model_without_ddp = model.module
    # The helpers get the inner model: a single-process step, no DDP forward to bypass.
    engine.train_one_epoch(model_without_ddp, criterion, loader, optimizer, args.accum_iter)
    engine.finetune(net, next(iter(loader)), optimizer)
