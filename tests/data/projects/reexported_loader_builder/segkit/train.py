import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from segkit.data import get_data_loader


def train(cfg, net, criterion, optimizer, train_set):
    net = DistributedDataParallel(net.cuda())
    dl = get_data_loader(cfg, train_set, mode="train")
    for imgs, label in dl:
        loss = criterion(net(imgs.cuda()), label.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
