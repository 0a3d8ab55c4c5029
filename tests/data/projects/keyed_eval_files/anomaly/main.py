import torch.distributed as dist

from anomaly.data import build_loader
from anomaly.train_val import validate


def main(model, val_set, eval_dir):
    dist.init_process_group("nccl")
    return validate(build_loader(val_set), model, eval_dir)
