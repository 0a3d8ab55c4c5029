"""torchrun --nproc_per_node=4 -m recsys.train: each rank builds its own dataset and loads it
in its own process (no workers), so the dataset is never pickled."""
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from recsys.data import SequenceDataset


def main(rows):
    dist.init_process_group("nccl")
    dataset = SequenceDataset(rows)
    loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset), num_workers=0)
    for epoch in range(3):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            pass


if __name__ == "__main__":
    main([])
