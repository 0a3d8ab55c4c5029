import torch.distributed as dist

from vqa.data import get_loader
from vqa.trainer import Trainer


def main(model, val_set):
    dist.init_process_group("nccl")
    val_loader = get_loader(val_set, "val", distributed=True)
    return Trainer(model, val_loader).evaluate()
