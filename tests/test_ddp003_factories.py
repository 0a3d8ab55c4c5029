"""DDP003 across modules: a loader and its shuffling sampler made by a project factory.

The epoch loop of one module trains over a DataLoader that another module's builder makes,
drawing from a DistributedSampler subclass of the project. A subclass that keeps torch's
epoch-seeded order (no `__iter__` of its own, or one seeded with `self.epoch`) repeats epoch
0's order without set_epoch; one whose `__iter__` shuffles without the epoch does not.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>DDP\d{3}) (?P<message>.*)$")

_SAMPLERS = '''\
import random

import torch
from torch.utils.data import DistributedSampler as _DistributedSampler


class DistributedSampler(_DistributedSampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, round_up=True):
        super().__init__(dataset, num_replicas=num_replicas, rank=rank)
        self.shuffle = shuffle
        self.round_up = round_up

    def __iter__(self):
{body}
'''

_SEEDED = '''\
        g = torch.Generator()
        g.manual_seed(self.epoch)
        indices = torch.randperm(len(self.dataset), generator=g).tolist()
        return iter(indices[self.rank:self.total_size:self.num_replicas])'''

_UNSEEDED = '''\
        indices = list(range(len(self.dataset)))
        random.shuffle(indices)
        return iter(indices[self.rank:self.total_size:self.num_replicas])'''

_BUILDER = '''\
from torch.utils.data import DataLoader

from data.samplers import DistributedSampler


def build_dataloader(dataset, samples_per_gpu, dist=True, shuffle=True, **kwargs):
    if dist:
        sampler = DistributedSampler(dataset, None, None, shuffle=shuffle)
        shuffle = False
    else:
        sampler = None
    # `**kwargs` cannot carry a second `sampler=`: the loader draws from this one
    return DataLoader(dataset, batch_size=samples_per_gpu, sampler=sampler, shuffle=shuffle, **kwargs)
'''

_TRAINER = '''\
import torch.distributed as dist

from data.loader import build_dataloader


class Trainer:
    def train(self, dataset, epochs):
        dist.init_process_group("nccl")
        loader = build_dataloader(dataset, 8, dist=True, shuffle=True, drop_last=True)
        for epoch in range(epochs):
            for batch in loader:
                self.model(batch).backward()
                self.optimizer.step()
'''


def _findings(output: str) -> list[tuple[str, int, str]]:
    found = []
    for line in output.splitlines():
        match = _LINE.match(line)
        if match:
            found.append((match["path"].replace("\\", "/").removeprefix("./"), int(match["line"]), match["code"]))
    return sorted(found)


def _project(tmp_path, body: str) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text("")
    (tmp_path / "data" / "samplers.py").write_text(_SAMPLERS.format(body=body))
    (tmp_path / "data" / "loader.py").write_text(_BUILDER)
    (tmp_path / "trainer.py").write_text(_TRAINER)


def test_a_project_subclass_seeded_with_the_epoch_repeats_its_order_without_set_epoch(tmp_path, run):
    """The builder's loader draws from the project's DistributedSampler subclass, whose
    `__iter__` seeds its permutation with `self.epoch`: the epoch loop never sets it."""
    _project(tmp_path, _SEEDED)
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
    assert found == [("trainer.py", 10, "DDP003")], found


def test_a_project_subclass_that_inherits_iter_repeats_its_order_without_set_epoch(tmp_path, run):
    """No `__iter__` of its own: torch's, seeded with seed + epoch."""
    _project(tmp_path, "        return super().__iter__()")
    (tmp_path / "data" / "samplers.py").write_text(
        (tmp_path / "data" / "samplers.py").read_text().replace("    def __iter__(self):\n        return super().__iter__()\n", "")
    )
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
    assert found == [("trainer.py", 10, "DDP003")], found


def test_a_project_subclass_that_shuffles_without_the_epoch_is_not_reported(tmp_path, run):
    """`random.shuffle` in its own `__iter__`: a new order every pass, set_epoch or not."""
    _project(tmp_path, _UNSEEDED)
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []


_FACTORY = '''\
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def train(train_loader, model, optimizer, epoch):
    for images, target in train_loader:
        model(images, target).backward()
        optimizer.step()


class DataloaderFactory(object):
    cifar10 = 1
    imagenet = 5

    def __init__(self, args):
        self.args = args

    def product_train_val_loader(self, data_type):
        args = self.args
        train_loader = None
        val_loader = None
        if data_type == self.imagenet:
            sampler = DistributedSampler(args.imagenet) if args.distributed else None
            train_loader = DataLoader(args.imagenet, shuffle=sampler is None, sampler=sampler)
            return train_loader, val_loader, sampler
        if data_type == self.cifar10:
            if args.distributed:
                train_sampler = DistributedSampler(args.cifar)
            else:
                train_sampler = None
            train_loader = DataLoader(args.cifar, shuffle=(train_sampler is None), sampler=train_sampler)
            val_loader = DataLoader(args.cifar_val, shuffle=False)
        return train_loader, val_loader
'''

_MAIN = '''\
import torch.distributed as dist
import torch.multiprocessing as mp
from examples import *


def main_worker(gpu, args, model, optimizer):
    dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)
    df = DataloaderFactory(args)
    train_loader, val_loader = df.product_train_val_loader(df.cifar10)
    for epoch in range(args.start_epoch, args.epochs):
        train(train_loader, model, optimizer, epoch)


def main(args, model, optimizer):
    mp.spawn(main_worker, nprocs=2, args=(args, model, optimizer))
'''


def test_a_loader_from_a_method_of_a_star_imported_factory_class_is_followed_into_the_epoch_loop(tmp_path, run):
    """`from examples import *` binds DataloaderFactory; its method returns the loader drawing
    from a shuffling DistributedSampler, and the epoch loop hands it to train() (a pass that
    trains) without set_epoch. Unpacked into two names, the call gets the two-item return (the
    CIFAR-10 sampler), never the three-item one."""
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "__init__.py").write_text(_FACTORY)
    (tmp_path / "examples" / "main.py").write_text(_MAIN)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
    assert _findings(output) == [("examples/main.py", 10, "DDP003")], output
    assert "sampler built in examples/__init__.py:29" in output, output

