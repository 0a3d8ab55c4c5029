import torch
import torch.distributed as dist

from segkit.data import get_data_loader
from segkit.evaluate import eval_model


def train(cfg, net, criterion, optimizer, train_set, val_set):
    dl = get_data_loader(cfg, train_set, mode="train")
    for imgs, label in dl:
        loss = criterion(net(imgs.cuda()), label.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        reported = loss.detach().clone()
        dist.all_reduce(reported)
    return eval_model(cfg, net, val_set)
