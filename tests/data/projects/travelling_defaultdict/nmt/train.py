import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler

from nmt.data import PairDataset
from nmt.text import ClassAccuracy, Meters, build_token_index, length_histogram


def worker(rank, pairs, metric):
    dist.init_process_group("nccl", rank=rank, world_size=2)
    src_index = build_token_index([p[0] for p in pairs])
    hist = length_histogram([p[0] for p in pairs])
    ds = PairDataset(pairs, src_index, hist)
    loader = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds), num_workers=4)
    meters = Meters()
    for batch in loader:
        meters.update("loss", 0.0)


def main(pairs):
    mp.spawn(worker, args=(pairs, ClassAccuracy()), nprocs=2)
