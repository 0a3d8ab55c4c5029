import random

from .base import LengthSampler


class BucketSampler(LengthSampler):
    def __init__(self, lengths, batch_size, num_replicas=None, rank=None, seed=0):
        super().__init__(lengths)
        self.batch_size, self.num_replicas, self.rank, self.seed = batch_size, num_replicas, rank, seed

    def __iter__(self):
        order = sorted(range(len(self.lengths)), key=self.lengths.__getitem__)
        random.Random(self.seed).shuffle(order)
        return iter(order)


class ShardedBuckets(LengthSampler):
    def __init__(self, lengths, num_replicas=1, rank=0):
        super().__init__(lengths)
        self.num_replicas, self.rank = num_replicas, rank

    def __iter__(self):
        return iter(range(self.rank, len(self.lengths), self.num_replicas))
