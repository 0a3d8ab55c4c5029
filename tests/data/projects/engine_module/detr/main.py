import torch
import torch.distributed as dist

from detr import engine
from detr.engine import distill_step


def main(args, net, criterion, loader, optimizer):
    dist.init_process_group("nccl")
    model = net.cuda()
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        model_without_ddp = model.module
    for epoch in range(args.epochs):
        engine.train_one_epoch(model, criterion, loader, optimizer, accum_iter=args.accum_iter)
        for batch in loader:
            distill_step(student=model, batch=batch, optimizer=optimizer)
