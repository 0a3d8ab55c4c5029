import torch
import torch.distributed as dist


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    def all_reduce(self):
        total = torch.tensor([self.sum, self.count], device="cuda")
        dist.all_reduce(total)
        self.sum, self.count = total.tolist()
        return self.sum / self.count
