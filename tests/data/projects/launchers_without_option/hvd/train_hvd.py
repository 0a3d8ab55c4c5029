import argparse

import horovod.torch as hvd
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    hvd.init()
    torch.cuda.set_device(hvd.local_rank())
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size()))
    return model, optimizer


if __name__ == "__main__":
    main()
