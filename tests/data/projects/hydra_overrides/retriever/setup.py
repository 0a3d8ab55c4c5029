import torch
import torch.distributed as dist


def setup_devices(cfg):
    if cfg.local_rank == -1:
        return torch.device("cuda"), 1
    torch.cuda.set_device(cfg.local_rank)
    dist.init_process_group("nccl")
    return torch.device("cuda", cfg.local_rank), dist.get_world_size()
