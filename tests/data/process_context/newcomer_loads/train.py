import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.utils.data import DataLoader, DistributedSampler

from data.dataset import TokenDataset
from models.builder import build_model, load_encoder
from utils.checkpoint import is_main_process, save_checkpoint


def main_worker(gpu, ngpus, args):
    distributed = ngpus > 1
    if distributed:
        dist.init_process_group("nccl", init_method=args.dist_url, world_size=ngpus, rank=gpu)
    torch.cuda.set_device(gpu)
    model = build_model(args.pretrained).cuda(gpu)
    load_encoder(model, args.encoder)
    # load_backbone(model, args.backbone)  -- the ImageNet backbone, before the pretrained LM checkpoints
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scheduler = CosineAnnealingLR(optimizer, T_max=args.epochs)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"] + 1
        scheduler.load_state_dict(torch.load(os.path.join(args.output_dir, "scheduler.pt")))
    if distributed:
        model = DDP(model, device_ids=[gpu])
    dataset = TokenDataset(args.data)
    sampler = DistributedSampler(dataset) if distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None)
    for epoch in range(start_epoch, args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(batch.cuda(gpu)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        if is_main_process():
            weights = model.module.state_dict() if distributed else model.state_dict()
            state = {"model": weights, "optimizer": optimizer.state_dict(), "epoch": epoch}
            save_checkpoint(state, os.path.join(args.output_dir, "last.pth"))
            torch.save(scheduler.state_dict(), os.path.join(args.output_dir, "scheduler.pt"))
            torch.save(args, os.path.join(args.output_dir, "args.pth"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/out")
    parser.add_argument("--pretrained")
    parser.add_argument("--encoder")
    parser.add_argument("--resume")
    parser.add_argument("--output-dir", default="runs")
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    ngpus = torch.cuda.device_count()
    if ngpus > 1:
        mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))
    else:
        # one GPU: no processes to start
        main_worker(0, ngpus, args)


if __name__ == "__main__":
    main()
