"""Length-bucketed sampling: batches of similar-length utterances waste less padding."""
import torch
from torch.utils.data.distributed import DistributedSampler


class BucketingSampler(DistributedSampler):
    """Shuffles within buckets of similar length, then shuffles the buckets."""

    def __init__(self, dataset, lengths, bucket_size=8, **kwargs):
        super().__init__(dataset, **kwargs)
        self.lengths = lengths
        self.bucket_size = bucket_size

    def __iter__(self):
        g = torch.Generator()
        g.manual_seed(self.seed + self.epoch)
        by_length = sorted(range(len(self.lengths)), key=lambda i: self.lengths[i])
        buckets = [by_length[i:i + self.bucket_size] for i in range(0, len(by_length), self.bucket_size)]
        order = []
        for b in torch.randperm(len(buckets), generator=g).tolist():
            bucket = buckets[b]
            order += [bucket[i] for i in torch.randperm(len(bucket), generator=g).tolist()]
        return iter(order)
