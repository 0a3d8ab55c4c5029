import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.prefilter.triggers import CallTrigger
from ddplint.core.torch_api import DISTRIBUTED_SAMPLER, LIBRARY_LOADERS
from ddplint.analyses.samplers import Construction, Endless, Function, LoaderFlow, Loop, Ref
from ddplint.prefilter.project_facts import ProjectFact


class MissingSetEpoch(Rule):
    """
    `DistributedSampler` shuffles with a generator seeded by `seed + epoch`, and it only learns
    the epoch from `sampler.set_epoch(epoch)`. Without that call every epoch replays the order of
    epoch 0: each rank sees the same samples in the same order every epoch, which quietly
    hurts convergence (no error is ever raised).

    Fires when a loop (the epoch loop) surrounds the iteration of a DataLoader that draws from a
    shuffling DistributedSampler — directly, through a `BatchSampler`, or in a same-module
    function the loop calls — and no `set_epoch` reaches that sampler inside the loop (on the
    sampler, `loader.sampler`, `loader.batch_sampler.sampler`, or in a function the loop calls).
    An endless generator that re-iterates the loader (`while True: for x in loader: yield x`)
    is an epoch loop too: each pass starts a new epoch. timm's `create_loader(...,
    is_training=True, distributed=...)` builds such a loader (its sampler is `loader.sampler`).

    With the project index, the sampler or the loader may come from a helper of another
    module that returns it, alone or in a tuple (`loader, sampler = build(dataset)`); and the
    endless generator may be defined in another module (`dl = cycle(loader)`, with `cycle`
    in `utils.py`): then the call is reported, without a fix, when no `set_epoch` of this
    module may reach the sampler. An epoch loop may also hand the loader to a function of
    another module that makes one pass over it and never calls set_epoch
    (`train_one_epoch(model, loader, ...)` in `engine.py`, iterating `loader` or
    `enumerate(logger.log_every(loader, 10))`, and using it for nothing else but `len()` and
    attribute reads). A project function or method that hands the loader back
    unchanged (`train_loader = backend.prepare_loader(loader)`, where every return of
    `prepare_loader` is its argument) keeps it the same loader.

    The fix (safe) inserts `<sampler>.set_epoch(<loop variable>)` as the first statement of
    the epoch loop. It is offered only for `for <name> in range(...)`; other loops are reported
    without a fix, since their variable may not be an epoch number.
    """

    code = "DDP003"
    # the sampler may come from another module's builder, the loop from its endless generator
    opened_by = frozenset((ProjectFact.SAMPLER_BUILDER, ProjectFact.ENDLESS_WRAPPER))
    needs_ranks = True
    name = "missing-set-epoch"
    frameworks = (Framework.DDP, Framework.TIMM)
    message = (
        "DistributedSampler never gets set_epoch in this epoch loop: every epoch repeats the same order; "
        "call sampler.set_epoch(epoch) first"
    )
    fix = Applicability.SAFE
    # `also`: the sampler is only ever reported in a file with a loop (`for` or `while`); timm's
    # create_loader builds one inside.
    trigger = CallTrigger(DISTRIBUTED_SAMPLER | LIBRARY_LOADERS, also=("for",))

    analyses = (LoaderFlow,)

    flagged_examples = (
        Flagged(
            # timm's create_loader(is_training=True, distributed=...) draws from a shuffling DistributedSampler.
            """
            from timm.data import create_loader

            def main(args, dataset_train, model):
                loader_train = create_loader(dataset_train, (3, 224, 224), 128, is_training=True, distributed=True)
                for epoch in range(args.epochs):
                ^
                    for images, target in loader_train:
                        model.step(images, target)
            """,
            fixed="""
            from timm.data import create_loader

            def main(args, dataset_train, model):
                loader_train = create_loader(dataset_train, (3, 224, 224), 128, is_training=True, distributed=True)
                for epoch in range(args.epochs):
                    loader_train.sampler.set_epoch(epoch)
                    for images, target in loader_train:
                        model.step(images, target)
            """,
            messages=(
                "DistributedSampler `loader_train.sampler` never gets set_epoch() in this epoch loop: every "
                "epoch repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
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
                    step(batch)
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
                        step(batch)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler

            def main(dataset, epochs):
                sampler = DistributedSampler(dataset)
                loader = DataLoader(dataset, batch_size=32, sampler=sampler)
                for epoch in range(epochs):
                    sampler.set_epoch(epoch)
                    for batch in loader:
                        step(batch)
            """,
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
                    optimizer.step()

            def main(args, dataset, model, optimizer):
                sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True)
                data_loader_train = torch.utils.data.DataLoader(dataset, sampler=sampler, batch_size=64)
                for epoch in range(args.epochs):
                ^
                    train_one_epoch(model, data_loader_train, optimizer)
            """,
            fixed="""
            import torch

            def train_one_epoch(model, data_loader, optimizer):
                for images, labels in data_loader:
                    optimizer.step()

            def main(args, dataset, model, optimizer):
                sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True)
                data_loader_train = torch.utils.data.DataLoader(dataset, sampler=sampler, batch_size=64)
                for epoch in range(args.epochs):
                    sampler.set_epoch(epoch)
                    train_one_epoch(model, data_loader_train, optimizer)
            """,
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
                        self.update(batch)

                def fit(self, epochs):
                    for epoch in range(epochs):
                    ^
                        self.train_epoch()
            """,
            fixed="""
            import torch.utils.data as data

            class Trainer:
                def __init__(self, dataset):
                    self.train_sampler = data.distributed.DistributedSampler(dataset)
                    self.train_loader = data.DataLoader(dataset, batch_size=8, sampler=self.train_sampler)

                def train_epoch(self):
                    for step, batch in enumerate(self.train_loader):
                        self.update(batch)

                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.train_sampler.set_epoch(epoch)
                        self.train_epoch()
            """,
            messages=(
                "DistributedSampler `self.train_sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
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
                    train(x)
            """,
            fixed="""
            from torch.utils.data import DataLoader, DistributedSampler as DS

            loader = DataLoader(dataset, batch_size=4, sampler=DS(dataset))
            for epoch in range(10):
                loader.sampler.set_epoch(epoch)
                for x in loader:
                    train(x)
            """,
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
                    step(batch)
            """,
            fixed="""
            from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

            train_sampler = DistributedSampler(train_set)
            val_sampler = DistributedSampler(val_set)
            batches = BatchSampler(train_sampler, 32, drop_last=True)
            train_loader = DataLoader(train_set, batch_sampler=batches)
            for epoch in range(5):
                train_sampler.set_epoch(epoch)
                val_sampler.set_epoch(epoch)
                for batch in train_loader:
                    step(batch)
            """,
            messages=(
                "DistributedSampler `train_sampler` never gets set_epoch() in this epoch loop: every epoch "
                "repeats the same shuffled order; call set_epoch(epoch) first in the loop body"
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
                        step(batch)
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
                    train(next(dl))
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
                        step(batch)
            """,
            messages=(
                "This DistributedSampler never gets set_epoch() in this epoch loop: every epoch repeats the same "
                "shuffled order; call set_epoch(epoch) first in the loop body"
            ),
        ),
    )
    clean_examples = (
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
                        step(net, images, labels)
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
                    step(batch)
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
                    evaluate(batch)
            """
        ),
        Clean(
            # set_epoch through the loader, under an if, or in the function the loop calls.
            """
            import torch

            def train_one_epoch(loader, epoch):
                loader.sampler.set_epoch(epoch)
                for batch in loader:
                    step(batch)

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
                        step(batch)
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
                    step(batch)
                for batch in b:
                    step(batch)
            """
        ),
        Clean(
            # Iterated once, not inside an epoch loop.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def run(dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
                for batch in loader:
                    step(batch)
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
                    step(data, target)

            for epoch in range(1, args.epochs + 1):
                train_sampler.set_epoch(epoch)
                train(epoch)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self.flow = model.get(LoaderFlow)

    def leave_Module(self, original_node: cst.Module) -> None:
        flow = self.flow
        reported: set[tuple[int, int]] = set()
        for sampler in flow.of_kind("sampler"):
            if sampler.shuffle_is_false:
                continue
            for loader, path in flow.loaders_of(sampler):
                for loop, loader_names in flow.epoch_loops(loader):
                    key = (id(loop), id(sampler))
                    if key in reported or flow.sets_epoch(loop, sampler):
                        continue
                    reported.add(key)
                    self._report(loop, sampler, loader_names, path)
                for call in flow.endless_calls(loader):
                    key = (id(call.node), id(sampler))
                    if key in reported or flow.sets_epoch_anywhere(sampler):
                        continue
                    reported.add(key)
                    self._report_endless(call, sampler, loader, path)

    def _report_endless(self, call: Endless, sampler: Construction, loader: Construction, path: str) -> None:
        """At the call of another module's endless generator: no fix, the loop is there."""
        expression, _ = self._expression(call.function, sampler, self.flow.refs(loader), path)
        self.report(
            call.node,
            f"{_shown(expression)} never gets set_epoch(): its DataLoader is re-iterated forever by "
            f"{call.name}() in {call.where}, and every pass repeats the same shuffled order; "
            f"call set_epoch(epoch) before each pass{_built_in(sampler)}",
        )

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

    def _report(self, loop: Loop, sampler: Construction, loader_names: set[Ref], path: str) -> None:
        expression, ambiguous = self._expression(loop.function, sampler, loader_names, path)
        node = loop.node
        target = node.target if isinstance(node, cst.For) else None
        passes = self.flow.passes.get(id(loop))
        through = f" (the loader is iterated by {passes})" if passes else ""
        message = (
            f"{_shown(expression)} never gets set_epoch() in this epoch loop{through}: every epoch repeats the same "
            f"shuffled order; call set_epoch(epoch) first in the loop body{_built_in(sampler)}"
        )
        if (
            expression is None
            or ambiguous
            or not isinstance(target, cst.Name)
            or target.value == "_"
            or not _is_range(node.iter)  # type: ignore[union-attr]
            or not isinstance(node.body, cst.IndentedBlock)
        ):
            self.report(node, message)
            return
        line = cst.parse_statement(f"{expression}.set_epoch({target.value})\n")
        body = node.body.with_changes(body=[line, *node.body.body])
        self.report(node, message, replace={node: node.with_changes(body=body)})


def _shown(expression: str | None) -> str:
    return f"DistributedSampler `{expression}`" if expression else "This DistributedSampler"


def _built_in(sampler: Construction) -> str:
    return f" (sampler built in {sampler.elsewhere})" if sampler.elsewhere else ""


def _is_range(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range"
