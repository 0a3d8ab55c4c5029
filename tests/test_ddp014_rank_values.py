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


_DEVICE_OR_RANK = '''\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def is_main_device(device):
    return {test}


def train_one_epoch(model, device, args):
    if is_main_device(device):
        torch.save(model.state_dict(), "ckpt.pt")


def report(device, queue):
    if is_main_device(device):
        print(queue.get())


def run_training_process(rank, world_size, args):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    train_one_epoch(torch.nn.Linear(2, 2).cuda(rank), rank, args)


def main(args):
    if args.distributed_training:
        mp.spawn(run_training_process, args=(args.distributed_training, args), nprocs=args.distributed_training)
    else:
        run_training_process(0, 1, args)
'''


def test_a_rank_is_no_device_so_a_helper_true_for_a_device_or_rank_zero_guards(tmp_path, run):
    """DenseTNT's `is_main_device(device)`: `isinstance(device, torch.device) or device == 0`,
    called with the spawn index: a rank is an int, never a torch.device, so in a distributed run
    the helper is true on rank 0 alone."""
    assert _lines(tmp_path, run, _DEVICE_OR_RANK.format(test="isinstance(device, torch.device) or device == 0")) == []


def test_a_rank_helper_is_read_with_what_each_call_passes(tmp_path, run):
    """`report(device, ...)`, which nothing calls, passes the helper a `device` nothing is known
    of; the call in `train_one_epoch` passes the rank, so there the helper is a rank-0 test."""
    assert _lines(tmp_path, run, _DEVICE_OR_RANK.format(test="device == 0")) == []


def test_a_helper_true_for_an_int_or_rank_zero_guards_nothing(tmp_path, run):
    assert _lines(tmp_path, run, _DEVICE_OR_RANK.format(test="isinstance(device, int) or device == 0")) == [12]


_MEMBERSHIP = '''\
import torch
import torch.distributed as dist


def train(model, gpu_id, epochs):
    for epoch in range(epochs):
        if gpu_id in {members} and epoch % 5 == 0:
            torch.save(model.state_dict(), "ckpt.pt")


def main():
    dist.init_process_group("nccl")
    train(torch.nn.Linear(2, 2), dist.get_rank(), 10)
'''


def test_a_device_name_beside_zero_in_a_membership_test_leaves_rank_zero(tmp_path, run):
    """`gpu_id in {'cpu', 0}` with gpu_id the rank: no rank of a distributed run is the string
    'cpu', so only rank 0 saves."""
    assert _lines(tmp_path, run, _MEMBERSHIP.format(members="{'cpu', 0}")) == []


def test_a_membership_test_of_another_rank_too_guards_nothing(tmp_path, run):
    assert _lines(tmp_path, run, _MEMBERSHIP.format(members="{'cpu', 0, 1}")) == [8]
