import torch
import torch.distributed as dist


class SmoothedValue:
    def __init__(self):
        self.count, self.total = 0, 0.0

    def update(self, value, n=1):
        self.count += n
        self.total += value * n

    def synchronize_between_processes(self):
        t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")
        dist.barrier()
        dist.all_reduce(t)
        self.count, self.total = int(t[0]), t[1].item()


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def log_every(self, iterable, print_freq):
        for obj in iterable:
            yield obj

    def synchronize_between_processes(self):
        for meter in self.meters.values():
            meter.synchronize_between_processes()
