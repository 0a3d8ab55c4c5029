import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from app import engine
from app.checkpoint import load_weights, save_checkpoint
from app.optim import create_optimizer


def main(args, net, criterion, loader, val_loader):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(), device_ids=[args.gpu])
    model_without_ddp = model.module
    load_weights(model_without_ddp, args.resume)
    optimizer = torch.optim.SGD(model_without_ddp.parameters(), lr=0.1)
    optimizer = create_optimizer(args, model_without_ddp)
    for epoch in range(args.epochs):
        engine.train_one_epoch(model, criterion, loader, optimizer)
        engine.evaluate(model_without_ddp, val_loader)
        engine.saliency(model_without_ddp, next(iter(val_loader)))
        engine.two_views(model, model_without_ddp, *next(iter(loader)), optimizer)
        save_checkpoint(model_without_ddp, optimizer, args.output)
