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



_BATCHING_BUILDER = '''\
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler, SequentialSampler


def build_sampler(args, dataset, split):
    if split == "train":
        if args.distributed:
            sampler = DistributedSampler(dataset, shuffle={shuffle}, drop_last=True)
        else:
            sampler = RandomSampler(dataset)
        batch_sampler = BatchSampler(sampler, args.batch_size, drop_last=True)
    else:
        if args.distributed:
            sampler = DistributedSampler(dataset, shuffle=False)
        else:
            sampler = SequentialSampler(dataset)
        batch_sampler = BatchSampler(sampler, args.eval_batch_size, drop_last=False)
    return batch_sampler


def build_dataloader(args, dataset, split):
    batch_sampler = build_sampler(args, dataset, split)
    return DataLoader(dataset, batch_sampler=batch_sampler, num_workers=args.num_workers)
'''

_BATCHING_ENGINE = '''\
import torch


def train_one_epoch(model, data_loader, optimizer):
    for images, targets in data_loader:
        model(images, targets).backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, data_loader):
    return [model(images) for images, _ in data_loader]
'''

_BATCHING_MAIN = '''\
import torch.distributed as dist

from builder import build_dataloader
from engine import evaluate, train_one_epoch


def main(args, train_set, val_set, model, optimizer):
    dist.init_process_group("nccl")
    train_loader = build_dataloader(args, train_set, "train")
    val_loader = build_dataloader(args, val_set, "val")
    for epoch in range(args.epochs):
        if args.distributed and hasattr({loader}.sampler, "set_epoch"):
            {loader}.sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, optimizer)
        evaluate(model, val_loader)
'''


def _batching_project(tmp_path, shuffle: str = "True", loader: str = "train_loader") -> None:
    (tmp_path / "builder.py").write_text(_BATCHING_BUILDER.format(shuffle=shuffle))
    (tmp_path / "engine.py").write_text(_BATCHING_ENGINE)
    (tmp_path / "main.py").write_text(_BATCHING_MAIN.format(loader=loader))


def test_set_epoch_on_loader_sampler_misses_a_sampler_a_helper_hands_through_batch_sampler(tmp_path, run):
    """build_sampler returns a BatchSampler over a shuffling DistributedSampler, and
    build_dataloader hands it to its DataLoader as `batch_sampler=`: the loader's own `sampler`
    is then the SequentialSampler DataLoader makes, which has no set_epoch, so the guarded
    `train_loader.sampler.set_epoch(epoch)` never runs and every epoch repeats epoch 0's order.
    The sampler is `train_loader.batch_sampler.sampler`; not in every run (a RandomSampler
    when not distributed): no fix."""
    _batching_project(tmp_path)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
    assert _findings(output) == [("main.py", 11, "DDP003")], output
    assert "never gets set_epoch() in this epoch loop" in output and "sampler built in builder.py:7" in output, output
    assert "`train_loader.sampler.set_epoch()` reaches the loader's own SequentialSampler" in output, output
    assert "[fix]" not in output, output


def test_set_epoch_through_the_batch_sampler_reaches_a_sampler_a_helper_batches(tmp_path, run):
    """`train_loader.batch_sampler.sampler.set_epoch(epoch)` reaches it: nothing to report."""
    _batching_project(tmp_path, loader="train_loader.batch_sampler")
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []


def test_a_helper_batching_a_sampler_that_does_not_shuffle_is_not_reported(tmp_path, run):
    """The training DistributedSampler is made with shuffle=False: no order to repeat."""
    _batching_project(tmp_path, shuffle="False")
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []


_GLOBAL_SAMPLER_FITTER = '''\
import torch


class Fitter:
    def __init__(self, model, config):
        self.model = model
        self.config = config
        self.optimizer = torch.optim.AdamW(model.parameters())

    def fit(self, train_loader, validation_loader):
        for e in range(self.config.n_epochs):
{set_epoch}            self.train_one_epoch(train_loader)
            self.validation(validation_loader)

    def validation(self, val_loader):
        with torch.no_grad():
            for images, targets in val_loader:
                self.model(images)

    def train_one_epoch(self, train_loader):
        for step, (images, targets) in enumerate(train_loader):
            self.model(images, targets).backward()
            self.optimizer.step()
'''

_GLOBAL_SAMPLER_SCRIPT = '''\
import os

import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from fitter import Fitter

dist.init_process_group("gloo", rank=int(os.environ["SLURM_PROCID"]), world_size=int(os.environ["SLURM_NTASKS"]))
train_sampler = DistributedSampler(train_dataset{shuffle})
val_sampler = DistributedSampler(valid_dataset)
{rebound}

def run_training():
    train_loader = DataLoader(train_dataset, batch_size=8, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(valid_dataset, batch_size=8, shuffle=False, sampler=val_sampler)
    fitter = Fitter(model=net, config=Config)
    fitter.fit(train_loader, val_loader)


run_training()
'''


def _global_sampler_project(tmp_path, set_epoch: str = "", shuffle: str = "", rebound: str = "") -> None:
    (tmp_path / "fitter.py").write_text(_GLOBAL_SAMPLER_FITTER.format(set_epoch=set_epoch))
    (tmp_path / "train.py").write_text(_GLOBAL_SAMPLER_SCRIPT.format(shuffle=shuffle, rebound=rebound))


def test_a_module_level_sampler_reaches_the_epoch_loop_a_function_hands_its_loader_to(tmp_path, run):
    """The script makes the shuffling DistributedSampler at module level; run_training builds
    the DataLoader over that global and hands it to Fitter.fit (another module), whose epoch
    loop trains one pass per epoch through train_one_epoch without set_epoch. The validation
    sampler's loader is only evaluated: its order does not matter."""
    _global_sampler_project(tmp_path)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
    assert _findings(output) == [("fitter.py", 11, "DDP003")], output
    assert "sampler built in train.py:10" in output, output


def test_a_module_level_sampler_in_the_same_file_as_the_epoch_loop_is_followed(tmp_path, run):
    """As above, with Fitter in the script itself (`fitter = Fitter(...)`, `fitter.fit(...)`)."""
    _global_sampler_project(tmp_path)
    script = (tmp_path / "train.py").read_text().replace("from fitter import Fitter\n", "")
    fitter = (tmp_path / "fitter.py").read_text().replace("import torch\n", "")
    (tmp_path / "fitter.py").unlink()
    (tmp_path / "train.py").write_text("import torch\n" + fitter + script)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
    assert _findings(output) == [("train.py", 11, "DDP003")], output


def test_a_module_level_sampler_that_gets_its_epoch_or_does_not_shuffle_is_not_reported(tmp_path, run):
    """The epoch loop sets the global sampler's epoch; or the sampler does not shuffle; or the
    module binds the name twice (which binding a function reads is not shown): silent."""
    run.cwd = tmp_path
    for variant in (
        {"set_epoch": "            train_sampler.set_epoch(e)\n"},
        {"shuffle": ", shuffle=False"},
        {"rebound": "if os.environ.get('SINGLE'):\n    train_sampler = None\n"},
    ):
        _global_sampler_project(tmp_path, **variant)
        found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
        assert found == [], (variant, found)


_EPISODES = '''\
import numpy as np
from torch.utils.data import Dataset


class EpisodeDataset(Dataset):
    """Draws a fresh random episode on every access: the index it is given is never read."""

    def __init__(self, classes, episodes):
        self.classes, self.episodes = classes, episodes

    def __len__(self):
        return self.episodes

    def __getitem__(self, idx):
        chosen = np.random.choice(self.classes, 5, replace=False)
        return chosen, np.arange(5)


class ResampledEpisodes(EpisodeDataset):
    pass


class IndexedDataset(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]
'''

_EPISODE_LOADERS = '''\
import torch
from torch.utils.data import DataLoader

from data.episodes import EpisodeDataset, IndexedDataset, ResampledEpisodes


def get_sets(args):
    if args.dataset == "meta":
        if args.eval:
            train_set = None
        else:
            train_set = ResampledEpisodes(args.classes, 1000)
        return train_set, IndexedDataset(args.val)
    train_set = {other}
    return train_set, IndexedDataset(args.val)


def get_loaders(args):
    if args.eval:
        _, val_set = get_sets(args)
    else:
        train_set, val_set = get_sets(args)
    if args.distributed:
        sampler = torch.utils.data.DistributedSampler(train_set, shuffle=True)
    else:
        sampler = torch.utils.data.RandomSampler(train_set)
    return DataLoader(train_set, batch_size=8, sampler=sampler, drop_last=True)
'''

_EPISODE_ENGINE = '''\
def train_one_epoch(loader, model, optimizer):
    for support, query in loader:
        model(support, query).backward()
        optimizer.step()
'''

_EPISODE_MAIN = '''\
import torch.distributed as dist

from data.loaders import get_loaders
from engine import train_one_epoch


def main(args, model, optimizer):
    dist.init_process_group("nccl")
    loader = get_loaders(args)
    for epoch in range(args.epochs):
        train_one_epoch(loader, model, optimizer)
'''


def _episode_project(tmp_path, other: str) -> None:
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "__init__.py").write_text("")
    (tmp_path / "data" / "episodes.py").write_text(_EPISODES)
    (tmp_path / "data" / "loaders.py").write_text(_EPISODE_LOADERS.format(other=other))
    (tmp_path / "engine.py").write_text(_EPISODE_ENGINE)
    (tmp_path / "main.py").write_text(_EPISODE_MAIN)


def test_a_sampler_over_datasets_that_never_read_the_index_repeats_no_data(tmp_path, run):
    """Every dataset the builder's sampler can shard (each way of get_sets) draws a random
    episode in `__getitem__` and never reads the index (one inherits it from a project base):
    the order the sampler hands out changes nothing drawn, so a missing set_epoch repeats no
    data. A way that binds no dataset (`None`, `eval`) is no dataset the sampler shards."""
    _episode_project(tmp_path, "EpisodeDataset(args.classes, 500)")
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
    assert _findings(output) == [], output


def test_a_sampler_over_a_dataset_that_reads_the_index_or_is_unknown_still_repeats_its_order(tmp_path, run):
    """One way of get_sets makes a dataset whose `__getitem__` reads the index, or a library's
    dataset the project cannot show: the order matters there, and the epoch loop is reported."""
    run.cwd = tmp_path
    for other in ("IndexedDataset(args.train)", "torchvision.datasets.ImageFolder(args.root)"):
        _episode_project(tmp_path, other)
        if other.startswith("torchvision"):
            loaders = tmp_path / "data" / "loaders.py"
            loaders.write_text("import torchvision\n" + loaders.read_text())
        output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
        assert _findings(output) == [("main.py", 10, "DDP003")], (other, output)


_LOCAL_EPISODES = '''\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from data.episodes import {cls}


def main(args, model, optimizer):
    dist.init_process_group("nccl")
    dataset = {cls}(args.classes)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    for epoch in range(args.epochs):
        for support, query in loader:
            model(support, query).backward()
            optimizer.step()
'''


def test_a_sampler_made_beside_the_epoch_loop_follows_its_dataset_class_too(tmp_path, run):
    """The sampler and the loop in one function; the dataset's class in another module: an
    EpisodeDataset never reads the index (silent), an IndexedDataset does (reported)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text("")
    (tmp_path / "data" / "episodes.py").write_text(_EPISODES)
    run.cwd = tmp_path
    for cls, expected in (("EpisodeDataset", []), ("IndexedDataset", [("main.py", 12, "DDP003")])):
        (tmp_path / "main.py").write_text(_LOCAL_EPISODES.format(cls=cls))
        output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
        assert _findings(output) == expected, (cls, output)


_FITTER = '''\
class Fitter:
    def __init__(self, model):
        self.model = model

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for batch in loader:
                self.model(batch).backward()
'''


def test_a_loader_handed_to_another_module_follows_its_dataset_class_too(tmp_path, run):
    """The loader is handed to a method of another module that runs the epoch loop: silent
    over an EpisodeDataset, reported over an IndexedDataset."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text("")
    (tmp_path / "data" / "episodes.py").write_text(_EPISODES)
    (tmp_path / "fitter.py").write_text(_FITTER)
    run.cwd = tmp_path
    for cls, expected in (("EpisodeDataset", []), ("IndexedDataset", [("fitter.py", 6, "DDP003")])):
        script = _LOCAL_EPISODES.format(cls=cls).split("    for epoch")[0]
        script += "    Fitter(model).fit(loader, args.epochs)\n"
        (tmp_path / "main.py").write_text("from fitter import Fitter\n" + script)
        output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
        assert _findings(output) == expected, (cls, output)


_NONE_TRAINER = '''\
class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def train(self, epochs, train_loader, train_sampler{default}):
        for epoch in range(epochs):
            if train_sampler is not None:
                train_sampler.set_epoch(epoch)
            for batch in train_loader:
                self.model(batch).backward()
                self.optimizer.step()
'''

_NONE_MAIN = '''\
import torch
import torch.distributed as dist

from trainer import Trainer


def main(args, dataset, model, optimizer):
    dist.init_process_group("nccl")
    train_sampler = torch.utils.data.distributed.DistributedSampler(dataset)
    train_loader = torch.utils.data.DataLoader(dataset, batch_size=8, sampler=train_sampler)
    trainer = Trainer(model, optimizer)
    trainer.train({arguments})
'''


def test_a_set_epoch_on_a_parameter_every_call_passes_none_sets_no_epoch(tmp_path, run):
    """The trainer guards `train_sampler.set_epoch(epoch)` with `is not None`, and the only call
    passes None for it (or leaves it to its default None): set_epoch never runs, and the
    loader's DistributedSampler repeats its order every epoch. The finding names that call."""
    run.cwd = tmp_path
    for default, arguments in (("", "args.epochs, train_loader, None"), ("=None", "args.epochs, train_loader")):
        (tmp_path / "trainer.py").write_text(_NONE_TRAINER.format(default=default))
        (tmp_path / "main.py").write_text(_NONE_MAIN.format(arguments=arguments))
        output = run("check", "--no-cache", "--select", "DDP003", "--output-format", "full", ".").stdout
        assert _findings(output) == [("trainer.py", 6, "DDP003")], (arguments, output)
        named = "`train_sampler.set_epoch()` is on a parameter every call of Trainer.train() passes None"
        assert named in output, output


def test_a_set_epoch_on_a_parameter_a_call_passes_the_sampler_is_kept(tmp_path, run):
    """A call passes the sampler (alone, or beside another that passes None): the set_epoch may
    run on it, and nothing is reported."""
    run.cwd = tmp_path
    (tmp_path / "trainer.py").write_text(_NONE_TRAINER.format(default="=None"))
    both = "args.epochs, train_loader, train_sampler)\n    trainer.train(1, train_loader"
    for arguments in ("args.epochs, train_loader, train_sampler", both):
        (tmp_path / "main.py").write_text(_NONE_MAIN.format(arguments=arguments))
        output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
        assert _findings(output) == [], (arguments, output)


def test_a_set_epoch_on_a_parameter_passed_none_in_the_same_module_sets_no_epoch(tmp_path, run):
    """As above with the trainer in the script itself (the epoch loop and the call in one module)."""
    run.cwd = tmp_path
    trainer = _NONE_TRAINER.format(default="")
    main = _NONE_MAIN.format(arguments="args.epochs, train_loader, None").replace("from trainer import Trainer\n", "")
    (tmp_path / "train.py").write_text(main + "\n\n" + trainer)
    output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
    assert _findings(output) == [("train.py", 19, "DDP003")], output


_GRAPH_BUILDER = '''\
from torch.utils.data import DistributedSampler
from torch_geometric.loader import DenseDataLoader


def build(graphs, **kwargs):
    return DenseDataLoader(graphs, 16, sampler=DistributedSampler(graphs, shuffle={shuffle}), **kwargs)
'''

_GRAPH_TRAINER = '''\
import torch.distributed as dist

from data.graphs import build


def train(model, optimizer, graphs, epochs):
    dist.init_process_group("nccl")
    loader = build(graphs, drop_last=True)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
'''


def _graph_project(tmp_path, shuffle: str) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text("")
    (tmp_path / "data" / "graphs.py").write_text(_GRAPH_BUILDER.format(shuffle=shuffle))
    (tmp_path / "train.py").write_text(_GRAPH_TRAINER)


def test_a_graph_loader_a_helper_of_another_module_builds_draws_from_its_sampler(tmp_path, run):
    """PyTorch Geometric's DenseDataLoader is a torch DataLoader: it hands its `sampler=` on,
    and the helper's `**kwargs` cannot carry a second one."""
    _graph_project(tmp_path, "True")
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
    assert found == [("train.py", 9, "DDP003")], found


def test_a_graph_loader_over_a_sampler_that_does_not_shuffle_is_not_reported(tmp_path, run):
    _graph_project(tmp_path, "False")
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []


# A plain Sampler written as the distributed one: not a DistributedSampler subclass, but it
# keeps the epoch, seeds its shuffle from it and learns it only from set_epoch().
_EPOCH_SHAPED = '''\
import math

import torch
from torch.utils.data import Sampler


class ShardShuffler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True):
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.shuffle = shuffle

    def __iter__(self):
{body}

    def __len__(self):
        return len(self.dataset)

    def set_epoch(self, epoch):
        self.epoch = epoch
'''

_EPOCH_SEEDED_ITER = '''\
        g = torch.Generator()
        g.manual_seed(self.epoch)
        if self.shuffle:
            return iter(torch.randperm(len(self.dataset), generator=g).tolist())
        return iter(range(len(self.dataset)))'''

_SHAPED_BUILDER = '''\
from torch.utils.data import DataLoader

from data.samplers import ShardShuffler


def build_loader(args, dataset):
    sampler = ShardShuffler(dataset, rank=args.rank, num_replicas=args.world_size, shuffle={shuffle})
    return DataLoader(dataset, batch_size=64, sampler=sampler)
'''

_SHAPED_TRAINER = '''\
import torch.distributed as dist
import torch.multiprocessing as mp

from data.loader import build_loader


def train_one_epoch(loader, model, optimizer):
    for images, target in loader:
        model(images, target).backward()
        optimizer.step()


def worker(rank, args, dataset, model, optimizer):
    dist.init_process_group("nccl", rank=rank, world_size=args.world_size)
    loader = build_loader(args, dataset)
    for epoch in range(args.start_epoch, args.epochs):
{set_epoch}        train_one_epoch(loader, model, optimizer)


def main(args, dataset, model, optimizer):
    mp.spawn(worker, nprocs=8, args=(args, dataset, model, optimizer))
'''


def _shaped_project(tmp_path, body: str = _EPOCH_SEEDED_ITER, shuffle: str = "True", set_epoch: str = "") -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text("")
    (tmp_path / "data" / "samplers.py").write_text(_EPOCH_SHAPED.format(body=body))
    (tmp_path / "data" / "loader.py").write_text(_SHAPED_BUILDER.format(shuffle=shuffle))
    (tmp_path / "trainer.py").write_text(_SHAPED_TRAINER.format(set_epoch=set_epoch))


def test_a_plain_sampler_seeded_from_the_epoch_set_epoch_stores_repeats_its_order_without_set_epoch(tmp_path, run):
    """Not a DistributedSampler subclass, but the same pitfall: set_epoch() stores the epoch and
    `__iter__` seeds its generator from it, so an epoch loop that never calls set_epoch replays
    epoch 0's permutation every epoch."""
    _shaped_project(tmp_path)
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
    assert found == [("trainer.py", 16, "DDP003")], found


def test_a_plain_sampler_seeded_from_the_epoch_is_not_reported_where_set_epoch_is_called_or_it_does_not_shuffle(tmp_path, run):
    _shaped_project(tmp_path, set_epoch="        loader.sampler.set_epoch(epoch)\n")
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []
    other = tmp_path / "other"
    other.mkdir()
    _shaped_project(other, shuffle="False")
    run.cwd = other
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []


def test_a_plain_sampler_whose_iter_does_not_seed_from_the_epoch_is_not_reported(tmp_path, run):
    """A set_epoch() that stores the epoch is not enough: an `__iter__` that shuffles with the
    process's generator draws a new order every pass."""
    unseeded = '''\
        order = torch.randperm(len(self.dataset)).tolist()
        return iter(order)'''
    _shaped_project(tmp_path, body=unseeded)
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []


# Builders that fill lists in step with the lists they are handed: the i-th sampler is made
# with the i-th `shuffle`, the i-th loader draws from the i-th sampler.
_ZIP_BUILDERS = '''\
import torch
from torch.utils.data import DataLoader


def make_samplers(datasets, shuffles, world_size, rank):
    samplers = []
    for dataset, shuffle in zip(datasets, shuffles):
        samplers.append(torch.utils.data.DistributedSampler(dataset, world_size, rank, shuffle))
    return samplers


def make_loaders(datasets, samplers, batch_sizes):
    loaders = []
    for dataset, sampler, batch_size in zip(datasets, samplers, batch_sizes):
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=sampler is None)
        loaders.append(loader)
    if len(loaders) < len(datasets):
        print("fewer loaders than datasets")
    return loaders
'''

_LOGGED = '''\
import time


def log_every(iterable, print_freq):
    iterator = iter(iterable)
    start = time.time()
    for step in range(len(iterable)):
        yield next(iterator)
        if step % print_freq == 0:
            print(step, time.time() - start)
'''

_ZIP_MAIN = '''\
import torch.distributed as dist

from data.builders import make_loaders, make_samplers
from logs import log_every


def saliency(model, loader):
    maps = []
    for images, texts in log_every(loader, 50):
        score = model(images, texts).sum()
        model.zero_grad()
        score.backward()
        maps.append(model.attention_gradients())
    return maps


def train_epoch(model, loader, optimizer):
    for images, texts in loader:
        model(images, texts).sum().backward()
        optimizer.step()


def main(args, model, optimizer, train_set, test_set):
    dist.init_process_group("nccl")
    if args.evaluate:
        samplers = make_samplers([test_set], [False], dist.get_world_size(), dist.get_rank())
        test_loader = make_loaders([test_set], samplers, [32])[0]
        return saliency(model, test_loader)
    samplers = make_samplers([train_set, test_set], {shuffles}, dist.get_world_size(), dist.get_rank())
    train_loader, test_loader = make_loaders([train_set, test_set], samplers, [32, 32])
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        train_epoch(model, train_loader, optimizer)
        saliency(model, test_loader)
'''


def _zip_project(tmp_path, shuffles: str) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text("")
    (tmp_path / "data" / "builders.py").write_text(_ZIP_BUILDERS)
    (tmp_path / "logs.py").write_text(_LOGGED)
    (tmp_path / "main.py").write_text(_ZIP_MAIN.format(shuffles=shuffles))


def test_a_loader_at_a_position_whose_sampler_is_made_with_shuffle_false_is_not_reported(tmp_path, run):
    """`make_samplers(sets, [True, False], ...)` fills its list in step with `shuffles`, and
    `make_loaders` its own in step with `samplers`: the test loader (position 1) draws from a
    sampler made with shuffle=False, whose order is the same every epoch by design. The train
    loader gets set_epoch; the pass over the test loader (a backward that trains nothing, but
    a backward) repeats no shuffled order."""
    _zip_project(tmp_path, "[True, False]")
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []


def test_a_loader_at_a_position_whose_sampler_shuffles_is_still_reported(tmp_path, run):
    _zip_project(tmp_path, "[True, True]")
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) != []


def _shaped_episode_project(tmp_path, other: str) -> None:
    """The episode project, its loader drawing from the plain Sampler shaped as DistributedSampler."""
    _episode_project(tmp_path, other)
    (tmp_path / "data" / "samplers.py").write_text(_EPOCH_SHAPED.format(body=_EPOCH_SEEDED_ITER))
    loaders = (tmp_path / "data" / "loaders.py").read_text()
    loaders = loaders.replace("torch.utils.data.DistributedSampler(train_set, shuffle=True)", "ShardShuffler(train_set, shuffle=True)")
    (tmp_path / "data" / "loaders.py").write_text("from data.samplers import ShardShuffler\n" + loaders)


def test_a_plain_sampler_seeded_from_the_epoch_over_datasets_that_never_read_the_index_repeats_no_data(tmp_path, run):
    """As for a DistributedSampler: where every dataset it may shard ignores the index, the
    order it repeats picks no data; where one reads it, the finding stays."""
    _shaped_episode_project(tmp_path, "EpisodeDataset(args.classes, 500)")
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []
    other = tmp_path / "other"
    other.mkdir()
    _shaped_episode_project(other, "IndexedDataset(args.train)")
    run.cwd = other
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == [("main.py", 10, "DDP003")]


_EPOCH_SAMPLER = '''\
import torch
import torch.distributed as dist
from torch.utils.data.sampler import Sampler


class DistributedSampler(Sampler):
    def __init__(self, dataset, shuffle=True, epoch=0):
        self.dataset = dataset
        self.rank, self.num_replicas = dist.get_rank(), dist.get_world_size()
        self.epoch = epoch
        self.shuffle = shuffle

    def __iter__(self):
        g = torch.Generator()
        g.manual_seed(self.epoch)
        indices = torch.randperm(len(self.dataset), generator=g).tolist()
        return iter(indices[self.rank::self.num_replicas])

    def __len__(self):
        return len(self.dataset) // self.num_replicas

    def set_epoch(self, epoch):
        self.epoch = epoch
'''

_EPOCH_BUILDER = '''\
import torch

import samplers
from config import cfg


def load_train(distributed, epoch, dataset):
    sampler = samplers.DistributedSampler(dataset, epoch={epoch}) if distributed else None
    return torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=sampler is None, sampler=sampler)
'''

_EPOCH_TRAINER = '''\
import torch.distributed as dist

import data_loader


class Trainer:
    def __init__(self, dataset):
        dist.init_process_group("nccl")
        self.dataset = dataset

    def setup_loader(self, epoch):
        self.training_loader = data_loader.load_train(True, epoch, self.dataset)

    def train(self, epochs):
{before}        for epoch in range(epochs):
{inside}            for step, batch in enumerate(self.training_loader):
                self.model(batch).backward()
                self.optimizer.step()
'''


def test_a_sampler_rebuilt_each_epoch_with_the_epoch_in_its_constructor_is_not_reported(tmp_path, run):
    """The epoch loop rebuilds the loader each pass (`self.setup_loader(epoch)` stores a new
    one), and the builder hands the epoch to the constructor of the project's sampler, which
    stores it on the attribute its `__iter__` seeds the shuffle with: each epoch draws a new
    order without set_epoch (JDAI-CV/image-captioning's `load_train`). Reported: the loader built once before the loop (epoch 0's order
    every epoch), and a loader rebuilt each pass whose sampler is given a literal epoch or a
    setting (`cfg.start_epoch`: the same every pass) rather than the builder's parameter."""
    (tmp_path / "samplers.py").write_text(_EPOCH_SAMPLER)
    run.cwd = tmp_path
    for epoch, before, inside, reported in (
        ("epoch", "", "            self.setup_loader(epoch)\n", False),
        ("epoch", "        self.setup_loader(0)\n", "", True),
        ("0", "", "            self.setup_loader(epoch)\n", True),
        ("cfg.start_epoch", "", "            self.setup_loader(epoch)\n", True),
    ):
        (tmp_path / "data_loader.py").write_text(_EPOCH_BUILDER.format(epoch=epoch))
        (tmp_path / "trainer.py").write_text(_EPOCH_TRAINER.format(before=before, inside=inside))
        found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
        assert [code for _, _, code in found] == (["DDP003"] if reported else []), (epoch, before, inside, found)
