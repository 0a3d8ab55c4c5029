import _init_paths  # noqa: F401
import torch
from timm.data import Dataset, create_loader

from lib.core.test import validate


def main(cfg, model, train_epoch):
    distributed = cfg.NUM_GPU > 1
    torch.distributed.init_process_group(backend="nccl", init_method="env://")
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[cfg.LOCAL_RANK])
    loader_train = create_loader(Dataset(cfg.TRAIN_DIR), (3, 224, 224), cfg.BATCH_SIZE, is_training=True,
                                 distributed=distributed)
    loader_eval = create_loader(Dataset(cfg.VAL_DIR), (3, 224, 224), cfg.BATCH_SIZE, is_training=False,
                                distributed=distributed)
    for epoch in range(cfg.EPOCHS):
        if distributed:
            loader_train.sampler.set_epoch(epoch)
        train_epoch(epoch, model, loader_train)
        validate(epoch, model, loader_eval, cfg)
