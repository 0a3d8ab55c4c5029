import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from pkg.models import Net
from pkg.trainer import Trainer


def main(cfg, loader, optimizer):
    dist.init_process_group("nccl")
    global_rank = dist.get_rank()
    model = DDP(Net().cuda(cfg.gpu), device_ids=[cfg.gpu])
    trainer = Trainer(model, loader, optimizer, global_rank)
    trainer.run()
