import re

import libcst as cst

from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.semantic.edits import argument_for, with_keyword_argument
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule, wrap_links
from ddplint.prefilter.triggers import CallTrigger
from ddplint.core.torch_api import DATALOADER, DISTRIBUTED_MARKERS, DISTRIBUTED_SAMPLER
from ddplint.analyses.branches import Branches, exclusive
from ddplint.analyses.ranks import WrappedModels
from ddplint.analyses.samplers import Construction, Loop, LoaderFlow
from ddplint.semantic.model import dotted_name
from ddplint.model.prepared import LOADER_PREPARES
from ddplint.prefilter.project_facts import ProjectFact


_SAMPLER_NAMES = tuple(sorted({spelling.rpartition(".")[2] for spelling in DISTRIBUTED_SAMPLER.spellings}))
# Words of a dataset's construction that may give each rank its own part (`rank=args.rank`,
# `Subset(ds, shard_indices(world_size))`): the rule cannot tell, so it stays silent.
_RANK_WORDS = re.compile(r"rank|world|replica|shard|node|gpus|nprocs|split_by|partition", re.IGNORECASE)


class DistributedSamplerNotUsed(Rule):
    """
    A `DistributedSampler` only splits the data if the DataLoader draws from it. When the
    sampler is built but the DataLoader over the same dataset gets `shuffle=True` (or no
    sampler at all), the loader shuffles the whole dataset on its own: every rank reads every
    sample, an epoch takes as many steps as on one GPU, and the speed-up users expect from
    more GPUs never comes (a field report measured no gain from two to three machines).

    Fires when a DataLoader that a distributed run reaches draws from no sampler while a
    DistributedSampler over the same dataset is built where the same pass can build it.

    Flagged: a DataLoader that passes neither `sampler=` nor `batch_sampler=` while a
    DistributedSampler over the same dataset (the same name, in the same function or module;
    or a sampler a project helper builds over the argument it is given,
    `train_sampler, _ = make_samplers(train_set, val_set)`, also called through its module:
    `sampler = data.make_sampler(train_set)`) exists, and either the loader asks for `shuffle=True` or that sampler is given to no
    DataLoader at all. Loaders over another dataset, and validation loaders with their own
    sampler, are not flagged; nor is a loader in the branch only a run without distribution
    takes (`else:` of `if args.distributed:`), or one whose sampler is built in the other
    branch of an `if` (the two never meet).

    Flagged too, without any DistributedSampler: a DataLoader with `shuffle=True` and no sampler
    over a dataset built in the file from nothing that names a rank, which a loop of the file
    (or a same-module function the loader is handed to) iterates while it runs `backward`, in a
    file that runs the forward of a DDP model and that ranks run. Every rank then trains on the
    whole dataset each epoch. A loader rebound to what `accelerator.prepare` or Fabric's
    `setup_dataloaders` returns (they shard it into a new loader), a dataset given a rank, world
    size or shard, and a dataset that comes from a parameter or another module (it may be split
    there) stay silent. The loader prepare is handed stays unsharded (Accelerate re-creates the
    loader it returns, a DataLoaderShard, and leaves the one it is handed as it was; its
    "internal mechanisms" guide, v0.34 to 1.x): where prepare's loader is dropped
    (`optimizer, _ = accelerator.prepare(optimizer, loader)`) and the loop iterates the
    original, it is flagged.

    Flagged too, in a data module: a DataLoader with `shuffle=True` and no sampler, over a
    dataset its module-level function builds from nothing that names a rank, which the function
    returns, where a script importing the function binds its result once, hands that loader, or
    a copy of it (`deepcopy(loader)`), to Accelerate's `prepare` without keeping the loader
    prepare returns (`model, optimizer, _ = accelerator.prepare(model, optimizer,
    deepcopy(loader))`), and iterates its own loader in a loop that runs backward, and a
    command launches that script on several processes (or it starts the ranks itself). Every
    process then trains on the whole dataset, in its own order.

    Those findings have no fix: the sampler also needs `set_epoch` (DDP003), or the loop should
    iterate the loader prepare returns.

    The fix (safe) replaces `shuffle=True` with `sampler=<that sampler>` (the two are mutually
    exclusive; the sampler shuffles), or adds `sampler=` when the loader has no `shuffle`. It
    is offered only when exactly one such sampler exists and is built before the loader.
    """

    code = "DDP007"
    # the sampler may come from another module's builder, called through its module (`data.make_sampler(ds)`,
    # which the screen cannot bind)
    # or the loop that trains on the loader a function here returns may be in a module importing it
    opened_by = frozenset((ProjectFact.SAMPLER_BUILDER, ProjectFact.TRAINED_UNPREPARED))
    unscreened_by = frozenset((ProjectFact.SAMPLER_BUILDER,))
    needs_ranks = True
    name = "distributed-sampler-not-used"
    frameworks = (Framework.DDP, Framework.ACCELERATE)
    message = (
        "this DataLoader ignores the DistributedSampler over its dataset: every rank reads everything; "
        "pass sampler= instead of shuffle=True"
    )
    fix = Applicability.SAFE
    # `also`: the loader the sampler should have been given.
    # A loader with no sampler at all is the pitfall too, where the file trains a DDP model
    # (`backward`) on it.
    trigger = CallTrigger(
        DISTRIBUTED_SAMPLER | DATALOADER, also=(DISTRIBUTED_MARKERS, "DataLoader", (*_SAMPLER_NAMES, "backward"))
    )

    analyses = (LoaderFlow, Branches, WrappedModels)

    flagged_examples = (
        Flagged(
            # The seed: the sampler is built, the loader shuffles by itself.
            """
            import torch.utils.data
            import torch.utils.data.distributed

            train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
            train_loader = torch.utils.data.DataLoader(train_dataset,
                           ^
                batch_size=args.batch_size, shuffle=True, **kwargs)
            """,
            fix_edits=(("shuffle=True", "sampler=train_sampler"),),
            messages=(
                "this DataLoader ignores the DistributedSampler `train_sampler`: every rank reads the whole "
                "dataset; pass sampler= instead of shuffle=True"
            ),
        ),
        Flagged(
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def build(dataset, batch_size):
                sampler = DistributedSampler(dataset, shuffle=True)
                return DataLoader(dataset, batch_size=batch_size, num_workers=4)
                       ^
            """,
            fix_edits=(("num_workers=4", "num_workers=4, sampler=sampler"),),
            messages=(
                "this DataLoader ignores the DistributedSampler `sampler`: every rank reads the whole dataset; "
                "pass sampler= instead of shuffle=True"
            ),
        ),
        Flagged(
            """
            from torch.utils import data

            class Trainer:
                def setup(self):
                    self.sampler = data.DistributedSampler(self.train_set)
                    self.loader = data.DataLoader(
                                  ^
                        self.train_set,
                        batch_size=16,
                        shuffle=True,
                    )
            """,
            fix_edits=(("shuffle=True", "sampler=self.sampler"),),
            messages=(
                "this DataLoader ignores the DistributedSampler `self.sampler`: every rank reads the whole "
                "dataset; pass sampler= instead of shuffle=True"
            ),
        ),
        Flagged(
            # Two candidate samplers: which one is meant is not clear, so no fix.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            a = DistributedSampler(ds, seed=1)
            b = DistributedSampler(ds, seed=2)
            loader = DataLoader(ds, shuffle=True)
                     ^
            """,
            messages=(
                "this DataLoader ignores the DistributedSampler over its dataset: every rank reads the whole "
                "dataset; pass sampler= instead of shuffle=True"
            ),
        ),
        Flagged(
            # Sampler and loader in the distributed branch: they run together.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def loaders(args, train_set):
                if args.distributed:
                    sampler = DistributedSampler(train_set)
                    loader = DataLoader(train_set, shuffle=True)
                             ^
                else:
                    loader = DataLoader(train_set, shuffle=True)
                return loader
            """,
            fix_edits=(
                (
                    "sampler = DistributedSampler(train_set)\n"
                    "        loader = DataLoader(train_set, shuffle=True)",
                    "sampler = DistributedSampler(train_set)\n"
                    "        loader = DataLoader(train_set, sampler=sampler)",
                ),
            ),
            messages=(
                "this DataLoader ignores the DistributedSampler `sampler`: every rank reads the whole dataset; "
                "pass sampler= instead of shuffle=True"
            ),
        ),
        Flagged(
            # No sampler at all: the loop trains the DDP model on a loader every rank shuffles whole.
            """
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.utils.data import DataLoader

            def main(args):
                dist.init_process_group("nccl")
                model = DDP(Net().cuda(), device_ids=[args.local_rank])
                train_set = ImageFolder(args.data)
                loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8)
                         ^
                for epoch in range(args.epochs):
                    train_one_epoch(model, loader, optimizer)

            def train_one_epoch(model, loader, optimizer):
                for images, labels in loader:
                    loss = criterion(model(images), labels)
                    loss.backward()
                    optimizer.step()
            """,
            messages=(
                "this DataLoader shuffles the whole dataset in every process and no DistributedSampler splits "
                "it: each rank trains on every sample, so an epoch takes as long as on one GPU; pass "
                "sampler=DistributedSampler(train_set) instead of shuffle=True"
            ),
        ),
        Flagged(
            # Accelerate's prepare returns a sharded loader; the loop iterates the one it was handed.
            """
            from accelerate import Accelerator
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.utils.data import DataLoader

            def main(args):
                accelerator = Accelerator()
                model = DDP(Net().to(accelerator.device))
                loader = DataLoader(ImageFolder(args.data), batch_size=32, shuffle=True)
                         ^
                optimizer, _ = accelerator.prepare(torch.optim.SGD(model.parameters(), lr=0.1), loader)
                for images, labels in loader:
                    accelerator.backward(criterion(model(images), labels))
                    optimizer.step()
            """,
            messages=(
                "this DataLoader shuffles the whole dataset in every process and no DistributedSampler splits "
                "it: each rank trains on every sample, so an epoch takes as long as on one GPU; pass "
                "sampler=DistributedSampler(ImageFolder(args.data)) instead of shuffle=True"
            ),
        ),
    )
    clean_examples = (
        Clean(
            # The loop iterates what prepare returned (bound to the same name, or another).
            """
            from accelerate import Accelerator
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.utils.data import DataLoader

            def main(args):
                accelerator = Accelerator()
                model = DDP(Net().to(accelerator.device))
                loader = DataLoader(ImageFolder(args.data), batch_size=32, shuffle=True)
                extra = DataLoader(ImageFolder(args.extra), batch_size=32, shuffle=True)
                optimizer, loader = accelerator.prepare(torch.optim.SGD(model.parameters(), lr=0.1), loader)
                extra_shards = accelerator.prepare(extra)
                for epoch in range(args.epochs):
                    for images, labels in loader:
                        accelerator.backward(criterion(model(images), labels))
                        optimizer.step()
                    for images, labels in extra_shards:
                        accelerator.backward(criterion(model(images), labels))
                        optimizer.step()
            """
        ),
        Clean(
            # No sampler, but nothing trains a DDP model on the loader here (an evaluation that
            # shuffles; the training loader is split by rank, or sharded by Accelerate).
            """
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.utils.data import DataLoader

            def main(args, accelerator):
                dist.init_process_group("nccl")
                model = DDP(Net().cuda())
                shards = ShardedSet(args.data, rank=dist.get_rank())
                loader = DataLoader(shards, batch_size=64, shuffle=True)
                probe = DataLoader(ImageFolder(args.val), batch_size=64, shuffle=True)
                extra = DataLoader(ImageFolder(args.extra), batch_size=64, shuffle=True)
                extra = accelerator.prepare(extra)
                for epoch in range(args.epochs):
                    for x, y in loader:
                        criterion(model(x), y).backward()
                    for x, y in extra:
                        criterion(model(x), y).backward()
                    with torch.no_grad():
                        scores = [model(x) for x, _ in probe]

            def single(args):
                model = Net()
                loader = DataLoader(ImageFolder(args.data), shuffle=True)
                for x, y in loader:
                    model(x).sum().backward()
            """
        ),
        Clean(
            # The shuffling loader is the non-distributed branch's; the sampler is the other's.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def loaders(args, train_set):
                if args.distributed:
                    sampler = DistributedSampler(train_set)
                    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
                else:
                    loader = DataLoader(train_set, batch_size=32, shuffle=True)
                return loader

            def unlabelled(args, extra_set):
                if args.use_sampler:
                    sampler = DistributedSampler(extra_set)
                else:
                    return DataLoader(extra_set, shuffle=True)
                return DataLoader(extra_set, sampler=sampler)
            """
        ),
        Clean(
            # Train and validation loaders, each with its own sampler.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            train_sampler = DistributedSampler(train_set)
            val_sampler = DistributedSampler(val_set, shuffle=False)
            train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
            val_loader = DataLoader(val_set, batch_size=32, sampler=val_sampler)
            """
        ),
        Clean(
            # A loader over another dataset, while the sampler is used by its own loader.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            sampler = DistributedSampler(train_set)
            loader = DataLoader(train_set, sampler=sampler)
            test_loader = DataLoader(test_set, batch_size=100, shuffle=True)
            """
        ),
        Clean(
            # Single-process code: no DistributedSampler at all.
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=64, shuffle=True)
            """
        ),
        Clean(
            # A BatchSampler over the sampler; and **kwargs that may carry the sampler.
            """
            from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, batch_sampler=BatchSampler(sampler, 8, False))

            def build(dataset, **options):
                DistributedSampler(dataset)
                return DataLoader(dataset, **options)
            """
        ),
        Clean(
            # The same name in two functions is two different datasets.
            """
            from torch.utils.data import DataLoader, DistributedSampler

            def train_loader(dataset):
                return DataLoader(dataset, sampler=DistributedSampler(dataset))

            def single_gpu_loader(dataset):
                return DataLoader(dataset, shuffle=True)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self.flow = model.get(LoaderFlow)
        self.branches = model.get(Branches)
        self.wrapped = model.get(WrappedModels)
        # Per construction (by id of its call): its branch path, and whether only a run
        # without distribution reaches it.
        self._places: dict[int, tuple] = {}
        # Loops (by id of their node) that run a backward, and those that run a forward of a DDP
        # model, with the steps that say where it was wrapped; `_direct`: those whose own body
        # (no loop inside it) runs them.
        self._backward_loops: set[int] = set()
        self._forward_loops: dict[int, tuple[Link, ...]] = {}
        self._direct_backward: set[int] = set()
        self._direct_forward: set[int] = set()
        self._values: dict[object, list[cst.BaseExpression]] = {}  # what each name was assigned
        self._sharded: set = set()  # names bound to what a library that shards loaders returns (Accelerate's prepare)
        self._returned: list[tuple[cst.BaseExpression, str]] = []  # what module-level functions return, and which

    def visit_Call(self, node: cst.Call) -> None:
        built = self.flow.constructions
        if built and built[-1].node is node:
            self._places[id(node)] = (self.branches.path, self.branches.not_distributed)
        func = node.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "backward":
                self._backward_loops.update(id(loop.node) for loop in self.flow.open_loops)
                self._direct_backward.update(id(loop.node) for loop in self.flow.open_loops[-1:])
        if self.wrapped.is_wrapped(func):
            links = wrap_links(dotted_name(func), self.wrapped.wrap_site(func))
            for loop in self.flow.open_loops:
                self._forward_loops.setdefault(id(loop.node), links)
            self._direct_forward.update(id(loop.node) for loop in self.flow.open_loops[-1:])

    def visit_Return(self, node: cst.Return) -> None:
        frame = self.model.frame
        if node.value is not None and frame.is_function and frame.parent is not None and isinstance(frame.parent.node, cst.Module):
            self._returned.append((node.value, frame.key))  # a module-level function's result

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        prepares = isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in LOADER_PREPARES
        for target in node.targets:
            ref = self.flow.ref(target.target)
            if ref is not None:
                self._values.setdefault(ref, []).append(node.value)
            if prepares:  # what prepare returns is sharded; what it is handed stays as it was, unless rebound to it
                parts = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target]
                names = {dotted_name(part.value if isinstance(part, cst.Element) else part) for part in parts} - {None}
                handed = [arg.value for arg in value.args if dotted_name(arg.value) in names]  # type: ignore[union-attr]
                self._sharded.update(filter(None, map(self.flow.ref, handed)))

    def leave_Module(self, original_node: cst.Module) -> None:
        samplers = self.flow.of_kind("sampler")
        self._unsplit_loaders(samplers)
        if not samplers:
            return
        for loader in self.flow.of_kind("loader"):
            if loader.sampler is not None or loader.batch_sampler is not None or loader.dataset is None:
                continue
            if loader.dataset_built_inline:
                continue
            path, not_distributed = self._places.get(id(loader.node), ((), False))
            if not_distributed:
                continue  # `else:` of `if args.distributed:`: a single process reads everything
            same_data = [
                s for s in samplers
                if s.dataset == loader.dataset and not exclusive(path, self._places.get(id(s.node), ((), False))[0])
            ]
            unused = [s for s in same_data if not self.flow.loaders_of(s)]
            if loader.shuffle_is_true and same_data:
                self._report(loader, unused or same_data)
            elif unused and loader.shuffle is None and not loader.star_kwargs:
                self._report(loader, unused)

    def _unsplit_loaders(self, samplers: list[Construction]) -> None:
        """Shuffling loaders that nothing splits between the ranks, which a loop trains a DDP
        model on: every rank runs the whole epoch."""
        runs = self.runs_link() if self._forward_loops and self._backward_loops else None
        for loader in self.flow.of_kind("loader"):
            if not loader.shuffle_is_true or loader.draws or loader.star_kwargs or loader.dataset is None:
                continue  # (shuffle=True also rules out an IterableDataset, which shards itself or not at all)
            if self._places.get(id(loader.node), ((), False))[1] or any(s.dataset == loader.dataset for s in samplers):
                continue  # the one-process branch; or a sampler over the same data, the other finding
            refs = self.flow.refs(loader)
            if refs & self._sharded or not self._whole_dataset(loader):
                continue
            if self._trained_elsewhere(loader, refs) or runs is None:
                continue
            training = next(filter(None, map(self._trains, self.flow.passes_over(loader))), None)
            if training is None:
                continue
            loop, forward = training
            name = self.model.module.code_for_node(argument_for(loader.node, DATALOADER, "dataset").value)
            chain = [
                runs, *forward,
                Link(StepKind.REACHES, "this loop trains the DDP model on the loader's batches (it runs backward)", loop.node),
                Link(StepKind.HARM, "the loader shuffles the whole dataset in every process: no rank gets a part of it", loader.node),
            ]
            self.report(
                loader.node,
                "this DataLoader shuffles the whole dataset in every process and no DistributedSampler splits it: "
                "each rank trains on every sample, so an epoch takes as long as on one GPU; "
                f"pass sampler=DistributedSampler({name}) instead of shuffle=True",
                chain=chain,
            )

    def _trained_elsewhere(self, loader: Construction, refs: set) -> bool:
        """Report the loader where a module-level function here returns it and a module
        importing that function trains on it unsharded, though it hands it, or a copy, to
        Accelerate's prepare (ProjectView.trained_unprepared); whether it did."""
        project = self.model.project
        function = next((key for value, key in self._returned if value is loader.node or self.flow.ref(value) in refs), None)
        places = project.trained_unprepared.get(function, []) if project is not None and function is not None else []
        # the first whose script a command launches on several processes, else one that starts the ranks itself
        launched = [(found, project.seen_from(found.importer).launch_line(own=True)) for found in places]
        found, launch = next(((found, launch) for found, launch in launched if launch is not None), (None, None))
        started = None
        for candidate in places if found is None else ():
            started = project.seen_from(candidate.importer).ranks_started()
            if started is not None:
                found = candidate
                break
        if found is None:
            return False
        name = self.model.module.code_for_node(argument_for(loader.node, DATALOADER, "dataset").value)
        runs = (Link(StepKind.RUNS, "this command runs the script on several processes", launch) if launch is not None else
                Link(StepKind.RUNS, f"every rank runs the script: it {started[1]}", started[0]))  # type: ignore[index]
        chain = [
            runs,
            Link(StepKind.MADE, f"the script binds the loader {function}() returns, and {found.describe()}", found.bound),
            Link(StepKind.REACHES, "this loop trains on the script's own loader, not the one prepare returned (it runs backward)", found.loop),
            Link(StepKind.HARM, "the loader shuffles the whole dataset in every process: no rank gets a part of it", loader.node),
        ]
        self.report(
            loader.node,
            "this DataLoader shuffles the whole dataset in every process: the script that trains on it iterates it "
            f"unsharded ({found.describe()}; prepare shards only the new loader it returns); iterate the loader "
            f"prepare returns, or pass sampler=DistributedSampler({name}) instead of shuffle=True",
            chain=chain,
        )
        return True

    def _trains(self, loop: Loop) -> tuple[Loop, tuple[Link, ...]] | None:
        """`loop` with the wrap steps of the DDP model it trains, when it runs that model's
        forward and a backward; for an `iter()` pull, the loop around it, where its own body
        runs both (not a loop inside it, which iterates something else); None otherwise."""
        if loop.pull:
            if not loop.outer or not {id(loop.outer[-1].node)} <= self._direct_backward & self._direct_forward:
                return None
            loop = loop.outer[-1]
        forward = self._forward_loops.get(id(loop.node))
        return (loop, forward) if forward is not None and id(loop.node) in self._backward_loops else None

    def _whole_dataset(self, loader: Construction) -> bool:
        """Whether the loader's dataset is built here, from nothing that may give each rank
        its own part; unknown (a parameter, another module's object) is not."""
        given = argument_for(loader.node, DATALOADER, "dataset").value
        values = [given] if isinstance(given, cst.Call) else self._values.get(loader.dataset, [])
        code = self.model.module.code_for_node
        return bool(values) and all(isinstance(v, cst.Call) and not _RANK_WORDS.search(code(v)) for v in values)

    def _report(self, loader: Construction, candidates: list[Construction]) -> None:
        node = loader.node
        sampler = candidates[0] if len(candidates) == 1 else None
        path = None
        if sampler is not None and (sampler.function is not loader.function or sampler.order < loader.order):
            path = self.flow.visible_path(self.flow.refs(sampler), loader.function)
        shown = f"`{path}`" if path else "over its dataset"
        made = f" (the sampler is built in {sampler.elsewhere})" if sampler is not None and sampler.elsewhere else ""
        message = (
            f"this DataLoader ignores the DistributedSampler {shown}: every rank reads the whole "
            f"dataset; pass sampler= instead of shuffle=True{made}"
        )
        shuffle = loader.shuffle
        if path is None or (shuffle is not None and (shuffle.keyword is None or not loader.shuffle_is_true)):
            self.report(node, message)
            return
        value = cst.parse_expression(path)
        if shuffle is None:
            fixed = with_keyword_argument(node, "sampler", value)
        else:
            sampler_arg = shuffle.with_changes(keyword=cst.Name("sampler"), value=value)
            fixed = node.with_changes(args=[sampler_arg if arg is shuffle else arg for arg in node.args])
        self.report(node, message, replace={node: fixed})
