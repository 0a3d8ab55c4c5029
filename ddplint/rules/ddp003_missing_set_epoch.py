from __future__ import annotations

import ast
from dataclasses import dataclass, replace

import libcst as cst

from ddplint.analyses.samplers import Construction, Endless, EpochLoop, Function, LoaderFlow, Loop, Pass, Ref, SetEpoch
from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.core.torch_api import DATALOADER, DEEPSPEED_INITIALIZE, DISTRIBUTED_SAMPLER, LIBRARY_LOADERS, PLUGIN_LOADER
from ddplint.model import loaders
from ddplint.model.records import Attr, CallResult, Either, Element, Group, Item, Loader, Param, Place, SelfAttr
from ddplint.model.records import Through
from ddplint.model.records import Loop as SummaryLoop
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule, harm_of
from ddplint.semantic.model import dotted_name
from ddplint.semantic.walk import descendants

# The message the examples of a sampler picked at run time (a conditional, branches) expect.
_UNNAMED_SAMPLER_MESSAGE = (
    "This DistributedSampler never gets set_epoch() in this epoch loop: every epoch repeats the same "
    "shuffled order; call set_epoch(epoch) first in the loop body"
)


class MissingSetEpoch(Rule):
    """
    `DistributedSampler` shuffles with a generator seeded by `seed + epoch`, and it only learns
    the epoch from `sampler.set_epoch(epoch)`. Without that call every epoch replays the order of
    epoch 0: each rank sees the same samples in the same order every epoch, which quietly
    hurts convergence (no error is ever raised).

    Fires when a loop (the epoch loop) surrounds a pass that trains (a `backward()` runs in it,
    or in a function it calls) over a DataLoader that draws from a shuffling DistributedSampler
    — a `for` over it, directly, through a `BatchSampler`, or in a function the loop calls, or
    an `iter(loader)` (`next(iter(loader))` starts a new pass each time; an `iter()` that
    restarts the pass in `except StopIteration` inside a loop that only gathers batches, such as
    a gradient-accumulation loop, belongs to the step loop around it that trains, when that
    loop's count is shown to outlast one pass: it multiplies a `len()` by a factor other than 1,
    `total_steps = len(loader) // accumulation * num_epoch`; and where every pass of the loop
    is such a restart, in an `except` once the data runs out, and a loop around it calls
    set_epoch, nothing is reported: each restart draws the order of the epoch set there) — and no `set_epoch`
    may reach that sampler inside the loop (on the sampler, `loader.sampler`,
    `loader.batch_sampler.sampler`, or in a function the loop calls, in this module or another:
    `shuffle_dataset(loader, epoch)`). A loader given a `batch_sampler` has as its own `sampler`
    the SequentialSampler DataLoader makes, which has no set_epoch: `if hasattr(loader.sampler,
    "set_epoch"): loader.sampler.set_epoch(epoch)` never reaches the DistributedSampler inside
    the BatchSampler, and the finding names that call; so does a set_epoch on a parameter that
    every call in the project passes None, or leaves to its default None
    (`trainer.train(loader, None)` for `if train_sampler is not None:
    train_sampler.set_epoch(epoch)`): it never runs on a sampler. A pass that only evaluates is not reported (its order
    does not matter; a backward() there that only takes an input's gradient, in a function that
    reads `x.grad` of a tensor it made with `requires_grad=True` and steps no optimizer, is an
    adversarial attack or a saliency map, not training), nor a loop that builds a new sampler each pass over data the loop itself
    changes (a loop over folds or graphs); a sampler built anew each pass over the same dataset
    is (each new sampler starts again at epoch 0), unless it is handed the epoch when it is
    built: a sampler class of the project whose `__init__` stores a parameter where its
    `set_epoch` stores the epoch its order is seeded from (`self.epoch = epoch` in both), built
    by another module's builder that hands it one of its own parameters (`def load_train(...,
    epoch, ...)`: `DistributedSampler(ds, epoch=epoch)`; not a literal, nor a setting such as
    `args.start_epoch`), in a loader the epoch loop makes anew each pass (a function
    the loop calls builds it, or stores it on the `self` attribute the loop iterates:
    `self.setup_loader(epoch)`): each pass then starts from the epoch it is given. Nor is a loop `for epoch in range(args.epochs)`
    whose count is a command-line option or a yacs setting (`range(config.TRAIN.EPOCHS)`) that
    every documented run leaves at 1 or less (ProjectView.documented_values: the default where no
    command passes it and no document tells the user to set it, `--epochs 1` where every command
    passes that, `EPOCHS: 1` where every config file the commands merge says so): it makes one
    pass, and no order repeats.
    Nor is a sampler whose dataset, each way the program model follows it (made where the
    sampler is, or returned by a project function: `train_set, val_set = get_sets(args)`; a way
    that binds None leaves nothing to shard), is an object of a project class whose
    `__getitem__` never reads its index (it draws a random episode instead): the order then
    picks no data. A dataset of a library's class, or one the model cannot follow, is reported.
    Nor is a loader that is the i-th element of the list a project builder fills in step with
    the list of samplers it is handed (`train_loader, test_loader = make_loaders(sets,
    samplers)`, one `append` each pass of a loop over `zip(datasets, samplers)`), where the
    i-th sampler is made with shuffle=False (`samplers = make_samplers(sets, [True, False])`,
    whose loop makes each DistributedSampler with the `shuffle` zip pairs with its dataset):
    zip pairs the i-th elements, and a sampler that does not shuffle gives the same order
    every epoch by design, set_epoch or not.
    An endless generator that re-iterates the loader (`while True: for x in loader: yield x`)
    is an epoch loop too: each pass starts a new epoch. The sampler may come from a function
    of this module that returns it on some path and another sampler on others (`def
    data_sampler(dataset, shuffle, distributed): if distributed: return
    DistributedSampler(dataset, shuffle=shuffle)` then `return RandomSampler(dataset)`), called
    inline (`sampler=data_sampler(ds, shuffle=True, distributed=args.distributed)`) or bound to
    a name; a call passing a literal that turns its path off (`distributed=False` there, or
    `shuffle=False` for the parameter its `shuffle` is) does not get it, and the finding comes
    without a fix (in a one-process run the loader's sampler is the other one, which has no
    set_epoch). PyTorch Geometric's `DataLoader`,
    `DenseDataLoader` and `DataListLoader` are torch DataLoaders that hand their `sampler` on:
    they draw from it as torch's does. timm's `create_loader(...,
    is_training=True, distributed=...)` builds such a loader (its sampler is `loader.sampler`),
    and so does a ColossalAI booster plugin's `plugin.prepare_dataloader(dataset, ...,
    shuffle=True)` (a DistributedSampler shuffling as `shuffle` says, by default not), where the
    plugin is built in the same function (`plugin = TorchDDPPlugin()`) or is a parameter
    annotated with a plugin class (`plugin: DPPluginBase`). So does DeepSpeed's
    `engine, optimizer, loader, _ = deepspeed.initialize(..., training_data=dataset)`: under its
    launcher the DeepSpeedDataLoader draws from a shuffling DistributedSampler it keeps as
    `loader.data_sampler`, and DeepSpeed never calls its set_epoch (deepspeed 0.19.8,
    runtime/dataloader.py); it has no `sampler` nor `batch_sampler`, so a set_epoch guarded by
    `hasattr(loader, "batch_sampler")` never runs.

    With the project index, the sampler or the loader may come from a helper of another
    module that returns it, or a BatchSampler over it (`batch_sampler=build_sampler(args,
    dataset)`), alone or in a tuple (`loader, sampler = build(dataset)`, also a
    static method called through its class: `Cifar.get_loader(...)`, or a method of a factory
    object: `df.product_train_val_loader(...)`, its class star-imported); the sampler may be
    the project's own subclass of DistributedSampler whose order still comes from the epoch
    (no `__iter__` of its own, or one seeded with `self.epoch`), or any sampler class of the
    project, whatever its base and name, whose `set_epoch(self, epoch)` stores the epoch on
    self and whose `__iter__` seeds a generator from that attribute (`g.manual_seed(self.epoch)`:
    a copy of DistributedSampler on a plain Sampler, which only set_epoch moves on), not one
    that shuffles otherwise (`random.shuffle(indices)`: a new order each pass); and the
    endless generator may be defined in another module (`dl = cycle(loader)`, with `cycle`
    in `utils.py`): then the call is reported, without a fix, when no `set_epoch` of this
    module may reach the sampler. An epoch loop may also hand the loader to a function of
    another module that makes one pass over it and never calls set_epoch
    (`train_one_epoch(model, loader, ...)` in `engine.py`, iterating `loader` or
    `enumerate(logger.log_every(loader, 10))`, and using it for nothing else but `len()` and
    attribute reads), or that restarts a pass over it with `iter()` outside any loop of its own
    (a step helper refilling its iterator when the data runs out: `iters[task] =
    iter(loaders[task])`), which is reported at the outermost loop around the call, where a
    backward() runs; the loader may be one of a dict or list the builder fills
    (`loaders[task] = DataLoader(...)` in a loop). A project function or method that hands the loader back
    unchanged (`train_loader = backend.prepare_loader(loader)`, where every return of
    `prepare_loader` is its argument) keeps it the same loader. A loader may also reach the
    epoch loop on an object, across functions and modules: a parameter (`trainer.fit(loader)`),
    an attribute of `self` (`self.train_loader`), or an attribute of an object the loader was
    stored on (`args.train_loader = build_loader(...)` in `setup(args)`), and the sampler may be
    a global the script's own top-level code makes once (`train_sampler = DistributedSampler(ds)`,
    read by `run_training()`, which builds the loader and hands it to `fitter.fit(loader)`); those findings come
    without a fix (which object to call set_epoch on is the user's to say); they are reported
    only in a module that ranks are shown to run (it starts or joins the process group, a
    script that runs it does, or it shows distributed code): a one-process script that calls
    the same builder never runs a DistributedSampler.

    The fix (safe) inserts `<sampler>.set_epoch(<loop variable>)` as the first statement of
    the epoch loop. It is offered only for `for <name> in range(...)`; other loops are reported
    without a fix, since their variable may not be an epoch number; nor where the sampler
    may be absent when the loop runs (`DistributedSampler(ds) if distributed else None`, here
    or in the builder of another module, which may give its DataLoader `sampler=None` or
    another sampler in some runs): `loader.sampler` is then a RandomSampler or
    SequentialSampler, which has no set_epoch. A loader drawing through a BatchSampler has
    its sampler as `loader.batch_sampler.sampler`, a DeepSpeed loader as `loader.data_sampler`.
    """

    code = "DDP003"
    # the sampler may come from another module's builder, the loop from its endless generator;
    # a module that builds none may be handed a loader, or read one off an object
    opened_by = frozenset((ProjectFact.SAMPLER_BUILDER, ProjectFact.ENDLESS_WRAPPER, ProjectFact.HOLDS_LOADER))
    unscreened_by = frozenset((ProjectFact.HOLDS_LOADER,))
    needs_ranks = True
    name = "missing-set-epoch"
    frameworks = (Framework.DDP, Framework.DEEPSPEED, Framework.TIMM)
    message = (
        "DistributedSampler never gets set_epoch in this epoch loop: every epoch repeats the same order; "
        "call sampler.set_epoch(epoch) first"
    )
    fix = Applicability.SAFE
    # `also`: the sampler is only ever reported in a file with a loop (`for` or `while`); timm's
    # create_loader builds one inside.
    trigger = CallTrigger(DISTRIBUTED_SAMPLER | LIBRARY_LOADERS | DEEPSPEED_INITIALIZE, methods=PLUGIN_LOADER.last_names, also=("for",))

    analyses = (LoaderFlow,)

    flagged_examples = (
        Flagged(
            # The epoch count is an option whose default, 3, every run gets: the order repeats.
            """
            import argparse
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            parser = argparse.ArgumentParser()
            parser.add_argument("--num-epochs", type=int, default=3)
            args = parser.parse_args()
            dist.init_process_group("nccl")
            loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
            for epoch in range(args.num_epochs):
            ^
                for batch in loader:
                    model(batch).backward()
            """,
            fix_edits=(
                (
                    "for epoch in range(args.num_epochs):\n",
                    "for epoch in range(args.num_epochs):\n    loader.sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `loader.sampler` never gets set_epoch() in this epoch loop: every epoch repeats "
                "the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # timm's create_loader(is_training=True, distributed=...) draws from a shuffling DistributedSampler.
            """
            from timm.data import create_loader

            def main(args, dataset_train, model):
                loader_train = create_loader(dataset_train, (3, 224, 224), 128, is_training=True, distributed=True)
                for epoch in range(args.epochs):
                ^
                    for images, target in loader_train:
                        model(images, target).backward()
            """,
            fix_edits=(
                (
                    "for epoch in range(args.epochs):\n",
                    "for epoch in range(args.epochs):\n"
                    "        loader_train.sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `loader_train.sampler` never gets set_epoch() in this epoch loop: every "
                "epoch repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # PyTorch Geometric's loaders are torch DataLoaders: the sampler passed by keyword is
            # the one they draw from, also one a helper returns the loader over.
            """
            import torch.distributed as dist
            from torch.utils.data import DistributedSampler
            from torch_geometric.loader import DataLoader, DenseDataLoader

            def dense_loader(graphs):
                return DenseDataLoader(graphs, 16, sampler=DistributedSampler(graphs, shuffle=True))

            def train(model, optimizer, graphs, epochs):
                dist.init_process_group("nccl")
                sampler = DistributedSampler(graphs, shuffle=True)
                loader = DataLoader(graphs, batch_size=16, sampler=sampler)
                for epoch in range(epochs):
                ^
                    for batch in loader:
                        model(batch).sum().backward()
                        optimizer.step()
                dense = dense_loader(graphs)
                for epoch in range(epochs):
                ^
                    for batch in dense:
                        model(batch).sum().backward()
                        optimizer.step()
            """,
            fix_edits=(
                (
                    "    for epoch in range(epochs):\n        for batch in loader:\n",
                    "    for epoch in range(epochs):\n        sampler.set_epoch(epoch)\n        for batch in loader:\n",
                ),
                (
                    "    for epoch in range(epochs):\n        for batch in dense:\n",
                    "    for epoch in range(epochs):\n        dense.sampler.set_epoch(epoch)\n"
                    "        for batch in dense:\n",
                ),
            ),
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats "
                "the same shuffled order; call set_epoch(epoch) first in the loop body",
                "DistributedSampler `dense.sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body",
            ),
        ),
        Flagged(
            # A ColossalAI plugin's prepare_dataloader(..., shuffle=True) draws from a shuffling
            # DistributedSampler; a helper annotated with the plugin's class builds it too. A pass
            # over a library's wrapper bound by `with ... as` is a pass over the loader.
            """
            from colossalai.booster import Booster
            from colossalai.booster.plugin import GeminiPlugin, TorchDDPPlugin
            from colossalai.booster.plugin.dp_plugin_base import DPPluginBase
            from tqdm import tqdm

            def build_loaders(train_set, test_set, plugin: DPPluginBase):
                train = plugin.prepare_dataloader(train_set, batch_size=64, shuffle=True, drop_last=True)
                test = plugin.prepare_dataloader(test_set, batch_size=64)
                return train, test

            def train_epoch(epoch, model, optimizer, booster, train_loader):
                with tqdm(train_loader, desc=f"epoch {epoch}") as bar:
                    for inputs, labels in bar:
                        booster.backward(model(inputs, labels), optimizer)

            def main(args, train_set, test_set, model, optimizer):
                plugin = TorchDDPPlugin() if args.plugin == "ddp" else GeminiPlugin()
                booster = Booster(plugin=plugin)
                model, optimizer, *_ = booster.boost(model, optimizer)
                train_loader, test_loader = build_loaders(train_set, test_set, plugin)
                loader = plugin.prepare_dataloader(train_set, 32, True)
                for epoch in range(args.epochs):
                ^
                    train_epoch(epoch, model, optimizer, booster, train_loader)
                for epoch in range(args.epochs):
                ^
                    for inputs, labels in loader:
                        booster.backward(model(inputs, labels), optimizer)
                    for inputs, labels in test_loader:
                        model(inputs, labels)
            """,
            fix_edits=(
                (
                    "    for epoch in range(args.epochs):\n        train_epoch(",
                    "    for epoch in range(args.epochs):\n        train_loader.sampler.set_epoch(epoch)\n"
                    "        train_epoch(",
                ),
                (
                    "    for epoch in range(args.epochs):\n        for inputs, labels in loader:\n",
                    "    for epoch in range(args.epochs):\n        loader.sampler.set_epoch(epoch)\n"
                    "        for inputs, labels in loader:\n",
                ),
            ),
            messages=(
                "DistributedSampler `train_loader.sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body",
                "DistributedSampler `loader.sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body",
            ),
        ),
        Flagged(
            """
            # A `while` epoch loop is an epoch loop too; no fix: there is no epoch variable to pass.
            from torch.utils.data import DataLoader, DistributedSampler

            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, sampler=sampler)
            epoch = 0
            while epoch < args.epochs:
            ^
                for batch in loader:
                    model(batch).backward()
                epoch += 1
            """,
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats the "
                "same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            """
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler

            def main(dataset, epochs):
                sampler = DistributedSampler(dataset)
                loader = DataLoader(dataset, batch_size=32, sampler=sampler)
                for epoch in range(epochs):
                ^
                    for batch in loader:
                        model(batch).backward()
            """,
            fix_edits=(
                (
                    "for epoch in range(epochs):\n",
                    "for epoch in range(epochs):\n"
                    "        sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats the "
                "same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # The dataset's own set_epoch reaches no sampler.
            """
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler

            def main(dataset, epochs):
                sampler = DistributedSampler(dataset)
                loader = DataLoader(dataset, batch_size=32, sampler=sampler)
                for epoch in range(epochs):
                ^
                    loader.dataset.set_epoch(epoch)
                    for batch in loader:
                        model(batch).backward()
            """,
            fix_edits=(
                (
                    "for epoch in range(epochs):\n",
                    "for epoch in range(epochs):\n"
                    "        sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats the "
                "same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # The seed pattern: the loader is passed to a function that iterates it.
            """
            import torch

            def train_one_epoch(model, data_loader, optimizer):
                for images, labels in data_loader:
                    model(images, labels).backward()
                    optimizer.step()

            def main(args, dataset, model, optimizer):
                sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True)
                data_loader_train = torch.utils.data.DataLoader(dataset, sampler=sampler, batch_size=64)
                for epoch in range(args.epochs):
                ^
                    train_one_epoch(model, data_loader_train, optimizer)
            """,
            fix_edits=(
                (
                    "for epoch in range(args.epochs):\n",
                    "for epoch in range(args.epochs):\n"
                    "        sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats the "
                "same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # Attributes of a trainer; the loop calls a method that iterates self.train_loader.
            """
            import torch.utils.data as data

            class Trainer:
                def __init__(self, dataset):
                    self.train_sampler = data.distributed.DistributedSampler(dataset)
                    self.train_loader = data.DataLoader(dataset, batch_size=8, sampler=self.train_sampler)

                def train_epoch(self):
                    for step, batch in enumerate(self.train_loader):
                        self.model(batch).backward()

                def fit(self, epochs):
                    for epoch in range(epochs):
                    ^
                        self.train_epoch()
            """,
            fix_edits=(
                (
                    "for epoch in range(epochs):\n",
                    "for epoch in range(epochs):\n"
                    "            self.train_sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `self.train_sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # run_epoch() builds the sampler and trains one pass; fit() calls it once per epoch.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            class Trainer:
                def run_epoch(self, epoch):
                    sampler = DistributedSampler(self.train_dataset, shuffle=True)
                    for x, y in DataLoader(self.train_dataset, batch_size=8, sampler=sampler):
                        self.model(x, y).backward()
                        self.optimizer.step()

                def fit(self, epochs):
                    for epoch in range(epochs):
                    ^
                        self.run_epoch(epoch)
            """,
            messages=(
                "This DistributedSampler never gets set_epoch() in this epoch loop (run_epoch() builds a new one on "
                "each call, starting again at epoch 0): every epoch repeats the same shuffled order; pass the epoch to "
                "run_epoch() and call set_epoch(epoch) on its sampler before the pass"
            ),
        ),
        Flagged(
            # Built inline: only reachable as the loader's sampler.
            """
            from torch.utils.data import DataLoader, DistributedSampler as DS

            loader = DataLoader(dataset, batch_size=4, sampler=DS(dataset))
            for epoch in range(10):
            ^
                for x in loader:
                    model(x).backward()
            """,
            fix_edits=(
                (
                    "for epoch in range(10):\n",
                    "for epoch in range(10):\n"
                    "    loader.sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `loader.sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # Inside a BatchSampler; a set_epoch on another sampler does not count.
            """
            from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

            train_sampler = DistributedSampler(train_set)
            val_sampler = DistributedSampler(val_set)
            batches = BatchSampler(train_sampler, 32, drop_last=True)
            train_loader = DataLoader(train_set, batch_sampler=batches)
            for epoch in range(5):
            ^
                val_sampler.set_epoch(epoch)
                for batch in train_loader:
                    model(batch).backward()
            """,
            fix_edits=(("for epoch in range(5):\n", "for epoch in range(5):\n    train_sampler.set_epoch(epoch)\n"),),
            messages=(
                "DistributedSampler `train_sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # Given a batch_sampler, the loader's own `sampler` is the SequentialSampler DataLoader
            # makes, which has no set_epoch: the guarded call never runs.
            """
            from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

            def train(train_set, model, epochs):
                sampler = DistributedSampler(train_set, shuffle=True)
                loader = DataLoader(train_set, batch_sampler=BatchSampler(sampler, 32, drop_last=True))
                for epoch in range(epochs):
                ^
                    if hasattr(loader.sampler, "set_epoch"):
                        loader.sampler.set_epoch(epoch)
                    for batch in loader:
                        model(batch).backward()
            """,
            fix_edits=(
                (
                    "for epoch in range(epochs):\n",
                    "for epoch in range(epochs):\n        sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: `loader.sampler.set_epoch()` "
                "reaches the loader's own SequentialSampler (it draws through a batch_sampler), so every epoch repeats "
                "the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # A loader returned by a builder; not a range loop: reported without a fix.
            """
            from torch.utils import data as Data

            def build_loader(dataset):
                sampler = Data.DistributedSampler(dataset, num_replicas=2, rank=0)
                data_loader = Data.DataLoader(dataset, sampler=sampler)
                return data_loader, dataset

            def main(dataset):
                loader, _ = build_loader(dataset)
                for epoch in schedule:
                ^
                    for batch in loader:
                        model(batch).backward()
            """,
            messages=(
                "DistributedSampler `loader.sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # The `while True` of a generator that re-iterates the loader: each pass repeats.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def cycle(dl):
                while True:
                ^
                    for data in dl:
                        yield data

            def main(dataset, steps):
                dl = cycle(DataLoader(dataset, sampler=DistributedSampler(dataset)))
                for step in range(steps):
                    model(next(dl)).backward()
            """,
            messages=(
                "DistributedSampler `dl.sampler` never gets set_epoch() in this epoch loop: every epoch repeats "
                "the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # Only a DistributedSampler when distributed: set_epoch on None would fail, so no fix.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def main(args, dataset):
                sampler = DistributedSampler(dataset) if args.distributed else None
                loader = DataLoader(dataset, sampler=sampler, shuffle=sampler is None)
                for epoch in range(args.epochs):
                ^
                    for batch in loader:
                        model(batch).backward()
            """,
            messages=_UNNAMED_SAMPLER_MESSAGE,
        ),
        Flagged(
            # One sampler of four, whichever the run picks: one finding for the loop, not four.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def main(args, train_a, train_b, train_c, train_d, model):
                if args.data == "a":
                    sampler = DistributedSampler(train_a)
                elif args.data == "b":
                    sampler = DistributedSampler(train_b)
                elif args.data == "c":
                    sampler = DistributedSampler(train_c)
                else:
                    sampler = DistributedSampler(train_d)
                loader = DataLoader(train_a, batch_size=8, sampler=sampler)
                for epoch in range(args.epochs):
                ^
                    for batch in loader:
                        model(batch).backward()
            """,
            messages=_UNNAMED_SAMPLER_MESSAGE,
        ),
        Flagged(
            # A warm-up epoch loop before the training one: each loop is judged on its own, and the
            # warm-up repeats its order though the later loop sets the epoch.
            """
            from torch.utils.data import DataLoader, DistributedSampler
            from tqdm import tqdm

            def train(net, data_loader, optimizer):
                for i, (data, label) in enumerate(tqdm(data_loader, ncols=200)):
                    net(data, label).backward()
                    optimizer.step()

            def main(args, dataset, net, optimizer):
                sampler = DistributedSampler(dataset)
                loader = DataLoader(dataset, sampler=sampler)
                for epoch in range(args.warmup_epochs):
                ^
                    train(net, loader, optimizer)
                for epoch in range(args.epochs):
                    sampler.set_epoch(epoch)
                    train(net, loader, optimizer)
            """,
            fix_edits=(
                (
                    "for epoch in range(args.warmup_epochs):\n",
                    "for epoch in range(args.warmup_epochs):\n"
                    "        sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats the "
                "same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # The iterator is restarted at the end of each pass (`except StopIteration`) inside a
            # gradient-accumulation loop that only gathers batches; the step loop around it trains
            # them, for steps counted from the loader's length: each restart is a new epoch, in
            # epoch 0's order.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def main(dataset, model, optim, accumulation, epochs):
                sampler = DistributedSampler(dataset, shuffle=True)
                train_loader = DataLoader(dataset, batch_size=4, sampler=sampler)
                total_steps = len(train_loader) // accumulation * epochs
                batches_of = iter(train_loader)
                step = 0
                while step < total_steps:
                ^
                    batches = []
                    for _ in range(accumulation):
                        try:
                            batch = next(batches_of)
                        except StopIteration:
                            batches_of = iter(train_loader)
                            batch = next(batches_of)
                        batches.append(batch)
                    for b in batches:
                        model(**b).loss.backward()
                    optim.step()
                    step += 1
            """,
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats the "
                "same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # A step loop that pulls with `next(iter(loader))`: each iter() starts a new pass, and
            # without set_epoch every pass (every step here) begins with the same batch.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def main(args, dataset, model, optimizer):
                sampler = DistributedSampler(dataset)
                loader = DataLoader(dataset, batch_size=32, sampler=sampler)
                for step in range(args.steps):
                ^
                    images, labels = next(iter(loader))
                    loss = model(images, labels)
                    loss.backward()
                    optimizer.step()
            """,
            fix_edits=(
                (
                    "for step in range(args.steps):\n",
                    "for step in range(args.steps):\n"
                    "        sampler.set_epoch(step)\n",
                ),
            ),
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats the "
                "same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # Built anew in each epoch over the same dataset: each new sampler starts at epoch 0.
            # No fix: the sampler does not exist yet at the top of the loop body.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def main(args, train_set, model):
                for epoch in range(args.epochs):
                ^
                    sampler = DistributedSampler(train_set)
                    for batch in DataLoader(train_set, batch_size=16, sampler=sampler):
                        model(batch).backward()
            """,
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop (a new one is built in each "
                "pass, starting again at epoch 0): every epoch repeats the same shuffled order; call set_epoch(epoch) "
                "first in the loop body"
            ),
        ),
        Flagged(
            # fire.Fire(main) makes main's parameters the command line: `epochs` is 3 in every run.
            """
            import fire
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def main(data_dir: str = None, epochs: int = 3, batch_size: int = 32):
                dist.init_process_group("nccl")
                dataset, model = load(data_dir), build()
                sampler = DistributedSampler(dataset)
                for e in range(epochs):
                ^
                    for inputs, targets in DataLoader(dataset, batch_size, sampler=sampler):
                        model(inputs).loss(targets).backward()

            if __name__ == "__main__":
                fire.Fire(main)
            """,
            fix_edits=(("    for e in range(epochs):\n", "    for e in range(epochs):\n        sampler.set_epoch(e)\n"),),
            messages=(
                "DistributedSampler `sampler` never gets set_epoch() in this epoch loop: every epoch repeats "
                "the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # deepspeed.initialize(training_data=ds) returns, third, a DeepSpeedDataLoader over a
            # shuffling DistributedSampler it keeps as `data_sampler`, and DeepSpeed never calls its
            # set_epoch. It has no `batch_sampler`: the guarded call never runs.
            """
            import deepspeed

            def main(args, model, dataset):
                engine, optimizer, train_loader, _ = deepspeed.initialize(
                    model=model, model_parameters=model.parameters(), training_data=dataset
                )
                for epoch in range(args.epochs):
                ^
                    if hasattr(train_loader, "batch_sampler"):
                        train_loader.batch_sampler.sampler.set_epoch(epoch)
                    for batch in train_loader:
                        engine.backward(engine(batch))
                        engine.step()
            """,
            fix_edits=(
                (
                    "for epoch in range(args.epochs):\n",
                    "for epoch in range(args.epochs):\n        train_loader.data_sampler.set_epoch(epoch)\n",
                ),
            ),
            messages=(
                "DistributedSampler `train_loader.data_sampler` never gets set_epoch() in this epoch loop: every "
                "epoch repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
        Flagged(
            # A same-module helper returns the shuffling DistributedSampler on its distributed
            # path (another sampler on the others), called inline in the DataLoader: the loader
            # draws from it wherever the call may take that path. No fix: in a one-process run
            # `loader.sampler` is a RandomSampler, which has no set_epoch.
            """
            import torch.distributed as dist
            from torch.utils import data

            def data_sampler(dataset, shuffle, distributed):
                if distributed:
                    return data.distributed.DistributedSampler(dataset, shuffle=shuffle)
                if shuffle:
                    return data.RandomSampler(dataset)
                return data.SequentialSampler(dataset)

            def sample_data(loader):
                while True:
                ^
                    for batch in loader:
                        yield batch

            def train(args, dataset, model, optimizer):
                dist.init_process_group("nccl")
                loader = data.DataLoader(dataset, batch_size=4, sampler=data_sampler(dataset, True, args.distributed))
                batches = sample_data(loader)
                for step in range(args.iter):
                    model(next(batches)).backward()
                    optimizer.step()
                epochs = data.DataLoader(dataset, batch_size=4, sampler=data_sampler(dataset, True, args.distributed))
                for epoch in range(args.epochs):
                ^
                    for batch in epochs:
                        model(batch).backward()
                        optimizer.step()
            """,
            messages=(
                "DistributedSampler `loader.sampler` never gets set_epoch() in this epoch loop: every epoch repeats "
                "the same shuffled order; call set_epoch(epoch) first in the loop body",
                "DistributedSampler `epochs.sampler` never gets set_epoch() in this epoch loop: every epoch repeats "
                "the same shuffled order; call set_epoch(epoch) first in the loop body",
            ),
        ),
    )
    clean_examples = (
        Clean(
            # A helper of this module makes the shuffling DistributedSampler only under `if
            # distributed:`, with the `shuffle` it is given; each call passes a literal that turns
            # that off: no DistributedSampler, or one that keeps one order by design.
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def make_sampler(data_set, distributed, shuffle=True):
                sampler = None
                if distributed:
                    sampler = DistributedSampler(data_set, shuffle=shuffle)
                return sampler

            def forever(loader):
                while True:
                    for inputs, targets in loader:
                        yield inputs.cuda(), targets.cuda()

            def fit(cfg, train_set, net, opt):
                dist.init_process_group("nccl")
                single = forever(DataLoader(train_set, 16, sampler=make_sampler(train_set, False)))
                fixed = forever(DataLoader(train_set, 16, sampler=make_sampler(train_set, True, shuffle=False)))
                for step in range(cfg.steps):
                    net(*next(single)).backward()
                    net(*next(fixed)).backward()
                    opt.step()
            """
        ),
        Clean(
            # A PyTorch Geometric loader hands its sampler to torch's DataLoader, so
            # `loader.sampler` is the DistributedSampler and gets the epoch.
            """
            import torch.distributed as dist
            from torch.utils.data import DistributedSampler
            from torch_geometric.loader import DataLoader

            def train(model, optimizer, graphs, epochs):
                dist.init_process_group("nccl")
                loader = DataLoader(graphs, 16, sampler=DistributedSampler(graphs, shuffle=True))
                for epoch in range(epochs):
                    loader.sampler.set_epoch(epoch)
                    for batch in loader:
                        model(batch).sum().backward()
                        optimizer.step()
            """
        ),
        Clean(
            # The DeepSpeed loader's sampler, `data_sampler`, gets the epoch.
            """
            import deepspeed

            def main(args, model, dataset):
                engine, optimizer, train_loader, _ = deepspeed.initialize(
                    model=model, model_parameters=model.parameters(), training_data=dataset
                )
                for epoch in range(args.epochs):
                    train_loader.data_sampler.set_epoch(epoch)
                    for batch in train_loader:
                        engine.backward(engine(batch))
                        engine.step()
            """
        ),
        Clean(
            # The step loop restarts the iterator only once a pass ends (in `except`), and the
            # epoch loop around it sets the sampler's epoch: each restart draws the order of the
            # epoch it starts in.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def main(args, dataset, model, optimizer):
                sampler = DistributedSampler(dataset, shuffle=True)
                loader = DataLoader(dataset, batch_size=32, sampler=sampler)
                batches = iter(loader)
                for epoch in range(args.epochs):
                    loader.sampler.set_epoch(epoch)
                    for step in range(args.steps):
                        try:
                            images, labels = next(batches)
                        except StopIteration:
                            batches = iter(loader)
                            images, labels = next(batches)
                        model(images, labels).backward()
                        optimizer.step()
            """
        ),
        Clean(
            # fire.Fire(main) makes main's parameters the command line, read as options are:
            # `epochs` keeps its default, 1, in every run. One pass, no order repeats.
            """
            import fire
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def main(data_dir: str = None, epochs: int = 1, batch_size: int = 32):
                dist.init_process_group("nccl")
                dataset, model = load(data_dir), build()
                sampler = DistributedSampler(dataset)
                for e in range(epochs):
                    for inputs, targets in DataLoader(dataset, batch_size, sampler=sampler):
                        model(inputs).loss(targets).backward()

            if __name__ == "__main__":
                fire.Fire(main)
            """
        ),
        Clean(
            # The epoch count is an option with default 1 that no run passes: one pass, no order repeats.
            """
            import argparse
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def train(args, dataset, model):
                dist.init_process_group("nccl")
                sampler = DistributedSampler(dataset, seed=args.seed)
                for epoch in range(args.epochs):
                    for inputs, targets in DataLoader(dataset, args.batch_size, sampler=sampler):
                        model(inputs).loss(targets).backward()

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--epochs", type=int, default=1)
                parser.add_argument("--seed", type=int, default=0)
                parser.add_argument("--batch-size", type=int, default=32)
                train(parser.parse_args(), load(), build())
            """
        ),
        Clean(
            # The validation sampler shuffles, but its loader only evaluates (no backward):
            # its order does not matter; the training sampler gets the epoch.
            """
            import torch
            from torch.utils.data import DataLoader, DistributedSampler

            @torch.no_grad()
            def evaluate(model, loader):
                return sum(model(x).sum() for x in loader)

            def main(args, train_set, val_set, model):
                train_sampler = DistributedSampler(train_set)
                val_sampler = DistributedSampler(val_set)
                train_loader = DataLoader(train_set, sampler=train_sampler)
                val_loader = DataLoader(val_set, sampler=val_sampler)
                for epoch in range(args.epochs):
                    train_sampler.set_epoch(epoch)
                    for batch in train_loader:
                        model(batch).backward()
                    print(evaluate(model, val_loader))
            """
        ),
        Clean(
            # A loop over folds (k-fold cross-validation): each fold builds its own sampler over
            # its own data, so nothing repeats from one fold to the next.
            """
            from torch.utils.data import DataLoader, DistributedSampler, Subset

            def cross_validate(dataset, folds, model):
                for fold, train_idx in enumerate(folds):
                    fold_set = Subset(dataset, train_idx)
                    sampler = DistributedSampler(fold_set)
                    for batch in DataLoader(fold_set, batch_size=8, sampler=sampler):
                        model(batch).backward()
            """
        ),
        Clean(
            # Each pass loads a shard of its own and builds its sampler over it, handed to a
            # method that trains: a new sampler over new data, nothing repeats.
            """
            import pickle
            from torch.utils.data import DataLoader, DistributedSampler

            class Trainer:
                def fit(self, shard_paths, epochs):
                    for epoch in range(epochs):
                        for shard, path in enumerate(shard_paths):
                            with open(path, "rb") as f:
                                shard_set = pickle.load(f)
                            sampler = DistributedSampler(shard_set, seed=shard + epoch)
                            self.train_one_epoch(DataLoader(shard_set, batch_size=32, sampler=sampler))

                def train_one_epoch(self, loader):
                    for batch in loader:
                        self.model(batch).backward()
            """
        ),
        Clean(
            # A loop over graphs that evaluates each with a sampler built for it.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            @torch.no_grad()
            def test(model, graphs):
                for graph in graphs:
                    edges = graph.edges()
                    loader = DataLoader(edges, batch_size=64, sampler=DistributedSampler(edges))
                    scores = torch.cat([model(graph, batch) for batch in loader])
                    dist.all_reduce(scores)
            """
        ),
        Clean(
            # timm's create_loader: its sampler is `loader.sampler`, and it is given the epoch.
            """
            import timm.data

            def fit(cfg, train_set, net):
                loader = timm.data.create_loader(train_set, cfg.input_size, cfg.batch_size, True, distributed=cfg.distributed)
                for epoch in range(cfg.start_epoch, cfg.epochs):
                    if cfg.distributed:
                        loader.sampler.set_epoch(epoch)
                    for images, labels in loader:
                        net(images, labels).backward()
            """
        ),
        Clean(
            """
            from torch.utils.data import DataLoader, DistributedSampler

            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, sampler=sampler)
            epoch = 0
            while epoch < args.epochs:
                sampler.set_epoch(epoch)
                for batch in loader:
                    model(batch).backward()
                epoch += 1
            """
        ),
        Clean(
            """
            from torch.utils.data import DataLoader, DistributedSampler

            sampler = DistributedSampler(dataset, shuffle=False)
            loader = DataLoader(dataset, sampler=sampler)
            for epoch in range(3):
                for batch in loader:
                    model(batch).backward()
            """
        ),
        Clean(
            # set_epoch through the loader, under an if, or in the function the loop calls.
            """
            import torch

            def train_one_epoch(loader, epoch):
                loader.sampler.set_epoch(epoch)
                for batch in loader:
                    model(batch).backward()

            def main(dataset, args):
                sampler = torch.utils.data.DistributedSampler(dataset)
                loader = torch.utils.data.DataLoader(dataset, sampler=sampler)
                other = torch.utils.data.DataLoader(dataset, sampler=torch.utils.data.DistributedSampler(dataset))
                for epoch in range(args.epochs):
                    train_one_epoch(loader, epoch)
                for epoch in range(args.epochs):
                    if args.distributed:
                        other.batch_sampler.sampler.set_epoch(epoch)
                    for batch in other:
                        model(batch).backward()
            """
        ),
        Clean(
            # Not a DistributedSampler, or a local class of the same name.
            """
            from torch.utils.data import DataLoader, RandomSampler

            class DistributedSampler:
                pass

            a = DataLoader(dataset, sampler=RandomSampler(dataset))
            b = DataLoader(dataset, sampler=DistributedSampler(dataset))
            for epoch in range(3):
                for batch in a:
                    model(batch).backward()
                for batch in b:
                    model(batch).backward()
            """
        ),
        Clean(
            # A fixed number of steps (a throughput benchmark) restarting the iterator when a pass
            # ends: nothing shows that 200 steps outlast one pass, so no order need repeat.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def main(dataset, model, optim):
                train_loader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset))
                batches_of = iter(train_loader)
                step = 0
                while step < 200:
                    for _ in range(4):
                        try:
                            batch = next(batches_of)
                        except StopIteration:
                            batches_of = iter(train_loader)
                            batch = next(batches_of)
                    model(**batch).loss.backward()
                    optim.step()
                    step += 1
            """
        ),
        Clean(
            # Iterated once, not inside an epoch loop.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def run(dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
                for batch in loader:
                    model(batch).backward()
            """
        ),
        Clean(
            # The seed's loop: the epoch is set on the sampler, the loop calls train().
            """
            import torch.utils.data.distributed

            train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
            train_loader = torch.utils.data.DataLoader(train_dataset, sampler=train_sampler)

            def train(epoch):
                for batch_idx, (data, target) in enumerate(train_loader):
                    model(data, target).backward()

            for epoch in range(1, args.epochs + 1):
                train_sampler.set_epoch(epoch)
                train(epoch)
            """
        ),
        Clean(
            # `for batch in iter(loader):` makes one pass: iter() runs once, when the loop
            # starts, so the loop is no epoch loop; the epochs are fit()'s, and it sets them
            # (the warm-up pass before them is a single pass).
            """
            from torch.utils.data import DataLoader, DistributedSampler

            class Trainer:
                def run_epoch(self, loader, optimizer):
                    for batch in iter(loader):
                        self.model(batch).backward()
                        optimizer.step()

                def fit(self, dataset, optimizer, epochs):
                    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
                    self.run_epoch(loader, optimizer)
                    for epoch in range(epochs):
                        loader.sampler.set_epoch(epoch)
                        self.run_epoch(loader, optimizer)
            """
        ),
        Clean(
            # Each call builds its sampler over the data it is handed (a fold), or sets its epoch.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def train_fold(model, fold, optimizer):
                for x in DataLoader(fold, sampler=DistributedSampler(fold)):
                    model(x).backward()
                    optimizer.step()

            def run_epoch(model, dataset, optimizer, epoch):
                sampler = DistributedSampler(dataset)
                sampler.set_epoch(epoch)
                for x in DataLoader(dataset, sampler=sampler):
                    model(x).backward()

            def main(model, folds, dataset, optimizer):
                for fold in folds:
                    train_fold(model, fold, optimizer)
                for epoch in range(10):
                    run_epoch(model, dataset, optimizer, epoch)
            """
        ),
        Clean(
            # run_epoch's parameter holds fit()'s loader, but fit_presplit's epoch loop hands it
            # batches of its own: no DistributedSampler reaches that loop.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            class Trainer:
                def run_epoch(self, batches, optimizer):
                    for batch in batches:
                        self.model(batch).backward()
                        optimizer.step()

                def fit(self, dataset, optimizer, epochs):
                    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
                    for epoch in range(epochs):
                        loader.sampler.set_epoch(epoch)
                        self.run_epoch(loader, optimizer)

                def fit_presplit(self, batches, optimizer, epochs):
                    for epoch in range(epochs):
                        self.run_epoch(reshuffled(batches, epoch), optimizer)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self.flow = model.get(LoaderFlow)
        self._free: dict[int, bool] = {}  # whether a sampler's order picks no data (`_order_free`), by its id

    def leave_Module(self, original_node: cst.Module) -> None:
        flow = self.flow
        reported: set[int] = set()  # the epoch loops and endless calls reported: each once
        for sampler in flow.of_kind("sampler"):
            if sampler.shuffle_is_false:
                continue
            for loader, path in flow.loaders_of(sampler):
                for epoch in map(self._around_pulls, flow.epoch_loops(loader)):
                    loop = epoch.loop
                    if id(loop.node) in reported or flow.sets_epoch(loop, sampler, epoch.names):
                        continue
                    if self._restarts_under_set_epoch(epoch, sampler):
                        continue  # each restart draws the order of the epoch a loop around sets
                    if sampler.epoch_given and loop in flow.loops_calling(sampler.function):
                        continue  # made anew each pass, handed the epoch: each pass draws a new order
                    fresh = self._made_in(sampler, loop)
                    trained = self._trained(epoch.passes, loop)
                    if fresh is None or trained is None or self._order_free(sampler):
                        continue  # other data each pass, or no pass that trains, or no data the order picks
                    reported.add(id(loop.node))
                    self._report(loop, sampler, epoch, path, trained, fresh)
                for call in flow.endless_calls(loader):
                    if id(call.node) in reported or flow.sets_epoch_anywhere(sampler) or self._order_free(sampler):
                        continue
                    reported.add(id(call.node))
                    self._report_endless(call, sampler, loader, path)
                self._report_rebuilt(sampler, loader, path, reported)
        # A loader from another module's builder draws from a DistributedSampler only where
        # ranks run this module: something here (or a script that runs it) must show that they do.
        if self.runs_link() is not None:
            self._report_carried(original_node, reported)

    def _report_rebuilt(self, sampler: Construction, loader: Construction, path: str, reported: set[int]) -> None:
        """A function that makes the sampler and its loader and trains one pass over them
        (`def run_epoch(self, epoch)`), called in a loop of another function (`for epoch in
        ...: self.run_epoch(epoch)`): each call builds a new sampler, at epoch 0 again, over
        the same data (not data the function is handed, which may differ per call: folds)."""
        flow, function = self.flow, sampler.function
        dataset = sampler.dataset
        if sampler.loops or sampler.elsewhere is not None or function.node is None or dataset is None:
            return
        if dataset[0] is function.scope or sampler.dataset_built_inline or flow.sets_epoch_anywhere(sampler):
            return
        names = flow.refs(loader)
        passes = [loop for loop in function.loops if loop.iterated & names and not loop.outer]
        where = self._backward(passes[0], 0) if passes else None
        if where is None or self._order_free(sampler):
            return
        trained = Link(StepKind.REACHES, f"the loader is iterated here, in a pass that trains: a backward() runs at {_line(where)}",
                       passes[0].node)
        for loop in flow.loops_calling(function):
            if id(loop.node) not in reported:
                reported.add(id(loop.node))
                self._report(loop, sampler, EpochLoop(loop, names, [Pass(passes[0])]), path, trained, True, function.node.name.value)

    # -- the steps of the chain ------------------------------------------------------------

    def _order_free(self, sampler: Construction) -> bool:
        """Whether the sampler (made here or by another module's builder) shards only datasets
        whose `__getitem__` never reads the index (`order_free`): its order picks no data."""
        view = self.model.project
        if view is None or sampler.by_plugin:
            return False
        if id(sampler) not in self._free:
            line = self.model.spans([sampler.node])[id(sampler.node)][0][0]
            where = sampler.elsewhere or view.program.place(view.module, line)
            self._free[id(sampler)] = order_free(view.program, where)
        return self._free[id(sampler)]

    def _made_in(self, sampler: Construction, loop: Loop) -> bool | None:
        """Whether `sampler` is made anew in each pass of `loop` over the same data (True: each
        new sampler starts at epoch 0 again), made before it (False), or made anew over data
        the loop changes or that is unknown (None: not an epoch loop for it; a loop over folds
        or graphs)."""
        if loop not in sampler.loops:
            return False
        dataset = sampler.dataset
        if dataset is None or sampler.dataset_built_inline:
            return None
        bound = self.flow.bound_in.get(dataset, [])
        outside = isinstance(dataset[0], tuple) or not any(loop in loops for loops in bound)
        return True if outside else None

    def _around_pulls(self, epoch: EpochLoop) -> EpochLoop:
        """The epoch loop of passes that only `iter()` starts, in a loop that trains nothing itself
        (a gradient-accumulation loop gathering batches, restarting the iterator in `except
        StopIteration`): the innermost loop around it whose body trains (the step loop), which
        runs the restarts again and again; else `epoch` as it is."""
        loop = epoch.loop
        if not all(made.loop is not None and made.loop.pull for made in epoch.passes) or self._backward(loop, 0) is not None:
            return epoch
        for outer in reversed(loop.outer):
            if isinstance(outer.node, (cst.For, cst.While)) and self._backward(outer, 0) is not None:
                # a restart runs only once a pass ends: the step count must be shown to reach it
                return EpochLoop(outer, epoch.names, epoch.passes) if _outlasts_a_pass(outer, self.model.module) else epoch
        return epoch

    def _restarts_under_set_epoch(self, epoch: EpochLoop, sampler: Construction) -> bool:
        """Whether every pass of `epoch` is an `iter()` that restarts the data once a pass ends
        (in an `except` of a `try` in the loop: `except StopIteration: it = iter(loader)`), and a
        loop around it sets the sampler's epoch: each restart draws that epoch's order, and the
        epoch advances (not `next(iter(loader))` each step, a new pass at the same epoch)."""
        loop = epoch.loop
        if not epoch.passes or not loop.outer:
            return False
        restarts = {id(call) for call in _restarting_calls(loop.node)}
        if not all(made.loop is not None and made.loop.pull and id(made.loop.node) in restarts for made in epoch.passes):
            return False
        return any(self.flow.sets_epoch(outer, sampler, epoch.names) for outer in loop.outer)

    def _restarted_in(self, loop: Loop, passed: Place) -> bool:
        """As `_restarts_under_set_epoch`, for an epoch loop of the program model: the iter()
        at `passed` restarts the data in an `except` of `loop`, and a loop around it calls
        set_epoch."""
        if not loop.outer or passed.path != self.model.project.program.place(self.model.project.module, passed.line).path:
            return False
        calls = _restarting_calls(loop.node)
        spans = self.model.spans(calls)
        if not any(spans[id(call)][0][0] == passed.line for call in calls):
            return False
        return any(outer in epoch.loops for outer in loop.outer for epoch in loop.function.set_epochs)

    def _trained(self, passes: list[Pass], loop: Loop) -> Link | None:
        """The step "a pass over the loader trains" (a backward runs in it): a Link where it runs,
        or None when no pass is known to train (an evaluation's order does not matter)."""
        for made in passes:
            if made.elsewhere is not None:
                if made.elsewhere.backward is not None:
                    return Link(StepKind.REACHES, f"{made.elsewhere.function}() makes the pass, and trains: a backward() "
                                f"runs at {made.elsewhere.backward}", made.elsewhere.loop)
                continue
            if _streams(loop):
                return Link(StepKind.REACHES, "the loader is iterated here, by a generator that yields it forever: "
                            "a stream of training batches (no evaluation runs forever)", made.loop.node)
            pulled = made.loop.pull  # `next(iter(loader))`: the loop around it trains
            where = self._backward(loop if pulled else made.loop, 0)
            if where is not None:
                what = "iter() starts a pass over the loader here" if pulled else "the loader is iterated here"
                return Link(StepKind.REACHES, f"{what}, in a pass that trains: a backward() runs at {_line(where)}",
                            made.loop.node)
        return None

    def _backward(self, loop: Loop | Function, depth: int):
        """Where a backward() runs in the body of `loop` (or of a function): a call of one there
        (a cst node), or through a function it calls (a Place of the program model, or a cst
        node of this file); None when none is known to."""
        function = loop if isinstance(loop, Function) else loop.function
        body = loop.node
        project = self.model.project
        for node in descendants(body) if body is not None else ():
            if not isinstance(node, cst.Call):
                continue
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
                return node
            callee = dotted_name(node.func)
            local = self._local_function(callee, function)
            if local is not None and self._takes_input_gradient(local):
                continue  # an attack's backward (the gradient of an input) trains nothing
            if local is not None and depth < 3:
                found = self._backward(local, depth + 1)
                if found is not None:
                    return found
            elif callee is not None and project is not None:
                cls = function.self_class.name.value if function.self_class is not None else None
                found = project.runs_backward(function.key, cls, callee)
                if found is not None:
                    return found
        return None

    def _takes_input_gradient(self, function: Function) -> bool:
        """Whether the program model reads `function`'s backward() as one for an input's
        gradient, stepping no optimizer (FunctionSummary.input_gradient): an attack, not training."""
        view = self.model.project
        record = view.program.function(view.module, function.key) if view is not None and function.key else None
        return record is not None and record.input_gradient

    def _local_function(self, callee: str | None, function: Function) -> Function | None:
        """The function of this module a call of `callee` in `function` reaches (`train(x)`,
        `self.train_epoch()`), or None."""
        if callee is None:
            return None
        head, _, rest = callee.partition(".")
        if head == "self" and rest and "." not in rest and function.self_class is not None:
            return self.flow.functions.get(("method", id(function.self_class), rest))
        return self.flow.functions.get(("func", callee)) if "." not in callee else None

    def _made_link(self, sampler: Construction) -> Link:
        where = sampler.elsewhere if sampler.elsewhere is not None else sampler.node
        return Link(StepKind.MADE, "the DistributedSampler is made here, shuffling, and starts each pass from "
                    "seed + epoch", where)

    def _chain(self, made: Link, reaches: list[Link], node: cst.CSTNode, message: str) -> list[Link]:
        runs = self.runs_link()
        return [made, *reaches, *([runs] if runs is not None else []), Link(StepKind.HARM, harm_of(message), node)]

    def _runs_once(self, node: cst.CSTNode, function: Function | None = None) -> bool:
        """Whether the epoch loop `for epoch in range(args.epochs)` makes one pass at most in
        every documented run: its count is a command-line option or a yacs setting
        (`config.TRAIN.EPOCHS`) that every documented run leaves at 1 or less, its default where
        a run does not pass it (ProjectView.documented_values: `--epochs 1` in every script,
        `EPOCHS: 1` in every config file the runs merge), or a parameter of
        `function` that is one (`for e in range(epoch)` in `def main(epoch: int = 1)`, run by
        `fire.Fire(main)`). A sampler whose order is never drawn a second time repeats nothing."""
        view = self.model.project
        if view is None or not isinstance(node, cst.For) or not _is_range(node.iter):
            return False
        args = node.iter.args  # type: ignore[union-attr]
        start = args[0].value if len(args) == 2 else cst.Integer("0")
        if len(args) not in (1, 2) or not isinstance(start, cst.Integer):
            return False
        count = args[-1].value
        if isinstance(count, cst.Name) and function is not None and function.key is not None and count.value in function.params:
            # a parameter of the module's command-line entry (`fire.Fire(main)`, `def main(epoch: int = 1)`)
            value = view.entry_parameter(function.key, count.value)
        elif not isinstance(count, cst.Attribute) or isinstance(count.value, cst.Name) and count.value.value in ("self", "cls"):
            return False
        else:
            path = dotted_name(count)
            values = view.documented_values(tuple(path.split("."))) if path is not None else None
            return bool(values) and all(type(value) is int and value - int(start.value, 0) <= 1 for value in values)  # type: ignore[union-attr]
        return type(value) is int and value - int(start.value, 0) <= 1

    # -- reports -----------------------------------------------------------------------------

    def _report_endless(self, call: Endless, sampler: Construction, loader: Construction, path: str) -> None:
        """At the call of another module's endless generator: no fix, the loop is there."""
        expression, _ = self._expression(call.function, sampler, self.flow.refs(loader), path)
        message = (
            f"{_shown(expression)} never gets set_epoch(): its DataLoader is re-iterated forever by "
            f"{call.name}() in {call.where}, and every pass repeats the same shuffled order; "
            f"call set_epoch(epoch) before each pass{_built_in(sampler)}"
        )
        loop = Link(StepKind.REACHES, f"{call.name}() re-iterates the loader here, forever: each pass a new epoch", call.where)
        self.report(call.node, message, chain=self._chain(self._made_link(sampler), [loop], call.node, message))

    def _expression(self, function: Function, sampler: Construction, loader_names: set[Ref], path: str):
        """How `function` can name `sampler` (or None), and whether that name is ambiguous."""
        names = self.flow.refs(sampler)
        expression = self.flow.visible_path(names, function)
        # A name also assigned something else (`... if distributed else None`) may not hold a
        # DistributedSampler when the loop runs, and then neither does the loader's sampler.
        ambiguous = any(self.flow.assignments[name] > 1 for name in names)
        if expression is None and not ambiguous:
            loader = self.flow.visible_path(loader_names, function)
            expression = None if loader is None else loader + (".sampler" if path == ".batch_sampler" else path)
        return expression, ambiguous

    def _report(
        self, loop: Loop, sampler: Construction, epoch: EpochLoop, path: str, trained: Link, fresh: bool, builder: str | None = None
    ) -> None:
        """At the epoch loop; `builder`: the function the loop calls, which builds the sampler anew."""
        if self._runs_once(loop.node, loop.function):
            return
        expression, ambiguous = self._expression(loop.function, sampler, epoch.names, path)
        node = loop.node
        target = node.target if isinstance(node, cst.For) else None
        passes = self.flow.passes.get(id(loop))
        through = f" (the loader is iterated by {passes})" if passes else ""
        anew = " (a new one is built in each pass, starting again at epoch 0)" if fresh else ""
        advice = "call set_epoch(epoch) first in the loop body"
        if builder is not None:
            anew = f" ({builder}() builds a new one on each call, starting again at epoch 0)"
            advice = f"pass the epoch to {builder}() and call set_epoch(epoch) on its sampler before the pass"
        missed = self.flow.misdirected_set_epochs(loop, sampler)  # `loader.sampler.set_epoch(epoch)`
        wasted = (
            f"`{dotted_name(missed[0].node.func)}()` reaches the loader's own SequentialSampler (it draws through a "
            "batch_sampler), so " if missed else ""
        )
        message = (
            f"{_shown(expression)} never gets set_epoch() in this epoch loop{through}{anew}: {wasted}every epoch repeats "
            f"the same shuffled order; {advice}{_built_in(sampler)}"
        )
        wrong = [Link(StepKind.REACHES, "this set_epoch() reaches the loader's own `sampler`, the SequentialSampler DataLoader "
                      "makes beside a batch_sampler, which has no set_epoch; the DistributedSampler is its "
                      "`batch_sampler.sampler`", call.node) for call in missed[:1]]
        chain = self._chain(self._made_link(sampler), [trained, *wrong], node, message)
        if (
            expression is None
            or ambiguous
            # another module's builder makes it only in some runs: in the others what the
            # expression names is None or a sampler without set_epoch
            or sampler.optional
            # a same-module helper returns it only on some paths (another sampler, or None, on others)
            or self.flow.returned_with_others(sampler)
            or fresh  # the sampler the loop body builds does not exist yet at its first statement
            or not isinstance(target, cst.Name)
            or target.value == "_"
            or not _is_range(node.iter)  # type: ignore[union-attr]
            or not isinstance(node.body, cst.IndentedBlock)
        ):
            self.report(node, message, chain=chain)
            return
        line = cst.parse_statement(f"{expression}.set_epoch({target.value})\n")
        body = node.body.with_changes(body=[line, *node.body.body])
        self.report(node, message, replace={node: node.with_changes(body=body)}, chain=chain)

    def _report_carried(self, module: cst.Module, reported: set[int]) -> None:
        """Epoch loops the program model finds over a loader this module is handed, keeps on an
        object or reads off one (`self.train_loader`, `args.train_loader`), from a sampler made
        elsewhere: reported without a fix (what to call set_epoch on is the user's to say)."""
        view = self.model.project
        found = unset_epochs(view.program, view.module) if view is not None else []
        if not found:
            return
        loops = [loop for function in (self.flow.module, *self.flow.all_functions()) for loop in function.loops
                 if isinstance(loop.node, (cst.For, cst.While))]
        spans = self.model.spans([loop.node for loop in loops])
        by_line = {spans[id(loop.node)][0][0]: loop for loop in loops}
        for unset in found:
            loop = by_line.get(unset.epoch.first)
            # the model's summary is of the module as saved; this text (an edit, a fix just
            # applied) may already call set_epoch in the loop (not on a parameter every call passes None)
            calls = [call for call in loop.function.set_epochs if loop in call.loops] if loop is not None else []
            on_none = [call for call in calls if self._on_none(loop.function, call)]
            if loop is None or id(loop.node) in reported or len(on_none) < len(calls):
                continue
            if self._runs_once(loop.node, loop.function):
                continue
            if unset.pulled and self._restarted_in(loop, unset.passed):
                continue  # each restart draws the order of the epoch a loop around sets
            if order_free(view.program, unset.loader.sampler.made_at):
                continue  # its datasets never read the index: the order picks no data
            reported.add(id(loop.node))
            shown = f"The DistributedSampler of `{unset.name}`" if unset.name else "This DistributedSampler"
            wasted = "".join(f"`{dotted_name(call.node.func)}()` is on a parameter every call of {loop.function.key}() "
                             "passes None, so " for call in on_none[:1])
            message = (
                f"{shown} never gets set_epoch() in this epoch loop: {wasted}every epoch repeats the same shuffled "
                "order; "
                f"call set_epoch(epoch) first in the loop body (sampler built in {unset.loader.sampler.made_at})"
            )
            made = Link(StepKind.MADE, "the DistributedSampler is made here, shuffling, and starts each pass from "
                        "seed + epoch", unset.loader.sampler.made_at)
            reaches = [Link(StepKind.REACHES, "the DataLoader drawing from it is made here", unset.loader.made_at)]
            if unset.loader.passed_at is not None:
                reaches.append(Link(StepKind.REACHES, "and handed on here", unset.loader.passed_at))
            reaches.append(Link(StepKind.REACHES, f"{unset.how}, in a pass that trains: a backward() runs at "
                                f"{unset.backward}", unset.passed))
            reaches += [Link(StepKind.REACHES, "this set_epoch() is on a parameter every call passes None (or leaves "
                             "to its default None): it never runs on a sampler", call.node) for call in on_none[:1]]
            self.report(loop.node, message, chain=self._chain(made, reaches, loop.node, message))

    def _on_none(self, function: Function, call: SetEpoch) -> bool:
        """Whether the set_epoch `call` is on a parameter of `function` that every call in the
        project passes None (ddplint.model.loaders.passed_none): it reaches no sampler."""
        view = self.model.project
        callee = dotted_name(call.node.func) if call.node is not None else None
        return callee is not None and view is not None and loaders.passed_none(
            view.program, view.module, function.key, callee
        )


def _restarting_calls(node: cst.CSTNode) -> list[cst.Call]:
    """The calls in the `except` clauses of the `try` statements in `node`: what runs once a
    pull fails (`except StopIteration: it = iter(loader)`), a restart when the data runs out."""
    handlers = [handler.body for inner in descendants(node) if isinstance(inner, cst.Try) for handler in inner.handlers]
    return [call for body in handlers for call in descendants(body) if isinstance(call, cst.Call)]


def _shown(expression: str | None) -> str:
    return f"DistributedSampler `{expression}`" if expression else "This DistributedSampler"


def _built_in(sampler: Construction) -> str:
    return f" (sampler built in {sampler.elsewhere})" if sampler.elsewhere else ""


def _outlasts_a_pass(loop: Loop, module: cst.Module) -> bool:
    """Whether the count of `loop` (its `while` test, its `range()`) is shown to outlast one pass
    over the data: it multiplies a `len()` by a factor other than 1, itself or through names its
    function assigns (`total_steps = len(loader) // accumulation * num_epoch`, `num_epoch = 3`).
    A fixed number of steps, or steps for one pass, may never reach the end of a pass."""
    node = loop.node
    count = node.test if isinstance(node, cst.While) else node.iter if isinstance(node, cst.For) else None
    assigned: dict[str, list[cst.BaseExpression]] = {}
    for statement in descendants(loop.function.node.body if loop.function.node is not None else module):
        if isinstance(statement, cst.Assign):
            for target in statement.targets:
                if isinstance(target.target, cst.Name):
                    assigned.setdefault(target.target.value, []).append(statement.value)

    def reads(expr: cst.BaseExpression, what, seen: frozenset = frozenset()) -> bool:
        """Whether `expr` has a node `what` holds for, itself or in what the names it reads are assigned."""
        for inner in descendants(expr):
            if what(inner):
                return True
            if isinstance(inner, cst.Name) and inner.value not in seen:
                if any(reads(value, what, seen | {inner.value}) for value in assigned.get(inner.value, [])):
                    return True
        return False

    def at_most_one(expr: cst.BaseExpression) -> bool:
        values = assigned.get(expr.value, []) if isinstance(expr, cst.Name) else [expr]
        return bool(values) and all(isinstance(value, cst.Integer) and int(value.value, 0) <= 1 for value in values)

    def length(inner: cst.CSTNode) -> bool:
        return isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "len"

    def scaled(inner: cst.CSTNode) -> bool:
        if not isinstance(inner, cst.BinaryOperation) or not isinstance(inner.operator, cst.Multiply):
            return False
        sides = (inner.left, inner.right)
        return any(reads(side, length) and not at_most_one(other) for side, other in (sides, sides[::-1]))

    return count is not None and reads(count, scaled)


def _is_range(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range"


def _streams(loop: Loop) -> bool:
    """An endless loop that yields (`while True: for x in dl: yield x`): it hands its consumer
    batches for ever, which only training asks for."""
    node = loop.node
    endless = isinstance(node, cst.While) and isinstance(node.test, cst.Name) and node.test.value == "True"
    endless = endless or isinstance(node, cst.While) and isinstance(node.test, cst.Integer) and node.test.value == "1"
    return endless and any(isinstance(inner, cst.Yield) for inner in descendants(node))


def _line(where) -> str:
    """A place to name in a message: a Place as is, a node of this file as "this file"."""
    return str(where) if isinstance(where, Place) else "a call in this file"


# -- questions only this rule asks of the program model ---------------------------------------


@dataclass(frozen=True)
class UnsetEpoch:
    """An epoch loop (`epoch`, a summary's Loop) around a pass that trains over `loader` (a
    ddplint.model.records.Loader whose sampler shuffles), with no set_epoch in reach: the pass
    is at `passed`, `how` it goes there, `name` the loader as the function writes it (or
    None), `backward` where it trains."""

    epoch: SummaryLoop
    loader: Loader
    passed: Place
    how: str
    name: str | None
    backward: Place
    pulled: bool = False  # the pass is restarted by iter(), here or in a function the loop calls


def unset_epochs(program, module: str) -> list[UnsetEpoch]:
    """The epoch loops of `module` (each loop of its functions around a pass over a loader, in
    the function or in a project function a call in the loop reaches) where the loader draws
    from a shuffling DistributedSampler made before the loop, the pass trains, and no set_epoch
    may be called: not in the loop, nor in any function it calls. Generators that re-iterate
    their argument forever are reported where they are called (Endless)."""
    summary = program.known(module)
    found: list[UnsetEpoch] = []
    for key, function in summary.functions.items() if summary is not None else ():
        if function.cycles is not None:
            continue
        for epoch in function.loops:
            # a sampler the loop makes anew is for the module's own analysis to judge (its data may change)
            passes = _passes_in(program, module, key, function, epoch)
            unset = next((found for found in passes if not _made_in(program, module, epoch, found.loader)), None)
            if unset is None or loaders.set_epoch_in(program, module, key, epoch.first, epoch.last):
                continue
            if unset.pulled and _called_in_epoch_loops(program, module, key):
                continue  # a step loop refilling its iterator; the epochs are the caller's
            found.append(unset)
    return found


_PULLED = "iter() starts a pass over the loader here"


def _called_in_epoch_loops(program, module: str, key: str) -> bool:
    """Whether every call of function `key` in the project lies in a loop of its caller that may
    call set_epoch (`for epoch in ...: sampler.set_epoch(epoch); train_one_epoch(...)`)."""
    sites = program.context.call_sites(module, key)
    if not sites:
        return False
    for site in sites:
        record = program.function(site.caller, site.caller_key) if site.caller_key is not None else None
        loops = [loop for loop in record.loops if _holds(loop, site.line)] if record is not None else []
        if not any(loaders.set_epoch_in(program, site.caller, site.caller_key, loop.first, loop.last) for loop in loops):
            return False
    return True


def _passes_in(program, module: str, key: str, function, epoch: SummaryLoop):
    """The passes that train over a loader drawing from a shuffling sampler made before `epoch`:
    its own loops and `iter()` calls with no other loop of the function between, and the
    top-level passes of the project functions called there, each as an UnsetEpoch."""
    inside = [loop for loop in function.loops if _inside(loop, epoch)]
    direct = [loop for loop in inside if not any(_inside(loop, other) for other in inside)]
    passes = [(loop.first, loop.last, loop.sources, "the loader is iterated here") for loop in direct]
    passes += [(pull.line, None, pull.sources, _PULLED) for pull in function.pulls
               if _holds(epoch, pull.line) and not any(_holds(loop, pull.line) for loop in inside)]
    for first, last, sources, how in passes:
        # a pulled pass trains in the loop around it (`batch = next(iter(loader))`, then the step)
        backward = program.backward_in(module, key, first, last) if last is not None else None
        backward = backward or (program.backward_in(module, key, epoch.first, epoch.last) if last is None else None)
        for source in sources if backward is not None else ():
            for loader, name in _loaders(program, module, key, () if _fresh(source, epoch) else (source,)):
                if not (loader.sampler.epoch_given and _rebuilt_each_pass(program, module, key, function, epoch, source)):
                    yield UnsetEpoch(epoch, loader, program.place(module, first), how, name, backward, how == _PULLED)
    # a callee that restarts the pass with iter() (a step helper refilling its iterator when
    # the data runs out) does so for every loop around the call: the outermost is the epoch loop
    outermost = not any(_inside(epoch, other) for other in function.loops)
    for call in function.invocations:
        direct = not any(_holds(loop, call.line) for loop in inside)
        if _holds(epoch, call.line) and (direct or outermost):
            yield from _callee_passes(program, module, key, function, epoch, call, direct, outermost)


def _callee_passes(program, module: str, key: str, function, epoch: SummaryLoop, call, direct: bool, pulls: bool):
    """The top-level passes (in no loop of its own) that the project function a call in `epoch`
    reaches makes over a loader it is handed or keeps (not one it makes itself): its loops
    where the call is `direct` (in no inner loop of `epoch`), and its iter() restarts where
    `pulls` (`epoch` is the function's outermost loop)."""
    target = program.target(module, key, function.cls, call.callee)
    record = program.function(target.module, target.key) if target is not None else None
    if record is None or record.cycles is not None or target.function == (module, key):
        return
    if pulls:
        yield from _callee_pulls(program, module, key, function, epoch, call, target, record)
    for loop in record.loops if direct else ():
        if any(_inside(loop, other) for other in record.loops):
            continue
        backward = program.backward_in(target.module, target.key, loop.first, loop.last)
        received = [source for source in loop.sources if _written(source) is not None]
        for source in received if backward is not None else ():
            for kept, written in _loaders(program, target.module, target.key, (source,)):
                where = program.place(target.module, loop.first)
                # `self.train_loader` names the loader in the epoch loop too when both are methods of one class
                name = written if written.startswith("self.") and record.cls == function.cls else None
                for loader in _handed_by(program, module, key, function, call, target, source, kept):
                    yield UnsetEpoch(epoch, loader, where, f"{target.key}() iterates the loader here", name, backward)


def _callee_pulls(program, module: str, key: str, function, epoch: SummaryLoop, call, target, record):
    """The passes the callee `target` restarts with iter() outside any loop of its own, over a
    loader it is handed or keeps (`task_iter[t] = iter(loaders[t])` when its count runs out):
    each trains where the epoch loop around the call runs a backward()."""
    backward = program.backward_in(module, key, epoch.first, epoch.last)
    for pull in record.pulls if backward is not None else ():
        if any(_holds(loop, pull.line) for loop in record.loops):
            continue  # a loop of its own restarts it: that loop's pass
        for source in pull.sources:
            if _written(_element_of(source)) is None:
                continue  # one it makes itself
            for kept, _ in _loaders(program, target.module, target.key, (source,)):
                where = program.place(target.module, pull.line)
                how = f"{target.key}() starts a pass over the loader here with iter()"
                for loader in _handed_by(program, module, key, function, call, target, source, kept):
                    yield UnsetEpoch(epoch, loader, where, how, None, backward, True)


def _element_of(source):
    """What `source` takes an element of (`loaders[task]`: `loaders`), or `source` itself."""
    source = source.held if isinstance(source, Through) else source
    return source.listed if isinstance(source, Element) else source


def _handed_by(program, module: str, key: str, function, call, target, source, kept: Loader) -> list[Loader]:
    """The loaders the callee `target` iterates through `source` when `call` in function `key`
    calls it: `kept` where it reads `self` or an object; where it reads a parameter, what this
    call passes it (a parameter holds what any call passes it, and this one may pass batches),
    or an element of it (`loaders[task]`)."""
    held = _element_of(source)
    if not isinstance(held, Param):
        return [kept]
    passed = program.passed_for(function, call.callee, call.line, target, held.name)
    if passed is not None and held is not (source.held if isinstance(source, Through) else source):
        passed = Element(passed)
    at = program.place(module, call.line)
    return [replace(loader, passed_at=at) for loader, _ in _loaders(program, module, key, (passed,) if passed else ())]


def _made_in(program, module: str, epoch: SummaryLoop, loader: Loader) -> bool:
    """Whether the sampler `loader` draws from is made inside `epoch`, a loop of `module`."""
    made = loader.sampler.made_at
    return made.path == program.path(module) and _holds(epoch, made.line)


def _rebuilt_each_pass(program, module: str, key: str, function, epoch: SummaryLoop, source) -> bool:
    """Whether the loader `source` holds is made anew in each pass of `epoch`: it is an
    attribute of `self` that a method the loop calls stores (`self.setup_loader(epoch)`, which
    sets `self.training_loader`), also as iterated through a call (`enumerate(...)`)."""
    source = source.held if isinstance(source, Through) else source
    if not isinstance(source, SelfAttr):
        return False
    for call in function.invocations:
        target = program.target(module, key, function.cls, call.callee) if _holds(epoch, call.line) else None
        record = program.function(target.module, target.key) if target is not None else None
        if record is not None and source.name in record.sets:
            return True
    return False


def _inside(loop: SummaryLoop, other: SummaryLoop) -> bool:
    """Whether `loop` lies inside `other` (and is not it)."""
    return loop is not other and other.first <= loop.first and loop.last <= other.last and (
        other.first < loop.first or loop.last < other.last
    )


def _holds(loop: SummaryLoop, line: int) -> bool:
    return loop.first <= line <= loop.last


def _fresh(source, epoch: SummaryLoop) -> bool:
    """Whether `source` holds what a call inside the epoch loop makes: anew each pass."""
    while isinstance(source, (Attr, Item)):
        source = source.held
    return isinstance(source, CallResult) and _holds(epoch, source.line)


def _loaders(program, module: str, key: str, sources: tuple) -> list[tuple[Loader, str | None]]:
    """The loaders drawing from a sampler that shuffles (or may) among what `sources` hold, with
    how the function writes each: not one at a position of a list whose sampler is made with
    shuffle=False (`_unshuffled`)."""
    found = []
    for source in sources:
        held = [value for value in program.values_of(module, key, source) if isinstance(value, Loader) and value.sampler.shuffle is not False]
        if held and not _unshuffled(program, module, key, source):
            found += [(value, _written(source)) for value in held]
    return found


# -- the i-th loader of a list a builder fills in step with the lists it is handed -------------


def _unshuffled(program, module: str, key: str, source, depth: int = 0) -> bool:
    """Whether the loader `source` holds in function `key` draws only from DistributedSamplers
    made with shuffle=False, where it is an element of the list a project builder fills in step
    with a list of samplers it is handed (`train, test = make_loaders(sets, samplers)`,
    `make_loaders(...)[0]`), followed position by position to the `shuffle` the sampler builder
    is handed (`samplers = make_samplers(sets, [True, False])`): zip pairs the i-th elements,
    so the i-th loader draws from the i-th sampler, made with the i-th `shuffle`. Such a
    sampler gives the same order every epoch by design; set_epoch changes nothing. A
    parameter holds what every call of its function passes. False where a step is unknown."""
    if depth > 4:
        return False
    if isinstance(source, Param):
        sites = program.context.call_sites(module, key) if key else None
        return bool(sites) and all(_passes_unshuffled(program, module, key, site, source.name, depth) for site in sites)
    if not (isinstance(source, Item) and isinstance(source.index, int) and isinstance(source.held, CallResult)):
        return False
    built = _in_step(program, module, key, source.held, DATALOADER, "sampler")
    if built is None or built[1] is None:
        return False
    record, (target, param) = program.function(module, key), built
    passed = program.passed_for(record, source.held.callee, source.held.line, target, param)
    ways = passed.branches if isinstance(passed, Either) else (passed,)
    return passed is not None and all(
        way is None or _sampler_unshuffled(program, module, key, way, source.index) for way in ways
    )


def _passes_unshuffled(program, module: str, key: str, site, name: str, depth: int) -> bool:
    """Whether the call `site` of function `key` passes its parameter `name` a loader `_unshuffled`."""
    record = program.function(site.caller, site.caller_key) if site.caller_key is not None else None
    for call in record.calls if record is not None else ():
        target = program.target(site.caller, site.caller_key, record.cls, call.callee) if call.line == site.line else None
        if target is not None and target.function == (module, key):
            passed = program.passed_for(record, call.callee, call.line, target, name)
            return passed is not None and _unshuffled(program, site.caller, site.caller_key, passed, depth + 1)
    return False


def _sampler_unshuffled(program, module: str, key: str, source, index: int) -> bool:
    """Whether the element at `index` of the list of samplers the call `source` of function
    `key` returns is made with shuffle=False: as a literal in the builder, or as the element
    at `index` of the list literal the call passes for the builder's `shuffle` list."""
    if not isinstance(source, CallResult):
        return False
    built = _in_step(program, module, key, source, DISTRIBUTED_SAMPLER, "shuffle")
    if built is None:
        return False
    target, param = built
    if param is None:
        return True  # `shuffle=False` in the builder: every one of its samplers
    definition = program.definition(module, key)
    params = program.function(target.module, target.key).arguments(target.bound)
    for call in ast.walk(definition) if definition is not None else ():
        if isinstance(call, ast.Call) and call.lineno == source.line and ast.unparse(call.func) == source.callee:
            given = _argument(call, params.index(param) if param in params else None, param)
            items = given.elts if isinstance(given, (ast.List, ast.Tuple)) else []
            item = items[index] if index < len(items) and not any(isinstance(i, ast.Starred) for i in items) else None
            return isinstance(item, ast.Constant) and item.value is False
    return False


def _in_step(program, module: str, key: str, call: CallResult, api, name: str):
    """For a call of a project builder that fills a list in step with lists it is handed
    (`_filled_in_step`) with calls of `api` (DataLoader, DistributedSampler): its Target and the
    parameter whose element the builder passes as `name` (`sampler`, `shuffle`); the parameter
    None where it passes the literal False. None for any other builder or argument."""
    record = program.function(module, key)
    target = program.target(module, key, record.cls if record is not None else None, call.callee)
    definition = program.definition(target.module, target.key) if target is not None else None
    filled = _filled_in_step(definition) if definition is not None else None
    if filled is None or program.qualify(target.module, ast.unparse(filled[0].func)) not in api:
        return None
    given = _argument(filled[0], api.position(name), name)
    if isinstance(given, ast.Constant) and given.value is False:
        return target, None
    param = filled[1].get(given.id) if isinstance(given, ast.Name) else None
    return (target, param) if param is not None else None


def _argument(call: ast.Call, position: int | None, name: str) -> ast.expr | None:
    """What an `ast` call passes for parameter `name` (at `position`), or None."""
    given = next((k.value for k in call.keywords if k.arg == name), None)
    plain = [] if any(isinstance(a, ast.Starred) for a in call.args) else call.args
    return given if given is not None or position is None or position >= len(plain) else plain[position]


def _filled_in_step(definition) -> tuple[ast.Call, dict[str, str]] | None:
    """The call whose result is the i-th element of the list `definition` returns, with the
    loop's names of the parameters it zips: `out = []`, then a loop of the function's body over
    `zip(p, q, ...)` (or one parameter) that appends to it once each pass (the append a
    statement of the loop's own body, no break or continue, the names not rebound), the call
    appended or bound once there to the name appended; `out` named nowhere else but where each
    return returns it and in `len(out)`. None for any other shape."""
    returns = [node for node in ast.walk(definition) if isinstance(node, ast.Return)]
    listed = returns[0].value.id if returns and isinstance(returns[0].value, ast.Name) else None
    if listed is None or any(not isinstance(r.value, ast.Name) or r.value.id != listed for r in returns):
        return None
    names = [node for node in ast.walk(definition) if isinstance(node, ast.Name) and node.id == listed]
    measured = [n for n in ast.walk(definition) if isinstance(n, ast.Call) and ast.unparse(n.func) == "len" and n.args and n.args[0] in names]
    first = next((n for n in definition.body if isinstance(n, ast.Assign) and _binds(n, listed)), None)
    if first is None or not isinstance(first.value, ast.List) or first.value.elts or len(names) != len(returns) + len(measured) + 2:
        return None
    loop = next((n for n in definition.body if isinstance(n, ast.For) and not n.orelse and _appended(n, listed)), None)
    zipped = _zipped(loop, definition) if loop is not None else None
    if zipped is None or any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(loop)):
        return None
    element = _appended(loop, listed)
    if isinstance(element, ast.Name):
        bound = [n for n in loop.body if isinstance(n, ast.Assign) and _binds(n, element.id)]
        element = bound[0].value if len(bound) == 1 and len(bound[0].targets) == 1 else None
    rebound = any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in zipped for s in loop.body for n in ast.walk(s))
    return (element, zipped) if isinstance(element, ast.Call) and not rebound else None


def _binds(statement: ast.Assign, name: str) -> bool:
    return any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)


def _appended(loop: ast.For, listed: str) -> ast.expr | None:
    """What `listed.append(x)`, a statement of the loop's own body, appends (its one call)."""
    for statement in loop.body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if isinstance(call, ast.Call) and ast.unparse(call.func) == f"{listed}.append" and len(call.args) == 1 and not call.keywords:
            return call.args[0]
    return None


def _zipped(loop: ast.For, definition) -> dict[str, str] | None:
    """The loop's names by the parameter each takes the elements of: `for a, b in zip(p, q)`,
    `for a in p`; None for another iterable."""
    params = {a.arg for a in (*definition.args.posonlyargs, *definition.args.args, *definition.args.kwonlyargs)}
    iterable, target = loop.iter, loop.target
    if isinstance(iterable, ast.Name) and iterable.id in params and isinstance(target, ast.Name):
        return {target.id: iterable.id}
    if not (isinstance(iterable, ast.Call) and ast.unparse(iterable.func) == "zip" and not iterable.keywords):
        return None
    lists, names = iterable.args, target.elts if isinstance(target, ast.Tuple) else []
    if len(lists) != len(names) or not all(isinstance(a, ast.Name) and a.id in params for a in lists):
        return None
    return {n.id: a.id for n, a in zip(names, lists) if isinstance(n, ast.Name)}  # type: ignore[attr-defined]


def _written(source) -> str | None:
    """How a function writes what `source` holds: `loader`, `self.train_loader`, `args.loader`
    (also handed through a wrapper: `enumerate(self.train_loader)`)."""
    if isinstance(source, Through):
        return _written(source.held)
    if isinstance(source, Param):
        return source.name
    if isinstance(source, SelfAttr):
        return f"self.{source.name}"
    if isinstance(source, Attr):
        held = _written(source.held)
        return f"{held}.{source.name}" if held is not None else None
    return None


def order_free(program, made_at: Place) -> bool:
    """Whether the DistributedSampler (or project sampler class followed as one) made at
    `made_at` hands its indices to datasets that never read them: every class the dataset it is given may be (`_dataset_classes`) is a project class
    whose `__getitem__` (its own or a project base's) never names its index parameter (it draws
    a random episode instead). The order of the indices then changes nothing a pass draws, and
    a missing set_epoch repeats no data. False where any class is unknown."""
    module = program.module_at(made_at)
    summary = program.summary(module) if module is not None else None
    for key, record in summary.functions.items() if summary is not None else ():
        for call in record.calls:
            if call.line != made_at.line:
                continue
            # a DistributedSampler, or a project sampler class shaped as one (its dataset first too)
            if program.qualify(module, call.callee) in DISTRIBUTED_SAMPLER or program.class_of(module, call.callee):
                dataset = call.keywords.get("dataset") or (call.args[0] if call.args else None)
                classes = _dataset_classes(program, module, key, dataset)
                return bool(classes) and all(_ignores_index(program, *made) for made in classes)
    return False


def _dataset_classes(program, module: str, key: str, source, depth: int = 0) -> set | None:
    """The project classes ((module, class)) whose objects `source` may hold in function `key`:
    made there (`EpisodeDataset(...)`), or returned by a project function at each of its returns
    (also at a position of the tuple it returns: `train_set, val_set = get_sets(args)`). A way of
    an `if` that binds nothing the model follows (None, or the name unbound) is left out, as the
    program model leaves it out of what a name holds. None where a way holds anything else."""
    if depth > 4 or source is None:
        return None
    if isinstance(source, Either):
        ways = [branch for branch in source.branches if branch is not None]
        found = [_dataset_classes(program, module, key, branch, depth) for branch in ways]
        return set().union(*found) if found and None not in found else None
    index = source.index if isinstance(source, Item) and isinstance(source.index, int) else None
    call = source.held if index is not None else source
    if not isinstance(call, CallResult) or call.data is not None:
        return None
    made = program.class_of(module, call.callee) if index is None else None
    if made is not None:
        return {made}
    record = program.function(module, key)
    target = program.target(module, key, record.cls if record is not None else None, call.callee)
    callee = program.function(target.module, target.key) if target is not None and not target.bound else None
    if callee is None or callee.other_returns or not callee.returns:
        return None
    found: set = set()
    for returned in callee.returns:
        if index is not None:
            returned = returned.items[index] if isinstance(returned, Group) and index < len(returned.items) else None
        classes = _dataset_classes(program, target.module, target.key, returned, depth + 1)
        if classes is None:
            return None
        found |= classes
    return found


def _ignores_index(program, module: str, cls: str) -> bool:
    """Whether the `__getitem__` that objects of project class `cls` of `module` run (its own, or
    a project base's) takes one index and never names it."""
    target = program.resolve(module, "self.__getitem__", cls)
    definition = program.definition(target.module, target.key) if target is not None else None
    if definition is None:
        return False
    arguments = definition.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    if len(positional) != 2 or arguments.vararg or arguments.kwarg or arguments.kwonlyargs:
        return False
    names = (positional[1], "locals", "vars")
    return not any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(definition))
