import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank):
    return DistributedDataParallel(model, device_ids=[local_rank])


def train_one_epoch(model, loader, optimizer):
    for images, targets in loader:
        loss = model(images.cuda(), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def save_checkpoint(model, optimizer, epoch, path):
    if dist.get_rank() == 0:
        state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
        torch.save(state, path)
