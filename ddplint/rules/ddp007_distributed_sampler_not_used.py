import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.semantic.edits import with_keyword_argument
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.prefilter.triggers import CallTrigger
from ddplint.core.torch_api import DISTRIBUTED_SAMPLER
from ddplint.analyses.branches import Branches, exclusive
from ddplint.analyses.samplers import Construction, LoaderFlow
from ddplint.prefilter.project_facts import ProjectFact


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

    The fix (safe) replaces `shuffle=True` with `sampler=<that sampler>` (the two are mutually
    exclusive; the sampler shuffles), or adds `sampler=` when the loader has no `shuffle`. It
    is offered only when exactly one such sampler exists and is built before the loader.
    """

    code = "DDP007"
    # the sampler may come from another module's builder, called through its module (`data.make_sampler(ds)`,
    # which the screen cannot bind)
    opened_by = unscreened_by = frozenset((ProjectFact.SAMPLER_BUILDER,))
    needs_ranks = True
    name = "distributed-sampler-not-used"
    frameworks = (Framework.DDP,)
    message = (
        "this DataLoader ignores the DistributedSampler over its dataset: every rank reads everything; "
        "pass sampler= instead of shuffle=True"
    )
    fix = Applicability.SAFE
    # `also`: the loader the sampler should have been given.
    trigger = CallTrigger(DISTRIBUTED_SAMPLER, also=("DataLoader",))

    analyses = (LoaderFlow, Branches)

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
    )
    clean_examples = (
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
        # Per construction (by id of its call): its branch path, and whether only a run
        # without distribution reaches it.
        self._places: dict[int, tuple] = {}

    def visit_Call(self, node: cst.Call) -> None:
        built = self.flow.constructions
        if built and built[-1].node is node:
            self._places[id(node)] = (self.branches.path, self.branches.not_distributed)

    def leave_Module(self, original_node: cst.Module) -> None:
        samplers = self.flow.of_kind("sampler")
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
