"""DDP014 on a rank the command-line namespace holds, set by a helper of another module.

PersFormer's `main()` parses `args`, hands it to `ddp_init(args)` of `experiments/ddp.py`, which
sets `args.proc_id` from the launcher's rank (`args.local_rank`, or `SLURM_PROCID` under
srun), and then builds `Runner(args)`, which keeps the namespace as `self.args`. The runner's
save sits under `if args.proc_id == 0:` (`args = self.args`): one rank writes, although no
line of the runner's module names a rank.
"""

from __future__ import annotations

import re
from pathlib import Path

_DDP = '''\
import os
import torch
import torch.distributed as dist


def setup_dist_launch(args):
    args.proc_id = {launch}


def setup_slurm(args):
    args.proc_id = int(os.environ['SLURM_PROCID'])
    args.local_rank = args.proc_id % torch.cuda.device_count()


def ddp_init(args):
    args.proc_id, args.gpu, args.world_size = 0, 0, 1
    if args.use_slurm:
        setup_slurm(args)
    else:
        setup_dist_launch(args)
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend='nccl')
'''

_RUNNER = '''\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Runner:
    def __init__(self, args):
        self.args = args

    def train(self):
        args = self.args
        model = DDP(torch.nn.Linear(2, 2).cuda(), device_ids=[args.local_rank])
        for epoch in range(10):
            self.evaluate(torch.zeros(1).cuda())
            if {test}:
                self.save_checkpoint(model.module.state_dict(), f'ckpt_{{epoch}}.pth')

    def evaluate(self, total):
        if self.args.proc_id == 0:
            dist.all_reduce(total)

    def save_checkpoint(self, state, path):
        torch.save(state, path)

    def log(self, total):
        if dist.get_rank() == 0:
            print(total)
'''

_MAIN = '''\
import argparse
from pkg.ddp import *
from pkg.runner import *


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--local_rank', type=int, default=0)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--use_slurm', action='store_true')
    args = parser.parse_args()
    ddp_init(args)
    runner = Runner(args)
    runner.train()


if __name__ == '__main__':
    main()
'''


def _findings(tmp_path: Path, run, rule: str = "DDP014", launch: str = "args.local_rank", test: str = "args.proc_id == 0") -> list[str]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ddp.py").write_text(_DDP.format(launch=launch))
    (tmp_path / "pkg" / "runner.py").write_text(_RUNNER.format(test=test))
    (tmp_path / "main.py").write_text(_MAIN)
    (tmp_path / "train.sh").write_text("python -m torch.distributed.launch --nproc_per_node 8 main.py\n")
    output = run("check", "--no-cache", "--select", rule, ".").stdout
    return [f"{m[1]}:{m[2]}" for m in re.finditer(rf"^(\S+\.py):(\d+):\d+: {rule}", output, re.M)]


def test_a_rank_a_helper_of_another_module_sets_on_the_kept_namespace_guards_the_save(tmp_path, run):
    assert _findings(tmp_path, run) == []


def test_the_kept_namespace_read_through_self_guards_the_save_too(tmp_path, run):
    assert _findings(tmp_path, run, test="self.args.proc_id == 0") == []


def test_an_attribute_the_helper_sets_from_anything_else_guards_nothing(tmp_path, run):
    assert _findings(tmp_path, run, launch="args.seed") == ["pkg/runner.py:23"]


def test_the_scheduler_rank_alone_is_a_rank_too(tmp_path, run):
    """Both ways of `ddp_init` set `args.proc_id` from SLURM_PROCID."""
    assert _findings(tmp_path, run, launch="int(os.environ['SLURM_PROCID'])") == []


def test_a_collective_under_the_handed_rank_test_is_rank_zeros_alone(tmp_path, run):
    """DDP008 reads the same rank test: the all_reduce in `evaluate` only rank 0 reaches (its
    `ast` screen admits a module by the words of a rank test: `log` names `dist.get_rank()`)."""
    assert _findings(tmp_path, run, rule="DDP008") == ["pkg/runner.py:20"]
