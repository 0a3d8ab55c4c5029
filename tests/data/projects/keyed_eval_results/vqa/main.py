import torch.distributed as dist

from vqa.data import get_loader
from vqa.trainer import Trainer


def main(model, train_set, val_set):
    dist.init_process_group("nccl")
    train_loader = get_loader(train_set, "train", distributed=True)
    val_loader = get_loader(val_set, "val", distributed=True)
    return Trainer(model, train_loader, val_loader).evaluate()
