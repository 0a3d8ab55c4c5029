import torch
import torch.multiprocessing as mp


def _worker(rank, path):
    torch.distributed.init_process_group("gloo", rank=rank, world_size=2)
    torch.load(path)


def test_two_ranks(tmp_path):
    mp.spawn(_worker, args=(str(tmp_path / "m.pt"),), nprocs=2)
