import torch
import torch.distributed as dist


class MetricLogger:
    def __init__(self):
        self.correct, self.count = 0, 0

    def update(self, correct, count):
        self.correct += correct
        self.count += count

    def synchronize_between_processes(self):
        t = torch.tensor([self.correct, self.count], dtype=torch.float64, device="cuda")
        dist.all_reduce(t)
        self.correct, self.count = t[0].item(), t[1].item()

    @property
    def accuracy(self):
        return self.correct / self.count
