import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from data.images import ImageFolder
from models.unet import TinyUNet
from utils.diffusion import diffusion_loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    torch.manual_seed(args.seed)
    model = DDP(TinyUNet().cuda(), device_ids=[rank])  # the shared seed made the replicas equal
    torch.manual_seed(args.seed + rank)  # from here on each rank draws its own noise
    dataset = ImageFolder("data/finetune", seed=args.seed)
    sampler = DistributedSampler(dataset, seed=args.seed)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    epoch = 0
    while epoch < 3:
        sampler.set_epoch(epoch)
        for images in loader:
            optimizer.zero_grad()
            diffusion_loss(model, images.cuda()).backward()
            optimizer.step()
        epoch += 1


if __name__ == "__main__":
    main()
