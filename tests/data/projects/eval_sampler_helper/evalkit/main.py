import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from evalkit.data import build_exact_loaders, build_loaders, build_rank_zero_loaders, build_test_loader
from evalkit.engine import evaluate, predict, train_one_epoch


def main(args, net, train_set, val_set, test_set):
    dist.init_process_group("nccl")
    model = DDP(net)
    train_loader, val_loader = build_loaders(train_set, val_set, 64)
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, args.optimizer)
        print(evaluate(model, val_loader))
    print(predict(model, build_test_loader(test_set, 64)))


def main_exact(args, net, train_set, val_set):
    dist.init_process_group("nccl")
    model = DDP(net)
    train_loader, val_loader = build_exact_loaders(train_set, val_set, 64)
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, args.optimizer)
        print(evaluate(model, val_loader))


def main_rank_zero(args, net, train_set, val_set):
    dist.init_process_group("nccl")
    model = DDP(net)
    train_loader, val_loader = build_rank_zero_loaders(train_set, val_set, 64)
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, args.optimizer)
        if dist.get_rank() == 0:  # the whole validation set on one rank, nothing to combine
            print(predict(model.module, val_loader))
