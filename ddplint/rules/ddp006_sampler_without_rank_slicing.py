from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.semantic.edits import is_docstring, keyword_argument, module_alias, names_in, replace_nodes, unique_name, with_keyword_argument
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.prefilter.triggers import SubclassTrigger
from ddplint.core.torch_api import DISTRIBUTED_SAMPLER, MANUAL_SEED, SAMPLER
from ddplint.analyses.samplers import SamplerClass, SamplerClasses, called_on_self
from ddplint.model.records import CallResult
from ddplint.prefilter.project_facts import ProjectFact

# A plain Sampler whose constructor takes `num_replicas` and `rank` is written to be the
# distributed sampler (bucketing samplers often are), and must shard just the same.
REPLICA_PARAMETERS = ("num_replicas", "rank")

ALL_RANKS_ITER = "_iter_all_ranks"
ALL_RANKS_LEN = "_len_all_ranks"

_SHARED_ITER = f"""
def __iter__(self):
    # DDP006: each rank takes an equal, disjoint share of what {ALL_RANKS_ITER} yields
    indices = list(self.{ALL_RANKS_ITER}())
    padding = -len(indices) % self.num_replicas
    if self.drop_last:
        indices = indices[: len(indices) - len(indices) % self.num_replicas]
    elif indices and padding:
        indices += (indices * (padding // len(indices) + 1))[:padding]
    return iter(indices[self.rank::self.num_replicas])
"""

_SHARED_LEN = f"""
def __len__(self):
    total = self.{ALL_RANKS_LEN}()
    if self.drop_last:
        return total // self.num_replicas
    return -(-total // self.num_replicas)
"""

# The fix's methods as a fixed example's class holds them, next to the user's own renamed
# method: the examples' goldens add them with `fix_edits`.
_EXAMPLE_ITER = textwrap.indent(_SHARED_ITER, "    ")
_EXAMPLE_LEN = textwrap.indent(_SHARED_LEN, "    ")


# Draws from a process-wide generator: each rank's state differs (seeded per rank, or not at
# all), so a shuffle made with one of these gives every rank its own order.
_GLOBAL_DRAWS = {
    "random": frozenset({
        "shuffle", "sample", "choice", "choices", "random", "randint", "randrange", "uniform",
        "getrandbits", "randbytes", "gauss", "normalvariate", "triangular", "betavariate",
        "expovariate", "gammavariate", "lognormvariate", "paretovariate", "vonmisesvariate",
        "weibullvariate", "binomialvariate",
    }),
    "numpy.random": frozenset({
        "permutation", "shuffle", "choice", "randint", "random_integers", "rand", "randn",
        "random", "random_sample", "ranf", "sample", "uniform", "normal", "bytes",
    }),
    "torch": frozenset({"randperm", "randint", "rand", "randn", "multinomial", "normal", "bernoulli", "poisson"}),
}
_GLOBAL_SEEDS = {"random.seed": "random", "numpy.random.seed": "numpy.random", **dict.fromkeys(MANUAL_SEED, "torch")}
# Generators that, built without a seed, seed themselves from the OS: a different one per rank.
_SELF_SEEDING = frozenset({"random.Random", "numpy.random.default_rng", "numpy.random.RandomState"})
_SEED = "self.seed + self.epoch"
_SEED_COMMENT = "# DDP006: seeded like DistributedSampler, so every rank draws the same order"


@dataclass(frozen=True)
class _Draw:
    """A call in a method that draws from a generator no rank shares."""

    call: cst.Call
    family: str  # "random", "numpy.random", "torch", or "own" (a self-seeding constructor)
    name: str  # as written, for the message


def _method(source: str) -> cst.FunctionDef:
    method = cst.parse_statement(source.lstrip("\n"))
    assert isinstance(method, cst.FunctionDef)
    return method.with_changes(leading_lines=[cst.EmptyLine(indent=False)])


class SamplerWithoutRankSlicing(Rule):
    """
    `DistributedSampler.__iter__` is what gives each rank its own share: it pads or trims the
    index list to a multiple of the world size and keeps every `num_replicas`-th index from
    `rank`. A subclass that overrides `__iter__` — typically a bucketing sampler copied from
    single-GPU code with only its base class changed — and never selects by rank hands every
    rank the whole dataset: each epoch does N times the work, and when per-rank lengths differ
    the ranks run out of batches at different steps and DDP hangs at the end of the epoch.

    Fires when a class derives from DistributedSampler (directly or through a base class of the
    same module), or from a plain Sampler with a constructor that takes `num_replicas` and
    `rank` (written to be the distributed sampler), and its `__iter__` (and the methods it calls on self) neither reads `self.rank`
    or `self.num_replicas`, nor calls `dist.get_rank()`, nor delegates to `super().__iter__()`,
    nor yields an attribute sharded by rank in `__init__` (computed from `self.rank`,
    `dist.get_rank()`, the constructor's own `rank`/`num_replicas` parameters, locals and
    attributes derived from them, or a method that reads them). Nor where every object of
    the class the project makes (each one the program model reads, one at least) is handed a
    dataset that keeps only the rank's share itself: an object of a project class made in the
    same function with the same rank the sampler is given (`Lines(path, rank=args.rank)` and
    `Shuffler(lines, rank=args.rank)`), whose constructor, or a method it calls on self, takes
    an item by that rank (`bounds[self.rank]`, `lines[self.rank::n]`): every index the sampler
    yields then names one of the rank's own items.

    The fix (unsafe: it changes what each rank sees) keeps the user's logic as
    `_iter_all_ranks` and adds an `__iter__` that pads (repeating from the start) or, with
    `drop_last`, trims its output to a multiple of `num_replicas` and takes
    `[rank::num_replicas]`; a user `__len__` becomes `_len_all_ranks` and `__len__` returns the
    per-rank share of it. Without a user `__len__`, DistributedSampler's own `num_samples`
    already equals the share when the sampler yields one index per sample.

    Slicing splits the dataset only if every rank computes the same order. An `__iter__` that
    shuffles with a process-wide generator (`random.shuffle`, `np.random.permutation`,
    `torch.randperm` without `generator=`) or one seeded by the OS (`random.Random()`,
    `np.random.default_rng()`) gives each rank its own order, and the slices would overlap and
    miss samples; the fix draws those from generators seeded with `self.seed + self.epoch`,
    as DistributedSampler seeds its own shuffle (one per library, created at the top of the
    method). An unseeded draw in a method `__iter__` calls, one from a generator the OS seeded
    and kept on self (`self.rng = random.Random()` in `__init__`), or one it cannot reseed is
    reported with no fix, and the message says which.
    """

    code = "DDP006"
    opened_by = frozenset((ProjectFact.SAMPLER_CLASS,))  # a subclass of another module's Sampler
    needs_ranks = True
    name = "sampler-without-rank-slicing"
    frameworks = (Framework.DDP,)
    message = (
        "this DistributedSampler subclass's __iter__ never selects the rank's share: every rank gets "
        "the whole dataset; slice [self.rank::self.num_replicas]"
    )
    fix = Applicability.UNSAFE
    # `also`: the class iterates, and it is (or is told it is) one rank's share.
    trigger = SubclassTrigger(DISTRIBUTED_SAMPLER | SAMPLER, also=("__iter__", ("DistributedSampler", "num_replicas")))

    flagged_examples = (
        Flagged(
            # The seed: a bucketing sampler whose base class was changed, nothing else.
            """
            import torch
            from torch.utils.data.distributed import DistributedSampler


            class BucketSampler(DistributedSampler):
                def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, drop_last=False):
                    super().__init__(dataset, num_replicas, rank, shuffle=shuffle, drop_last=drop_last)
                    self.lengths = [len(item) for item in dataset]

                def __iter__(self):
                ^
                    g = torch.Generator()
                    g.manual_seed(self.seed + self.epoch)
                    order = torch.randperm(len(self.dataset), generator=g).tolist()
                    for index in sorted(order, key=lambda i: self.lengths[i] // 10):
                        yield index
            """,
            fix_edits=(
                ("def __iter__(self):", "def _iter_all_ranks(self):"),
                ("yield index\n", "yield index\n" + _EXAMPLE_ITER),
            ),
        ),
        Flagged(
            # `return iter(...)` and an own __len__, through an aliased module import.
            """
            import random
            import torch.utils.data as data


            class ShuffledSampler(data.DistributedSampler):
                def __iter__(self):
                ^
                    indices = list(range(len(self.dataset)))
                    random.Random(self.seed + self.epoch).shuffle(indices)
                    return iter(indices)

                def __len__(self):
                    return len(self.dataset)
            """,
            fix_edits=(
                ("def __iter__(self):", "def _iter_all_ranks(self):"),
                ("return iter(indices)\n", "return iter(indices)\n" + _EXAMPLE_ITER),
                ("def __len__(self):", "def _len_all_ranks(self):"),
                ("return len(self.dataset)\n", "return len(self.dataset)\n" + _EXAMPLE_LEN),
            ),
        ),
        Flagged(
            # Through a base class of the same module.
            """
            from torch.utils.data import DistributedSampler as DS


            class SamplerBase(DS):
                pass


            class SortedSampler(SamplerBase):
                def __iter__(self):
                ^
                    return iter(sorted(range(len(self.dataset)), key=self.key))
            """,
            fix_edits=(
                ("def __iter__(self):", "def _iter_all_ranks(self):"),
                ("key=self.key))\n", "key=self.key))\n" + _EXAMPLE_ITER),
            ),
        ),
        Flagged(
            # An unseeded shuffle: each rank has its own order, so it is seeded before slicing.
            """
            import random
            from torch.utils.data import DistributedSampler


            class RandomOrderSampler(DistributedSampler):
                def __iter__(self):
                ^
                    indices = list(range(len(self.dataset)))
                    random.shuffle(indices)
                    return iter(indices)
            """,
            fix_edits=(
                (
                    "def __iter__(self):\n",
                    "def _iter_all_ranks(self):\n"
                    "        # DDP006: seeded like DistributedSampler, so every rank draws the same order\n"
                    "        rng = random.Random(self.seed + self.epoch)\n",
                ),
                ("random.shuffle(indices)", "rng.shuffle(indices)"),
                ("return iter(indices)\n", "return iter(indices)\n" + _EXAMPLE_ITER),
            ),
        ),
        Flagged(
            # numpy's and torch's global generators, and a generator seeded by the OS.
            """
            import numpy as np
            import torch
            from torch.utils.data import DistributedSampler


            class MixedOrderSampler(DistributedSampler):
                def __iter__(self):
                ^
                    \"\"\"Buckets in a random order, shuffled inside.\"\"\"
                    order = np.random.permutation(len(self.dataset)).tolist()
                    if self.shuffle:
                        order = [order[i] for i in torch.randperm(len(order)).tolist()]
                    picks = np.random.default_rng()
                    yield from picks.permutation(order).tolist()
            """,
            fix_edits=(
                ("def __iter__(self):", "def _iter_all_ranks(self):"),
                (
                    'shuffled inside."""\n',
                    'shuffled inside."""\n'
                    "        # DDP006: seeded like DistributedSampler, so every rank draws the same order\n"
                    "        np_rng = np.random.RandomState(self.seed + self.epoch)\n"
                    "        generator = torch.Generator().manual_seed(self.seed + self.epoch)\n",
                ),
                ("np.random.permutation(", "np_rng.permutation("),
                ("torch.randperm(len(order))", "torch.randperm(len(order), generator=generator)"),
                ("default_rng()", "default_rng(self.seed + self.epoch)"),
                ("picks.permutation(order).tolist()\n", "picks.permutation(order).tolist()\n" + _EXAMPLE_ITER),
            ),
        ),
        Flagged(
            # The unseeded shuffle is in a helper others may call: reported, with no fix.
            """
            import random
            from torch.utils.data import DistributedSampler


            class HelperOrderSampler(DistributedSampler):
                def order(self):
                    return random.sample(range(len(self.dataset)), len(self.dataset))

                def __iter__(self):
                ^
                    return iter(self.order())
            """,
            messages=(
                "this DistributedSampler subclass's __iter__ never selects the rank's share: every rank gets the "
                "whole dataset; slice [self.rank::self.num_replicas]; no fix: `random.sample` in `order` draws "
                "unseeded, so each rank shuffles differently and slicing would neither split nor cover the "
                "dataset; seed it from self.seed + self.epoch first"
            ),
        ),
        Flagged(
            # A generator the OS seeded, kept on self: reported, with no fix.
            """
            import random
            from torch.utils.data import DistributedSampler


            class OwnGeneratorSampler(DistributedSampler):
                def __init__(self, dataset):
                    super().__init__(dataset)
                    self.rng = random.Random()

                def __iter__(self):
                ^
                    indices = list(range(len(self.dataset)))
                    self.rng.shuffle(indices)
                    return iter(indices)
            """,
            messages=(
                "this DistributedSampler subclass's __iter__ never selects the rank's share: every rank gets the "
                "whole dataset; slice [self.rank::self.num_replicas]; no fix: `self.rng` is a `random.Random()` "
                "seeded by the OS (in `__init__`), so each rank shuffles differently and slicing would neither "
                "split nor cover the dataset; seed it from self.seed + self.epoch first"
            ),
        ),
        Flagged(
            # __init__ never runs DistributedSampler's: self.rank does not exist, so no fix.
            """
            import torch


            class DDPBaseBucketSampler(torch.utils.data.distributed.DistributedSampler):
                def __init__(self, data_source, batch_size=32):
                    self.data_source = data_source
                    self.batch_size = batch_size

                def __iter__(self):
                ^
                    batch = []
                    for idx in range(len(self.data_source)):
                        batch.append(idx)
                        if len(batch) == self.batch_size:
                            yield batch
                            batch = []
                    if batch:
                        yield batch
            """,
        ),
        Flagged(
            # A plain Sampler written to be the distributed one: it takes num_replicas and rank.
            """
            import torch


            class BucketSampler(torch.utils.data.Sampler):
                def __init__(self, lengths, batch_size, num_replicas=None, rank=None):
                    self.lengths, self.batch_size = lengths, batch_size
                    self.num_replicas, self.rank = num_replicas, rank

                def __iter__(self):
                ^
                    order = sorted(range(len(self.lengths)), key=self.lengths.__getitem__)
                    return iter(order)
            """,
            messages=(
                "this Sampler takes num_replicas and rank but its __iter__ never selects the rank's share: every "
                "rank gets the whole dataset; slice [self.rank::self.num_replicas]"
            ),
        ),
        Flagged(
            # The dataset handed to it is told the rank but keeps every item: still the whole dataset.
            """
            from torch.utils.data import DataLoader, Dataset, Sampler


            class Lines(Dataset):
                def __init__(self, path, rank):
                    self.rank = rank
                    with open(path) as f:
                        self.lines = f.read().splitlines()

                def __getitem__(self, index):
                    return self.lines[index]


            class LengthSorted(Sampler):
                def __init__(self, data_source, num_replicas, rank):
                    self.data_source, self.num_replicas, self.rank = data_source, num_replicas, rank

                def __iter__(self):
                ^
                    return iter(sorted(range(len(self.data_source)), key=lambda i: len(self.data_source[i])))


            def loader(args):
                lines = Lines(args.list, args.rank)
                return DataLoader(lines, batch_size=32, sampler=LengthSorted(lines, args.world_size, args.rank))
            """,
            messages=(
                "this Sampler takes num_replicas and rank but its __iter__ never selects the rank's share: every "
                "rank gets the whole dataset; slice [self.rank::self.num_replicas]"
            ),
        ),
    )
    clean_examples = (
        Clean(
            # Every sampler of the class is handed a dataset that keeps only the rank's share
            # itself (its constructor selects its lines by the same rank): iterating all of it
            # is iterating the rank's share.
            """
            import torch
            from torch.utils.data import Dataset, Sampler


            class RankLines(Dataset):
                def __init__(self, path, rank, num_replicas):
                    self.rank, self.num_replicas = rank, num_replicas
                    self.load(path)

                def load(self, path):
                    with open(path) as f:
                        lines = f.read().splitlines()
                    per = len(lines) // self.num_replicas
                    bounds = list(range(0, len(lines) + 1, per))
                    self.lines = lines[bounds[self.rank]:bounds[self.rank + 1]]

                def __getitem__(self, index):
                    return self.lines[index]

                def __len__(self):
                    return len(self.lines)


            class EpochShuffler(Sampler):
                def __init__(self, dataset, num_replicas=None, rank=None):
                    self.dataset, self.num_replicas, self.rank, self.epoch = dataset, num_replicas, rank, 0

                def __iter__(self):
                    g = torch.Generator()
                    g.manual_seed(self.epoch)
                    return iter(torch.randperm(len(self.dataset), generator=g).tolist())


            def build(args):
                dataset = RankLines(args.list, rank=args.rank, num_replicas=args.world_size)
                sampler = EpochShuffler(dataset, rank=args.rank, num_replicas=args.world_size)
                return torch.utils.data.DataLoader(dataset, batch_size=32, sampler=sampler)
            """
        ),
        Clean(
            # The share is chosen in __init__, from the constructor's own `rank` and
            # `num_replicas`, through locals, other attributes or a helper method.
            """
            import torch.distributed as dist
            from torch.utils.data import Sampler


            class ContiguousShard(Sampler):
                def __init__(self, size, num_replicas, rank):
                    per = size // num_replicas
                    self.start = rank * per
                    self.end = self.start + per

                def __iter__(self):
                    return iter(range(self.start, self.end))


            class StridedShard(Sampler):
                def __init__(self, dataset, num_replicas=None, rank=None):
                    rank = dist.get_rank() if rank is None else rank
                    indices = list(range(len(dataset)))
                    shard = indices[rank::num_replicas or dist.get_world_size()]
                    self.shard = shard

                def __iter__(self):
                    yield from self.shard


            class SplitShard(Sampler):
                def __init__(self, dataset, num_replicas, rank):
                    self.num_replicas, self.rank = num_replicas, rank
                    self.chunk = self._split(len(dataset))

                def _split(self, size):
                    per = size // self.num_replicas
                    return list(range(self.rank * per, (self.rank + 1) * per))

                def __iter__(self):
                    return iter(self.chunk)
            """
        ),
        Clean(
            """
            from torch.utils.data import Sampler


            class ShardedBuckets(Sampler):
                def __init__(self, lengths, num_replicas=1, rank=0):
                    self.lengths, self.num_replicas, self.rank = lengths, num_replicas, rank

                def __iter__(self):
                    order = sorted(range(len(self.lengths)), key=self.lengths.__getitem__)
                    return iter(order[self.rank::self.num_replicas])


            class NoReplicas(Sampler):
                def __init__(self, lengths):
                    self.lengths = lengths

                def __iter__(self):
                    return iter(range(len(self.lengths)))
            """
        ),
        Clean(
            """
            from torch.utils.data import DistributedSampler

            class StepSlice(DistributedSampler):
                def __iter__(self):
                    indices = list(range(len(self.dataset)))
                    return iter(indices[self.rank::self.num_replicas])

            class TotalSlice(DistributedSampler):
                def __iter__(self):
                    indices = self.order()
                    yield from indices[self.rank:self.total_size:self.num_replicas]
            """
        ),
        Clean(
            # Seeded through `torch.random` (as torch.manual_seed), and sliced per rank.
            """
            import torch
            from torch.utils.data import DistributedSampler

            class EpochSeededShard(DistributedSampler):
                def __iter__(self):
                    torch.random.manual_seed(self.seed + self.epoch)
                    order = torch.randperm(len(self.dataset)).tolist()
                    yield from order[self.rank:self.total_size:self.num_replicas]
            """
        ),
        Clean(
            # Delegating to DistributedSampler, directly or through a helper.
            """
            from torch.utils.data import DistributedSampler

            class Delegating(DistributedSampler):
                def __iter__(self):
                    return iter(sorted(super().__iter__()))

            class ThroughHelper(DistributedSampler):
                def _rank_indices(self):
                    return list(DistributedSampler.__iter__(self))

                def __iter__(self):
                    return iter(self._rank_indices())
            """
        ),
        Clean(
            # Sharded in __init__; rank from torch.distributed; no __iter__ override.
            """
            import torch.distributed as dist
            from torch.utils.data import DistributedSampler

            class ShardOnce(DistributedSampler):
                def __init__(self, dataset):
                    super().__init__(dataset)
                    self.shard = list(range(len(dataset)))[self.rank::self.num_replicas]

                def __iter__(self):
                    return iter(self.shard)

            class FromGroup(DistributedSampler):
                def __iter__(self):
                    world, me = dist.get_world_size(), dist.get_rank()
                    return iter(range(me, len(self.dataset), world))

            class EpochAware(DistributedSampler):
                def set_epoch(self, epoch):
                    super().set_epoch(epoch)
            """
        ),
        Clean(
            # Not a DistributedSampler: a single-process sampler, a local look-alike.
            """
            import torch

            class BucketSampler(torch.utils.data.Sampler):
                def __iter__(self):
                    return iter(range(len(self.data_source)))

            class DistributedSampler:
                pass

            class Mine(DistributedSampler):
                def __iter__(self):
                    return iter(())
            """
        ),
    )

    analyses = (SamplerClasses,)

    def __init__(self, model) -> None:
        super().__init__(model)
        self.classes = model.get(SamplerClasses)
        # Per method (by id of its FunctionDef): its unseeded draws, the families it seeds.
        self._draws: dict[int, list[_Draw]] = {}
        self._seeded: dict[int, set[str]] = {}
        # Per class (by id): `self.X = random.Random()` and the like, X -> (method, constructor);
        # per method: the `self.X.method(...)` calls it makes, as (X, call).
        self._own_generators: dict[int, dict[str, tuple[str, str]]] = {}
        self._attribute_calls: dict[int, list[str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        frame = self.model.frame
        method = frame.method if frame.is_function else None
        if method is None:
            return
        key = id(method.node)
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Attribute)
            and isinstance(func.value.value, cst.Name)
            and func.value.value.value == frame.self_name
        ):
            self._attribute_calls.setdefault(key, []).append(func.value.attr.value)
        qualified = self.model.qualified(func)
        if qualified is None:
            return
        if qualified in _GLOBAL_SEEDS:
            self._seeded.setdefault(key, set()).add(_GLOBAL_SEEDS[qualified])
            return
        family, _, function = qualified.rpartition(".")
        if function in _GLOBAL_DRAWS.get(family, ()):
            if family == "torch" and keyword_argument(node, "generator") is not None:
                return
            self._draws.setdefault(key, []).append(_Draw(node, family, qualified))
        elif qualified in _SELF_SEEDING and not _has_seed(node):
            self._draws.setdefault(key, []).append(_Draw(node, "own", qualified))
            statement = self.model.statement
            assign = statement.body[0] if statement is not None and len(statement.body) == 1 else None
            if isinstance(assign, cst.Assign) and assign.value is node and method.parent is not None:
                for target in assign.targets:
                    t = target.target
                    if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == frame.self_name:
                        owned = self._own_generators.setdefault(id(method.parent.node), {})
                        owned[t.attr.value] = (method.node.name.value, qualified)

    def _unseeded(self, method: cst.FunctionDef) -> list[_Draw]:
        seeded = self._seeded.get(id(method), set())
        return [draw for draw in self._draws.get(id(method), ()) if draw.family not in seeded]

    def leave_Module(self, original_node: cst.Module) -> None:
        for known in self.classes.classes.values():
            method = known.methods.get("__iter__")
            if method is None or self._handed_rank_shares(known):
                continue
            if self.classes.is_distributed_sampler(known):
                if not self.classes.shards_per_rank(known):
                    self._report(known)
            else:
                where = self._sampler_taking_replicas(known)
                if where is not None and not self.classes.shards_per_rank(known):
                    # Reported without a fix: a plain Sampler has no `drop_last` to reuse.
                    message = f"{self._REPLICAS_MESSAGE} (its Sampler base is in {where})" if where else None
                    self.report(method.node, message or self._REPLICAS_MESSAGE)

    def _handed_rank_shares(self, known: SamplerClass) -> bool:
        """Whether every object of the class the project makes is handed a dataset that already
        keeps only the rank's share (`rank_share_datasets`): all of it is the rank's share."""
        view = self.model.project
        return view is not None and rank_share_datasets(view.program, view.module, known.node.name.value)

    _REPLICAS_MESSAGE = (
        "this Sampler takes num_replicas and rank but its __iter__ never selects the rank's share: "
        "every rank gets the whole dataset; slice [self.rank::self.num_replicas]"
    )

    def _sampler_taking_replicas(self, known: SamplerClass) -> str | None:
        """For a Sampler subclass (directly, through a class of this module, or through one
        of another project module) whose `__init__` takes `num_replicas` and `rank`: "", or
        where the project base class is; else None."""
        lineage = self.classes.lineage(known)
        init = next((c.methods["__init__"] for c in lineage if "__init__" in c.methods), None)
        if init is None:
            return None
        params = init.node.params
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        if not all(name in names for name in REPLICA_PARAMETERS):
            return None
        project = self.model.project
        for cls in lineage:
            for base in cls.node.bases:
                qualified = self.model.qualified(base.value)
                if qualified in SAMPLER:
                    return ""
                where = project.subclass_of(qualified, SAMPLER.spellings) if project is not None else None
                if where:
                    return where
        return None

    def _report(self, known: SamplerClass) -> None:
        iterate = known.methods["__iter__"].node
        length = known.methods.get("__len__")
        init = known.methods.get("__init__")
        if (
            not _plain_method(iterate)
            or (length is not None and not _plain_method(length.node))
            or (init is not None and not init.calls_super_init)
            or ALL_RANKS_ITER in known.methods
            or ALL_RANKS_LEN in known.methods
        ):
            self.report(iterate)
            return
        # Slicing is right only if every rank computes the same order: what __iter__ draws
        # unseeded is seeded from self.seed + self.epoch; where that cannot be done, no fix.
        helper = self._helper_draw(known)
        if helper is not None:
            method_name, draw = helper
            self.report(iterate, self._no_fix(f"`{draw.name}` in `{method_name}` draws unseeded"))
            return
        owned = self._owned_draw(known)
        if owned is not None:
            self.report(iterate, self._no_fix(owned))
            return
        seeded = self._seed_draws(iterate)
        if isinstance(seeded, str):
            self.report(iterate, self._no_fix(seeded))
            return
        user_iter, imports = seeded
        replace: dict = {
            iterate: cst.FlattenSentinel([user_iter.with_changes(name=cst.Name(ALL_RANKS_ITER)), _method(_SHARED_ITER)])
        }
        if length is not None:
            replace[length.node] = cst.FlattenSentinel(
                [length.node.with_changes(name=cst.Name(ALL_RANKS_LEN)), _method(_SHARED_LEN)]
            )
        self.report(iterate, replace=replace, imports=imports)

    def _no_fix(self, why: str) -> str:
        return (
            f"{self.message}; no fix: {why}, so each rank shuffles differently and slicing would "
            f"neither split nor cover the dataset; seed it from {_SEED} first"
        )

    def _owned_draw(self, known: SamplerClass) -> str | None:
        """A draw, in `__iter__` or a method it calls, from a generator made unseeded outside
        `__iter__` and kept on self (`self.rng = random.Random()` in `__init__`)."""
        lineage = self.classes.lineage(known)
        owned = {name: where for c in reversed(lineage) for name, where in self._own_generators.get(id(c.node), {}).items()}
        for _, method in called_on_self(self.classes.methods(known), ["__iter__"]):
            for attribute in self._attribute_calls.get(id(method.node), ()):
                made = owned.get(attribute)
                if made is not None and made[0] != "__iter__":
                    return f"`self.{attribute}` is a `{made[1]}()` seeded by the OS (in `{made[0]}`)"
        return None

    def _helper_draw(self, known: SamplerClass) -> tuple[str, _Draw] | None:
        """An unseeded draw in a method `__iter__` calls on self (not rewritten: others may call it)."""
        methods = self.classes.methods(known)
        for name, method in called_on_self(methods, list(methods["__iter__"].self_calls)):
            draws = self._unseeded(method.node)
            if draws:
                return name, draws[0]
        return None

    def _seed_draws(self, method: cst.FunctionDef) -> tuple[cst.FunctionDef, tuple[str, ...]] | str:
        """`method` with its unseeded draws made from generators seeded from self.seed +
        self.epoch (one per library, created first thing in the method), and the imports
        that needs; or why that cannot be done."""
        draws = self._unseeded(method)
        if not draws:
            return method, ()
        if not isinstance(method.body, cst.IndentedBlock):
            return f"`{draws[0].name}` draws unseeded in a one-line method"
        taken = names_in(method)
        generators: dict[str, tuple[str, str]] = {}  # family -> (local name, its statement)
        replace: dict[cst.CSTNode, cst.CSTNode] = {}
        imports: tuple[str, ...] = ()
        code = self.model.module.code_for_node
        for draw in draws:
            call, func = draw.call, draw.call.func
            if draw.family == "own":
                replace[call] = call.with_changes(args=[cst.Arg(cst.parse_expression(_SEED))])
                continue
            if draw.family == "torch":
                if any(arg.star == "**" for arg in call.args):
                    return f"`{draw.name}` takes **kwargs, so its generator cannot be set"
                if draw.family not in generators:
                    if isinstance(func, cst.Attribute):
                        torch = code(func.value)
                    else:
                        alias = module_alias(self.model, "torch")
                        if alias is None:
                            return f"`{draw.name}` draws unseeded and `torch` means something else here"
                        torch, imports = alias[0], alias[1]
                    name = unique_name("generator", taken)
                    generators[draw.family] = (name, f"{name} = {torch}.Generator().manual_seed({_SEED})")
                replace[call] = with_keyword_argument(call, "generator", cst.Name(generators[draw.family][0]))
                continue
            if not isinstance(func, cst.Attribute):
                return f"`{draw.name}` (imported by name) draws unseeded"
            if draw.family not in generators:
                if draw.family == "random":
                    name = unique_name("rng", taken)
                    statement = f"{name} = {code(func.value)}.Random({_SEED})"
                else:
                    name = unique_name("np_rng", taken)
                    statement = f"{name} = {code(func.value)}.RandomState({_SEED})"
                generators[draw.family] = (name, statement)
            replace[call] = call.with_changes(func=func.with_changes(value=cst.Name(generators[draw.family][0])))
        method = replace_nodes(method, replace)  # type: ignore[assignment]
        if generators:
            new_lines = [cst.parse_statement(statement) for _, statement in generators.values()]
            new_lines[0] = new_lines[0].with_changes(leading_lines=[cst.EmptyLine(indent=True, comment=cst.Comment(_SEED_COMMENT))])
            body = list(method.body.body)
            at = 1 if body and is_docstring(body[0]) else 0
            if at < len(body):
                body[at] = body[at].with_changes(leading_lines=[])
                new_lines[0] = new_lines[0].with_changes(
                    leading_lines=[*method.body.body[at].leading_lines, *new_lines[0].leading_lines]
                )
            body[at:at] = new_lines
            method = method.with_changes(body=method.body.with_changes(body=body))
        return method, imports


def _has_seed(call: cst.Call) -> bool:
    seed = next((arg for arg in call.args if arg.keyword is None or arg.keyword.value == "seed"), None)
    return seed is not None and not (isinstance(seed.value, cst.Name) and seed.value.value == "None")


def _plain_method(node: cst.FunctionDef) -> bool:
    params = node.params
    return (
        not node.decorators
        and node.asynchronous is None
        and len(params.params) == 1
        and not params.posonly_params
        and not params.kwonly_params
        and params.star_arg is cst.MaybeSentinel.DEFAULT
        and params.star_kwarg is None
    )


# -- a question only this rule asks of the program model ------------------------------------


def rank_share_datasets(program, module: str, cls: str) -> bool:
    """Whether every construction of the sampler class `cls` of `module` in the project (one at
    least, each one the model reads) hands it a dataset that keeps only the rank's share itself:
    an object of a project class made in the same function with the same rank the sampler is
    given (`Lines(path, rank=args.rank)`, `Shuffler(lines, rank=args.rank)`), whose constructor
    takes an item by that rank (`_selects_by_rank`). Its indices then only name the rank's items."""
    made = 0
    for where in program.modules():
        if not program.text_calls(where, (cls,)):
            continue
        summary = program.summary(where)
        for key, function in summary.functions.items() if summary is not None else ():
            for called in function.invocations:
                if program.class_of(where, called.callee) != (module, cls):
                    continue
                call = next((c for c in function.calls if c.callee == called.callee and c.line == called.line), None)
                if call is None or not _rank_dataset(program, where, function, call, (module, cls)):
                    return False
                made += 1
    return made > 0


def _passed(call, params: list[str], name: str):
    """The source `call` passes for parameter `name` of a constructor taking `params`."""
    if name in call.keywords:
        return call.keywords[name]
    index = params.index(name) if name in params else len(call.args)
    return call.args[index] if index < len(call.args) else None


def _init_params(program, made: tuple[str, str]) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]] | None:
    init = program.definition(made[0], f"{made[1]}.__init__")
    if init is None:
        return None
    return init, [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]


def _rank_dataset(program, module: str, function, call, sampler: tuple[str, str]) -> bool:
    """Whether the sampler construction `call` (in `function` of `module`) hands it, as its first
    parameter, a dataset made in the same function with the rank it is given itself."""
    own = _init_params(program, sampler)
    if own is None or not own[1]:
        return False
    dataset, rank = _passed(call, own[1], own[1][0]), _passed(call, own[1], "rank")
    if rank is None or not isinstance(dataset, CallResult):
        return False
    made = program.class_of(module, dataset.callee)
    built = next((c for c in function.calls if c.callee == dataset.callee and c.line == dataset.line), None)
    theirs = _init_params(program, made) if made is not None and built is not None else None
    if theirs is None:
        return False
    given = [name for name in theirs[1] if _passed(built, theirs[1], name) == rank]
    return len(given) == 1 and _selects_by_rank(program, made, theirs[0], given[0])


def _selects_by_rank(program, made: tuple[str, str], init, rank: str) -> bool:
    """Whether the constructor `init` of project class `made`, or a method it calls on self,
    takes an item by its parameter `rank` or an attribute it stores it in (`bounds[self.rank]`,
    `lines[self.rank::n]`)."""
    stored = set()
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            both = isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            pairs = zip(target.elts, value.elts) if both else [(target, value)]  # type: ignore[attr-defined]
            stored |= {t.attr for t, v in pairs if _on_self(t) and isinstance(v, ast.Name) and v.id == rank}
    called = {n.func.attr for n in ast.walk(init) if isinstance(n, ast.Call) and _on_self(n.func)}
    methods = [program.definition(made[0], f"{made[1]}.{name}") for name in sorted(called)]

    def by_rank(node: ast.AST, names: set[str]) -> bool:
        return any(isinstance(n, ast.Name) and n.id in names or _on_self(n) and n.attr in stored for n in ast.walk(node))

    return any(
        isinstance(node, ast.Subscript) and by_rank(node.slice, {rank} if body is init else set())
        for body in (init, *(m for m in methods if m is not None)) for node in ast.walk(body)
    )


def _on_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
