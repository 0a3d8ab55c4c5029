import torch.distributed as dist

from cls.datasets.build import build_loader, build_test_loader
from cls.engine import evaluate


def main(model, train_set, val_set, test_set):
    dist.init_process_group("nccl")
    train_loader = build_loader(train_set, "train", 64)
    val_loader = build_loader(val_set, "val", 64)
    test_loader = build_test_loader(test_set, split="test", batch_size=64)
    print(len(train_loader), evaluate(model, val_loader), evaluate(model, test_loader))
