"""DDP014 on values that tell the ranks apart without naming them.

HigherHRNet's `main_worker(gpu, ...)`, started by `mp.spawn`, saves `final_state{gpu}.pth.tar`:
mp.spawn hands each process its index first, so every process writes a file of its own. NeWCRFs'
`online_eval` returns its measures only on GPU 0 (`if not distributed or gpu == 0: return
measures`) and None on every other process, so the save under `if eval_measures is not None:` is
rank 0's alone.
"""

from __future__ import annotations

import re
from pathlib import Path

_SPAWNED = '''\
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, ngpus, args):
    args.gpu = gpu
    dist.init_process_group("nccl", rank=gpu, world_size=ngpus)
    model = torch.nn.Linear(2, 2).cuda(gpu)
    torch.save(model.state_dict(), {path})


def main(args):
    ngpus = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))
'''

_EVALUATED = '''\
import torch
import torch.distributed as dist


def evaluate(model, loader):
    total = sum(model(batch).sum() for batch in loader)
    dist.all_reduce(total)
    if dist.get_rank() == 0:
        return total
    return {other}


def main(model, loader, best):
    dist.init_process_group("nccl")
    measures = evaluate(model, loader)
    if measures is not None:
        if measures < best:
            torch.save(model.state_dict(), "best.pt")
'''

_SPAWNED_EVALUATION = '''\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def evaluate(model, loader, gpu, args):
    total = sum(model(batch).sum() for batch in loader)
    if args.multiprocessing_distributed:
        dist.all_reduce(total)
    if not args.multiprocessing_distributed or gpu == 0:
        return total
    return None


def main_worker(gpu, ngpus, args):
    dist.init_process_group("nccl", rank=gpu, world_size=ngpus)
    model, loader = torch.nn.Linear(2, 2).cuda(gpu), [torch.ones(2).cuda(gpu)]
    measures = evaluate(model, loader, gpu, args)
    if measures is not None:
        torch.save(model.state_dict(), "best.pt")


def main(args):
    ngpus = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))
    {fallback}
'''


def _lines(tmp_path: Path, run, source: str) -> list[int]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(source)
    output = run("check", "--no-cache", "--select", "DDP014", ".").stdout
    return sorted(int(m[1]) for m in re.finditer(r"^\S*main\.py:(\d+):\d+: DDP014", output, re.M))


def test_a_file_named_after_the_spawn_index_is_each_processs_own(tmp_path, run):
    path = "os.path.join(args.out, 'final_state{}.pth.tar'.format(gpu))"
    assert _lines(tmp_path, run, _SPAWNED.format(path=path)) == []


def test_a_value_bound_from_the_spawn_index_names_each_processs_file_too(tmp_path, run):
    assert _lines(tmp_path, run, _SPAWNED.format(path="f'{args.out}/final_{args.gpu}.pt'")) == []


def test_a_file_named_after_another_parameter_is_written_by_every_process(tmp_path, run):
    assert _lines(tmp_path, run, _SPAWNED.format(path="f'final_{ngpus}.pt'")) == [11]
    assert _lines(tmp_path, run, _SPAWNED.format(path="'final.pt'")) == [11]


def test_a_save_under_a_value_only_rank_zero_gets_back_is_rank_zeros(tmp_path, run):
    assert _lines(tmp_path, run, _EVALUATED.format(other="None")) == []


def test_a_value_every_rank_gets_back_guards_nothing(tmp_path, run):
    """`return False` on the other ranks: `is not None` holds on every rank."""
    assert _lines(tmp_path, run, _EVALUATED.format(other="False")) == [18]


def test_the_spawn_index_handed_on_to_an_evaluation_tells_rank_zero_apart(tmp_path, run):
    """NeWCRFs: `gpu` in `evaluate` is what main_worker hands on, the process index mp.spawn
    passes; the one-process call in the `else:` of the flag the module spawns under is no rank's
    of a distributed run. Only GPU 0 gets the measures back and saves."""
    source = _SPAWNED_EVALUATION.format(fallback="else:\n        main_worker(args.gpu, 1, args)")
    assert _lines(tmp_path, run, source) == []


def test_a_call_every_run_makes_passes_another_index(tmp_path, run):
    """`main_worker(args.gpu, ...)` made by the spawning run too: `gpu` may be any GPU there."""
    assert _lines(tmp_path, run, _SPAWNED_EVALUATION.format(fallback="main_worker(args.gpu, 1, args)")) == [20]


def test_flake8_reads_the_same_ranks(tmp_path, run):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "spawned.py").write_text(_SPAWNED.format(path="f'final_{gpu}.pt'"))
    (tmp_path / "shared.py").write_text(_SPAWNED.format(path="'final.pt'"))
    (tmp_path / "evaluated.py").write_text(_SPAWNED_EVALUATION.format(fallback="else:\n        main_worker(args.gpu, 1, args)"))
    output = run("--select", "DDP014", ".", tool="flake8").stdout
    assert re.findall(r"^\./(\w+)\.py:(\d+):\d+: DDP014", output, re.M) == [("shared", "11")]


_DEVICE_HELPERS = '''\
import torch
import torch.distributed as dist


def init_distributed(local_rank):
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")


def {name}():
    return torch.cuda.current_device() == 0
'''

_CACHED_FEATURES = '''\
import os
import torch
import torch.distributed as dist
from helpers import {name}


def features(loader, path):
    if os.path.exists(path):
        return torch.load(path, map_location="cpu")
    found = torch.cat([batch for batch in loader])
    dist.all_reduce(found)
    if {name}():
        torch.save(found, path)
    return found
'''


def _device_helper_lines(tmp_path: Path, run, name: str) -> list[int]:
    (tmp_path / "helpers.py").write_text(_DEVICE_HELPERS.format(name=name))
    return _lines(tmp_path, run, _CACHED_FEATURES.format(name=name))


def test_a_local_master_test_of_the_current_device_is_a_rank_zero_guard(tmp_path, run):
    """A predicate named for the (local) main process whose body compares the current CUDA device
    with 0, the device the usual set-up binds to the local rank: its body says no less than its
    name, which decides, as a `local_rank == 0` test does."""
    assert _device_helper_lines(tmp_path, run, "is_local_master") == []


def test_a_current_device_test_of_any_other_name_guards_nothing(tmp_path, run):
    assert _device_helper_lines(tmp_path, run, "should_write") == [13]
