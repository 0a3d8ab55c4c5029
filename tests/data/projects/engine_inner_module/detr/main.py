import torch
import torch.distributed as dist

from detr import engine


def main(args, net, criterion, loader, optimizer):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(net.cuda(), device_ids=[args.gpu])
    model_without_ddp = model.module
    # The inner module trains on every rank through a forward DDP never saw (DDP019); its
    # accumulation loop all-reduces nothing, so DDP021 has nothing to say. `net` is no DDP model.
    engine.train_one_epoch(model_without_ddp, criterion, loader, optimizer, args.accum_iter)
    engine.finetune(net, next(iter(loader)), optimizer)
