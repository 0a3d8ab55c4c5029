"""DDP014 in a worker that `mp.spawn` starts, beside a direct call of it, with a flag that a
helper of another module sets from the rank.

HybrIK's `main()` calls `main_worker(None, opt)` under `if opt.launcher == 'slurm':` and
spawns it otherwise: every process the spawn starts runs the worker, whatever its direct call
looks like, so its final `torch.save` after the epoch loop is every rank's. The snapshots above
it sit under `if opt.log:`, and `opt.log` is set by `init_dist(opt)` of another module: True
where `opt.rank % ngpus == 0`, False otherwise, a rank-0 test.
"""

from __future__ import annotations

import re
from pathlib import Path

_OPTIONS = '''\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument('--rank', default=0, type=int)
parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm'], default='none')
opt = parser.parse_args()
'''

_ENV = '''\
import torch
import torch.distributed as dist


def init_dist(opt):
    opt.ngpus_per_node = torch.cuda.device_count()
    if opt.launcher == 'pytorch':
        _init_dist_pytorch(opt)
    else:
        raise ValueError(opt.launcher)


def _init_dist_pytorch(opt):
    opt.rank = opt.rank * opt.ngpus_per_node + opt.gpu
    dist.init_process_group('nccl', world_size=opt.world_size, rank=opt.rank)
    torch.cuda.set_device(opt.gpu)
    if {test}:
        opt.log = True
    else:
        opt.log = False
'''

_TRAIN = '''\
import torch
import torch.multiprocessing as mp
from pkg.opt import opt
from pkg.env import init_dist


def main():
    if opt.launcher == 'slurm':
        main_worker(None, opt)
    else:
        opt.world_size = torch.cuda.device_count()
        mp.spawn(main_worker, nprocs=opt.world_size, args=(opt,))


def main_worker(gpu, opt):
    opt.gpu = gpu
    init_dist(opt)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2).cuda(gpu), device_ids=[gpu])
    for epoch in range(10):
        if opt.log:
            torch.save(model.module.state_dict(), f'./exp/model_{epoch}.pth')
        torch.distributed.barrier()
    torch.save(model.module.state_dict(), './exp/final.pth')


if __name__ == '__main__':
    main()
'''


def _lines(tmp_path: Path, run, test: str = "opt.rank % opt.ngpus_per_node == 0", launch: str = "pytorch") -> list[int]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "opt.py").write_text(_OPTIONS)
    (tmp_path / "pkg" / "env.py").write_text(_ENV.format(test=test))
    (tmp_path / "train.py").write_text(_TRAIN)
    (tmp_path / "train.sh").write_text(f"python train.py --launcher {launch}\n")
    output = run("check", "--no-cache", "--select", "DDP014", ".").stdout
    return sorted(int(m[1]) for m in re.finditer(r"^\S*train\.py:(\d+):\d+: DDP014", output, re.M))


def test_a_spawned_worker_is_every_processs_whatever_its_direct_call(tmp_path, run):
    assert _lines(tmp_path, run) == [23]


def test_a_flag_a_helper_of_another_module_sets_from_the_rank_guards(tmp_path, run):
    """`opt.log` True only where `opt.rank % ngpus == 0`: the snapshot at line 21 is rank 0's."""
    assert 21 not in _lines(tmp_path, run)


def test_a_flag_set_from_anything_else_guards_nothing(tmp_path, run):
    assert _lines(tmp_path, run, test="opt.verbose") == [21, 23]


def test_a_flag_set_both_ways_under_a_rank_test_in_the_module_itself(tmp_path, run):
    source = _TRAIN.replace("    init_dist(opt)\n", "    if opt.rank == 0:\n        opt.log = True\n    else:\n        opt.log = False\n")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(source.replace("from pkg.opt import opt\nfrom pkg.env import init_dist\n", "opt = None\n"))
    output = run("check", "--no-cache", "--select", "DDP014", ".").stdout
    assert [int(m[1]) for m in re.finditer(r"^\S*train\.py:(\d+):\d+: DDP014", output, re.M)] == [25]
