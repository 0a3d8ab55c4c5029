"""DDP004 and DDP014 on a file named after the rank through an attribute of a project class.

facebookresearch/stochastic_gradient_push's ClusterManager builds `self.checkpoint_fpath` in its
constructor from `model_rank`, which is the rank itself under `all_workers` and 0 otherwise; the
script passes `all_workers=args.checkpoint_all`, an option that defaults to 'True' and that the
parser's module converts to a bool. In every documented run each rank saves, and resumes, a file
of its own: no two ranks write one file, and the rank that loads it saved it from its own device.
Where the option defaults to 'False', every rank loads rank 0's file (onto GPU 0) and, saving
without a guard, writes it too: both rules report.
"""

from __future__ import annotations

import re
from pathlib import Path

_MANAGER = '''\
import torch
import torch.distributed as dist


class Manager(object):
    def __init__(self, rank, world_size, state, all_workers=False):
        self.rank = rank
        self.state = state
        if all_workers:
            model_rank = rank
        else:
            model_rank = 0
        self.checkpoint_fname = {name}
        self.checkpoint_fpath = "/checkpoint/" + self.checkpoint_fname

    def save_checkpoint(self):
        dist.barrier()
        torch.save(self.state, self.checkpoint_fpath)
'''

_MAIN = '''\
import argparse
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from manager import Manager

parser = argparse.ArgumentParser()
parser.add_argument("--checkpoint_all", default={default}, type=str)


def main(args):
    dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)
    model = DistributedDataParallel(torch.nn.Linear(2, 2).cuda(args.rank))  # each rank on its own GPU
    manager = Manager(rank=args.rank, world_size=args.world_size, state={{}}, all_workers={passed})
    if os.path.isfile(manager.checkpoint_fpath):
        checkpoint = torch.load(manager.checkpoint_fpath)
        model.load_state_dict(checkpoint["state_dict"])
    manager.save_checkpoint()


if __name__ == "__main__":
    args = parser.parse_args()
    args.rank = int(os.environ["SLURM_PROCID"])
    args.world_size = int(os.environ["SLURM_NTASKS"])
    args.checkpoint_all = True if args.checkpoint_all == "True" else False
    main(args)
'''

_RANKED = "'checkpoint_r' + str(model_rank) + '.pth.tar'"


def _project(tmp_path: Path, default: str = "'True'", passed: str = "args.checkpoint_all", name: str = _RANKED) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "manager.py").write_text(_MANAGER.format(name=name))
    (tmp_path / "main.py").write_text(_MAIN.format(default=default, passed=passed))


def _found(run) -> list[str]:
    output = run("check", "--no-cache", "--select", "DDP004,DDP014", ".").stdout
    return sorted(f"{m[1]}:{m[2]} {m[3]}" for m in re.finditer(r"^\S*?(\w+)\.py:(\d+):\d+: (DDP0\d\d)", output, re.M))


def test_a_file_named_after_the_rank_in_the_constructor_is_each_ranks_own(tmp_path, run):
    """`--checkpoint_all` defaults to 'True', converted to True: `model_rank` is the rank."""
    _project(tmp_path)
    assert _found(run) == []


def test_a_flag_passed_true_keeps_the_rank_too(tmp_path, run):
    _project(tmp_path, passed="True")
    assert _found(run) == []


def test_where_the_flag_defaults_off_every_rank_reads_and_writes_rank_zeros_file(tmp_path, run):
    """`--checkpoint_all` defaults to 'False': `model_rank` is 0 on every rank."""
    _project(tmp_path, default="'False'")
    assert _found(run) == ["main:17 DDP004", "manager:18 DDP014"]


def test_a_flag_no_documented_run_shows_proves_nothing(tmp_path, run):
    """`all_workers=args.other`, an option not declared: its value is not known, so the branch
    that names rank 0's file may be taken."""
    _project(tmp_path, passed="args.other")
    assert _found(run) == ["main:17 DDP004", "manager:18 DDP014"]


def test_a_file_named_without_the_rank_is_one_file(tmp_path, run):
    _project(tmp_path, name="'checkpoint.pth.tar'")
    assert _found(run) == ["main:17 DDP004", "manager:18 DDP014"]
