"""Behaviour of the fixes of DDP010/DDP018 and the distributed-file gate, beyond the examples."""

import os

import pytest

from ddplint.engine.lint import analyse
from ddplint.fixing.fixer import fix_text
from ddplint.rules import rule_by_code
from ddplint.core.torch_api import DISTRIBUTED_MARKERS

torch = pytest.importorskip("torch")

SPLIT = """\
import torch
import torch.distributed as dist
from torch.utils.data import random_split

def split(dataset, rank):
    torch.manual_seed(rank)
    return random_split(dataset, [8, 2])
"""


def _split_on_rank(source, rank):
    namespace = {}
    exec(compile(source, "split.py", "exec"), namespace)
    return sorted(namespace["split"](list(range(10)), rank)[1].indices)


def test_random_split_fix_gives_every_rank_the_same_split():
    rule = rule_by_code("DDP010")
    fixed = fix_text(SPLIT, "split.py", [rule]).source
    assert fixed != SPLIT
    before = {tuple(_split_on_rank(SPLIT, rank)) for rank in range(4)}
    after = {tuple(_split_on_rank(fixed, rank)) for rank in range(4)}
    assert len(before) > 1
    assert len(after) == 1


@pytest.mark.parametrize("local_world_size, expected", [(None, os.cpu_count()), ("2", max(1, os.cpu_count() // 2)), ("4096", 1)])
def test_workers_fix_divides_by_local_world_size(monkeypatch, local_world_size, expected):
    source = "import os\nimport torch.distributed\nfrom torch.utils.data import DataLoader\nloader = DataLoader([1], num_workers=os.cpu_count())\n"
    fixed = fix_text(source, "w.py", [rule_by_code("DDP018")], unsafe_fixes=True).source
    expression = fixed.split("num_workers=", 1)[1].rsplit(")", 1)[0]
    if local_world_size is None:
        monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    else:
        monkeypatch.setenv("LOCAL_WORLD_SIZE", local_world_size)
    assert eval(expression, {"os": os}) == expected


@pytest.mark.parametrize("code", ["DDP010", "DDP015", "DDP018"])
def test_distributed_rules_stay_quiet_in_single_process_files(code):
    rule = rule_by_code(code)
    for example in rule.flagged_examples:
        single = "\n".join(
            line for line in example.code.splitlines()
            if not any(marker in line for marker in ("distributed", "Distributed", "DDP(", *DISTRIBUTED_MARKERS))
        )
        assert analyse(single, "x.py", [rule]).diagnostics == []
