from torch.utils.data import DistributedSampler


class RepeatedSampler(DistributedSampler):
    def __init__(self, dataset, num_iters, shuffle=True):
        super().__init__(dataset, shuffle=shuffle)
        self.num_iters = num_iters
