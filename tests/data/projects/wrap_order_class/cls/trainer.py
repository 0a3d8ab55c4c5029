import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from cls.models import PlacedNet, ResNetLite


class Trainer:
    def __init__(self, cfg, local_rank):
        self.device = torch.device(f"cuda:{local_rank}")
        self.model = ResNetLite(cfg.num_classes)
        self.model = DDP(self.model, device_ids=[local_rank], output_device=local_rank)
        self.model.to(self.device)
        # the class places itself on the GPU: clean
        self.aux = PlacedNet(local_rank)
        self.aux = DDP(self.aux, device_ids=[local_rank])
        self.aux.to(self.device)


def main(cfg, local_rank):
    torch.distributed.init_process_group("nccl")
    return Trainer(cfg, local_rank)
