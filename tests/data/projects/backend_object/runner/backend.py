import torch.distributed as dist
from torch.utils.data import DataLoader


class Backend:
    """What a launcher-agnostic trainer talks to: it hands most objects back as they are."""

    def __init__(self, backend="nccl"):
        self.backend = backend

    def setup(self):
        dist.init_process_group(self.backend)

    def prepare_loader(self, loader):
        return loader

    def reshard(self, loader):
        return DataLoader(loader.dataset, batch_size=loader.batch_size)

    def set_epoch(self, loader, epoch):
        loader.sampler.set_epoch(epoch)
