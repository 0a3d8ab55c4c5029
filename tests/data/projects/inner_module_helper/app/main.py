import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from app import engine
from app.trainer import Trainer
from app.utils import NativeScaler


def main(args, net, criterion, loader, optimizer):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(), device_ids=[args.gpu])
    model_without_ddp = model.module if args.distributed else model
    loss_scaler = NativeScaler()
    for epoch in range(args.epochs):
        engine.train_one_epoch(model_without_ddp, criterion, loader, optimizer, loss_scaler)
    engine.finetune(next(iter(loader)), optimizer, model=model_without_ddp)
    Trainer(model.module, optimizer).fit(loader)
