import torch
import torch.distributed as dist


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def reduce_mean(value):
    tensor = torch.tensor(value, device="cuda")
    dist.all_reduce(tensor)
    return tensor.item() / dist.get_world_size()


def sync_metrics(meters):
    return {name: reduce_mean(meter) for name, meter in meters.items()}


def log_on_main(text):
    if is_main_process():
        print(text)
