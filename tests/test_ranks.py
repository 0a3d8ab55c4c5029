"""The rank-guard analysis shared by the rank rules: which tests mean "rank 0 only"."""

import libcst as cst
import pytest

from ddplint.ranks import DISTRIBUTED, NONZERO, NOT_DISTRIBUTED, POSITIVE, UNKNOWN, ZERO, classify


def guard(source: str):
    return classify(cst.parse_expression(source))


@pytest.mark.parametrize(
    "source",
    [
        "rank == 0",
        "0 == rank",
        "args.rank == 0",
        "self.global_rank == 0",
        "dist.get_rank() == 0",
        "torch.distributed.get_rank() == 0",
        "int(os.environ['RANK']) == 0",
        "os.environ.get('LOCAL_RANK', '0') == 0",
        "not rank",
        "args.local_rank in (-1, 0)",
        "args.local_rank in [-1, 0]",
        "RANK in {-1, 0}",
        "LOCAL_RANK == 0",
        "local_rank <= 0",
        "rank < 1",
        "args.rank % ngpus_per_node == 0",
        "is_main_process()",
        "utils.is_main_process()",
        "is_master",
        "self.is_rank_zero",
        "accelerator.is_main_process",
        "trainer.is_global_zero",
        "master_process",
        "not args.distributed or rank == 0",
        "args.distributed and rank == 0",
        "rank == 0 and epoch % 10 == 0",
        "world_size == 1 or dist.get_rank() == 0",
        "not dist.is_initialized() or dist.get_rank() == 0",
        "not (rank != 0)",
        "rank == 0 or local_rank == -1",
    ],
)
def test_rank_zero_guards(source):
    test = guard(source)
    assert test.true_only_zero and not test.true_never_zero
    assert test.false_never_zero or not test.false_only_zero


@pytest.mark.parametrize(
    "source",
    [
        "rank != 0",
        "dist.get_rank() != 0",
        "rank > 0",
        "rank >= 1",
        "args.local_rank not in (-1, 0)",
        "not is_main_process()",
        "not accelerator.is_main_process",
        "rank",
        "args.distributed and rank != 0",
    ],
)
def test_other_rank_guards(source):
    assert guard(source) == NONZERO


@pytest.mark.parametrize(
    "source, expected",
    [
        ("rank == 1", POSITIVE),
        ("rank != 1", POSITIVE.negated()),
        ("local_rank == -1", NOT_DISTRIBUTED),
        ("args.world_size > 1", DISTRIBUTED),
        ("world_size == 1", NOT_DISTRIBUTED),
        ("not args.distributed", NOT_DISTRIBUTED),
        ("dist.is_initialized()", DISTRIBUTED),
        ("epoch == 0", UNKNOWN),
        ("step % 100 == 0", UNKNOWN),
        ("args.save", UNKNOWN),
        ("rank == other", UNKNOWN),
        ("rank == 0 or epoch == 0", UNKNOWN.__class__(false_never_zero=True)),
        ("rank in ranks", UNKNOWN),
        ("node_rank == 0", UNKNOWN),
        ("dist.is_available()", UNKNOWN),
    ],
)
def test_other_tests(source, expected):
    assert guard(source) == expected


def test_rank_zero_or_anything_is_not_a_guard():
    assert not guard("rank == 0 or args.save_every_rank").true_only_zero
