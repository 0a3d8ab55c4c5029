import libcst as cst

from ddplint.diagnostics import Applicability
from ddplint.rule import Clean, Flagged, Rule
from ddplint.prefilter.screens import Subclasses
from ddplint.torch_api import DISTRIBUTED_SAMPLER
from ddplint.analyses.samplers import SamplerClass, SamplerClasses

# A plain Sampler whose constructor takes `num_replicas` and `rank` is written to be the
# distributed sampler (bucketing samplers often are), and must shard just the same.
SAMPLER = frozenset(("torch.utils.data.Sampler", "torch.utils.data.sampler.Sampler"))
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

    Flagged: a class deriving from DistributedSampler (directly or through a base class of the
    same module) whose `__iter__` (and the methods it calls on self) neither reads `self.rank`
    or `self.num_replicas`, nor calls `dist.get_rank()`, nor delegates to `super().__iter__()`,
    nor yields an attribute sharded by rank in `__init__`.

    The fix (unsafe: it changes what each rank sees) keeps the user's logic as
    `_iter_all_ranks` and adds an `__iter__` that pads (repeating from the start) or, with
    `drop_last`, trims its output to a multiple of `num_replicas` and takes
    `[rank::num_replicas]`; a user `__len__` becomes `_len_all_ranks` and `__len__` returns the
    per-rank share of it. Without a user `__len__`, DistributedSampler's own `num_samples`
    already equals the share when the sampler yields one index per sample.
    """

    code = "DDP006"
    name = "sampler-without-rank-slicing"
    message = (
        "this DistributedSampler subclass's __iter__ never selects the rank's share: every rank gets "
        "the whole dataset; slice [self.rank::self.num_replicas]"
    )
    fix = Applicability.UNSAFE
    needles = ("__iter__", ("DistributedSampler", "num_replicas"))
    screen = Subclasses(targets=tuple(sorted(DISTRIBUTED_SAMPLER.spellings | SAMPLER)))

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
                    g = torch.Generator()
                    g.manual_seed(self.seed + self.epoch)
                    order = torch.randperm(len(self.dataset), generator=g).tolist()
                    for index in sorted(order, key=lambda i: self.lengths[i] // 10):
                        yield index
            """,
            fixed="""
            import torch
            from torch.utils.data.distributed import DistributedSampler


            class BucketSampler(DistributedSampler):
                def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, drop_last=False):
                    super().__init__(dataset, num_replicas, rank, shuffle=shuffle, drop_last=drop_last)
                    self.lengths = [len(item) for item in dataset]

                def _iter_all_ranks(self):
                    g = torch.Generator()
                    g.manual_seed(self.seed + self.epoch)
                    order = torch.randperm(len(self.dataset), generator=g).tolist()
                    for index in sorted(order, key=lambda i: self.lengths[i] // 10):
                        yield index

                def __iter__(self):
                    # DDP006: each rank takes an equal, disjoint share of what _iter_all_ranks yields
                    indices = list(self._iter_all_ranks())
                    padding = -len(indices) % self.num_replicas
                    if self.drop_last:
                        indices = indices[: len(indices) - len(indices) % self.num_replicas]
                    elif indices and padding:
                        indices += (indices * (padding // len(indices) + 1))[:padding]
                    return iter(indices[self.rank::self.num_replicas])
            """,
        ),
        Flagged(
            # `return iter(...)` and an own __len__, through an aliased module import.
            """
            import random
            import torch.utils.data as data


            class ShuffledSampler(data.DistributedSampler):
                def __iter__(self):
                    indices = list(range(len(self.dataset)))
                    random.Random(self.seed + self.epoch).shuffle(indices)
                    return iter(indices)

                def __len__(self):
                    return len(self.dataset)
            """,
            fixed="""
            import random
            import torch.utils.data as data


            class ShuffledSampler(data.DistributedSampler):
                def _iter_all_ranks(self):
                    indices = list(range(len(self.dataset)))
                    random.Random(self.seed + self.epoch).shuffle(indices)
                    return iter(indices)

                def __iter__(self):
                    # DDP006: each rank takes an equal, disjoint share of what _iter_all_ranks yields
                    indices = list(self._iter_all_ranks())
                    padding = -len(indices) % self.num_replicas
                    if self.drop_last:
                        indices = indices[: len(indices) - len(indices) % self.num_replicas]
                    elif indices and padding:
                        indices += (indices * (padding // len(indices) + 1))[:padding]
                    return iter(indices[self.rank::self.num_replicas])

                def _len_all_ranks(self):
                    return len(self.dataset)

                def __len__(self):
                    total = self._len_all_ranks()
                    if self.drop_last:
                        return total // self.num_replicas
                    return -(-total // self.num_replicas)
            """,
        ),
        Flagged(
            # Through a base class of the same module.
            """
            from torch.utils.data import DistributedSampler as DS


            class SamplerBase(DS):
                pass


            class SortedSampler(SamplerBase):
                def __iter__(self):
                    return iter(sorted(range(len(self.dataset)), key=self.key))
            """,
            fixed="""
            from torch.utils.data import DistributedSampler as DS


            class SamplerBase(DS):
                pass


            class SortedSampler(SamplerBase):
                def _iter_all_ranks(self):
                    return iter(sorted(range(len(self.dataset)), key=self.key))

                def __iter__(self):
                    # DDP006: each rank takes an equal, disjoint share of what _iter_all_ranks yields
                    indices = list(self._iter_all_ranks())
                    padding = -len(indices) % self.num_replicas
                    if self.drop_last:
                        indices = indices[: len(indices) - len(indices) % self.num_replicas]
                    elif indices and padding:
                        indices += (indices * (padding // len(indices) + 1))[:padding]
                    return iter(indices[self.rank::self.num_replicas])
            """,
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
                    order = sorted(range(len(self.lengths)), key=self.lengths.__getitem__)
                    return iter(order)
            """,
        ),
    )
    clean_examples = (
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

    def leave_Module(self, original_node: cst.Module) -> None:
        for known in self.classes.classes.values():
            method = known.methods.get("__iter__")
            if method is None:
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
                where = project.subclass_of(qualified, SAMPLER) if project is not None else None
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
        replace: dict = {
            iterate: cst.FlattenSentinel([iterate.with_changes(name=cst.Name(ALL_RANKS_ITER)), _method(_SHARED_ITER)])
        }
        if length is not None:
            replace[length.node] = cst.FlattenSentinel(
                [length.node.with_changes(name=cst.Name(ALL_RANKS_LEN)), _method(_SHARED_LEN)]
            )
        self.report(iterate, replace=replace)


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
