"""DDP006's fix, run for real: the golden fixed samplers (executed with torch, rank and
num_replicas passed explicitly, no process group) give every rank an equal, disjoint share that
covers what the user's sampler yields, and len() agrees with what a rank yields. Each rank's
process-wide generators (random, numpy, torch) are seeded differently, as on real ranks, so a
sampler that shuffles with them unseeded must have been seeded by the fix for this to hold."""

import random
import re
import textwrap

import pytest
from hypothesis import given, settings, strategies as st

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from ddplint.fixing.fixer import fix_text  # noqa: E402
from ddplint.rules.ddp006_sampler_without_rank_slicing import SamplerWithoutRankSlicing as DDP006  # noqa: E402

FIXED = [example.fixed for example in DDP006.flagged_examples if example.fixed is not None]
CLASS_NAMES = [re.findall(r"^class (\w+)\(", fixed, re.M)[-1] for fixed in FIXED]
UNSEEDED = ["RandomOrderSampler", "MixedOrderSampler"]


def as_rank(rank: int) -> None:
    """Each rank's process-wide generators in a different state, as on real ranks."""
    random.seed(1000 + rank)
    np.random.seed(1000 + rank)
    torch.manual_seed(1000 + rank)


def load(fixed: str, name: str):
    namespace: dict = {}
    exec(compile(fixed, f"<DDP006 {name}>", "exec"), namespace)
    return namespace[name]


def make(cls, dataset, num_replicas, rank, drop_last, shuffle=True):
    if cls.__name__ == "SortedSampler":
        sampler = cls(dataset, num_replicas=num_replicas, rank=rank, shuffle=False, drop_last=drop_last)
        sampler.key = lambda i: (len(dataset[i]), i)
        return sampler
    return cls(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, drop_last=drop_last)


def test_golden_outputs_are_what_the_fixer_produces():
    for example in DDP006.flagged_examples:
        if example.fixed is not None:
            assert fix_text(example.code, "s.py", [DDP006], unsafe_fixes=True).source == example.fixed
    assert set(UNSEEDED) <= set(CLASS_NAMES) and "SortedSampler" in CLASS_NAMES


@pytest.mark.parametrize("index", range(len(CLASS_NAMES)), ids=CLASS_NAMES)
@settings(max_examples=100, deadline=None)
@given(
    num_replicas=st.integers(1, 6),
    size=st.integers(0, 200),
    drop_last=st.booleans(),
    epoch=st.integers(0, 3),
    shuffle=st.booleans(),
)
def test_fixed_sampler_shards_evenly(index, num_replicas, size, drop_last, epoch, shuffle):
    cls = load(FIXED[index], CLASS_NAMES[index])
    dataset = ["x" * (i * 7 % 23) for i in range(size)]
    samplers = [make(cls, dataset, num_replicas, rank, drop_last, shuffle) for rank in range(num_replicas)]
    for sampler in samplers:
        sampler.set_epoch(epoch)
    as_rank(0)
    everything = list(samplers[0]._iter_all_ranks())
    shares = []
    for rank, sampler in enumerate(samplers):
        as_rank(rank)
        shares.append(list(sampler))

    lengths = {len(share) for share in shares}
    assert len(lengths) == 1, "every rank yields the same number of indices"
    for sampler, share in zip(samplers, shares):
        assert len(sampler) == len(share)

    share_size = lengths.pop()
    if drop_last:
        assert share_size == size // num_replicas
        kept = everything[: share_size * num_replicas]
        combined = sorted(i for share in shares for i in share)
        assert combined == sorted(kept), "disjoint, and nothing but the kept indices"
    else:
        assert share_size == -(-size // num_replicas)
        combined = [i for share in shares for i in share]
        assert set(combined) == set(everything), "every index reaches some rank"
        padding = len(combined) - len(everything)
        assert 0 <= padding < num_replicas
        assert len(combined) - len(set(combined)) == padding, "ranks overlap only in the padding"


def test_unfixed_sampler_gives_every_rank_everything():
    cls = load(DDP006.flagged_examples[0].code, "BucketSampler")
    dataset = ["x" * i for i in range(10)]
    shares = [list(cls(dataset, num_replicas=2, rank=rank)) for rank in range(2)]
    assert shares[0] == shares[1] and len(shares[0]) == 10


@pytest.mark.parametrize("name", UNSEEDED)
def test_slicing_alone_would_overlap_for_unseeded_shuffles(name):
    """Why the fix seeds: the user's unseeded order, sliced per rank, overlaps and misses."""
    source = next(e.code for e in DDP006.flagged_examples if f"class {name}(" in e.code)
    cls = load(source, name)
    dataset = list(range(64))
    shares = []
    for rank in range(4):
        sampler = cls(dataset, num_replicas=4, rank=rank)
        as_rank(rank)
        shares.append(list(sampler)[rank::4])
    assert len({i for share in shares for i in share}) < 64


def test_a_shuffle_in_a_helper_is_not_fixed():
    example = next(e for e in DDP006.flagged_examples if "HelperOrderSampler" in e.code)
    outcome = fix_text(example.code, "s.py", [DDP006], unsafe_fixes=True)
    assert outcome.source == example.code
    [diagnostic] = outcome.remaining.diagnostics
    assert "no fix: `random.sample` in `order` draws unseeded" in diagnostic.message


def test_a_generator_kept_on_self_is_not_fixed():
    example = next(e for e in DDP006.flagged_examples if "OwnGeneratorSampler" in e.code)
    outcome = fix_text(example.code, "s.py", [DDP006], unsafe_fixes=True)
    assert outcome.source == example.code
    [diagnostic] = outcome.remaining.diagnostics
    assert "no fix: `self.rng` is a `random.Random()` seeded by the OS (in `__init__`)" in diagnostic.message


SEEDS_TORCH = """
import torch
from torch.utils.data import DistributedSampler


class EpochSeededSampler(DistributedSampler):
    def __iter__(self):
        {seed}(self.seed + self.epoch)
        yield from torch.randperm(len(self.dataset)).tolist()
"""


@pytest.mark.parametrize("seed", ["torch.manual_seed", "torch.random.manual_seed"])
def test_a_sampler_that_seeds_torch_alike_on_every_rank_is_only_sliced(seed):
    """Either spelling of manual_seed seeds torch's global generator, so every rank already
    draws one order: the fix keeps the user's body as written (no generator of its own) and
    adds the slicing __iter__ that every fix adds, as the first golden output shows it."""
    source = textwrap.dedent(SEEDS_TORCH.format(seed=seed)).lstrip()
    sliced = FIXED[0][FIXED[0].index("    def __iter__(self):") :]
    expected = source.replace("def __iter__", "def _iter_all_ranks") + "\n" + sliced
    fixed = fix_text(source, "s.py", [DDP006], unsafe_fixes=True).source
    assert fixed == expected
    cls = load(fixed, "EpochSeededSampler")
    dataset = list(range(10))
    shares = []
    for rank in range(2):
        as_rank(rank)
        shares.append(list(cls(dataset, num_replicas=2, rank=rank)))
    assert sorted(shares[0] + shares[1]) == dataset
