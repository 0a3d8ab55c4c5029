import math

import torch
import torch.distributed as dist
from torch.utils import data
from torch.utils.data.sampler import BatchSampler, Sampler

__all__ = ["make_data_sampler", "make_batch_data_sampler", "reduce_sum"]


def reduce_sum(tensor):
    total = tensor.clone()
    dist.all_reduce(total)
    return total


def make_data_sampler(dataset, shuffle, distributed):
    if distributed:
        return DistributedSampler(dataset, shuffle=shuffle)
    return data.sampler.SequentialSampler(dataset)


def make_batch_data_sampler(sampler, images_per_batch, num_iters=None):
    batch_sampler = data.sampler.BatchSampler(sampler, images_per_batch, drop_last=False)
    if num_iters is not None:
        batch_sampler = IterationBasedBatchSampler(batch_sampler, num_iters)
    return batch_sampler


# A copy of maskrcnn-benchmark's sampler: it pads the index list as torch's does.
class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True):
        self.dataset = dataset
        self.num_replicas = num_replicas or dist.get_world_size()
        self.rank = dist.get_rank() if rank is None else rank
        self.num_samples = int(math.ceil(len(dataset) / self.num_replicas))
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle

    def __iter__(self):
        indices = torch.arange(len(self.dataset)).tolist()
        indices += indices[: (self.total_size - len(indices))]
        offset = self.num_samples * self.rank
        return iter(indices[offset : offset + self.num_samples])

    def __len__(self):
        return self.num_samples


class IterationBasedBatchSampler(BatchSampler):
    def __init__(self, batch_sampler, num_iterations):
        self.batch_sampler = batch_sampler
        self.num_iterations = num_iterations

    def __iter__(self):
        while True:
            yield from self.batch_sampler
