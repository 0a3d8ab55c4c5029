import sys

import torch
import torch.distributed as dist

from segkit.data import eval_loader
from segkit.models import load


@torch.no_grad()
def accuracy(net, loader):
    correct = torch.zeros(2).cuda()
    for images, labels in loader:
        predicted = net(images.cuda()).argmax(1)
        correct += torch.stack([(predicted == labels.cuda()).sum(), torch.tensor(len(labels)).cuda()])
    dist.all_reduce(correct)
    return correct[0] / correct[1]


def main(path):
    dist.init_process_group("nccl")
    net, dataset = load(path)
    loader = eval_loader(dataset, 64)
    print(accuracy(net, loader))


if __name__ == "__main__":
    main(sys.argv[1])
