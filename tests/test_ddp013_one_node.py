"""DDP013 and the documented runs of the module: where every documented run starts the ranks
on one node with torch's launcher (`python -m torch.distributed.launch --nproc_per_node 8
train.py`, no `--nnodes` over one, no node rank), the local rank is the global rank there and
`init_process_group(rank=local_rank)` harms nothing. A run on several nodes, a launcher that
places ranks on machines of its own (srun), or no documented run at all keeps the finding."""

from __future__ import annotations

import re

import pytest

_TRAIN = """\
import argparse

import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", default=0, type=int)
args = parser.parse_args()
dist.init_process_group("nccl", init_method="env://", rank=args.local_rank, world_size=8)
"""


def _findings(tmp_path, run, readme: str | None) -> list[int]:
    (tmp_path / ".git").write_text("")
    (tmp_path / "train.py").write_text(_TRAIN)
    if readme is not None:
        (tmp_path / "README.md").write_text(readme)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP013", ".").stdout
    return [int(m[1]) for m in re.finditer(r"^\S*train\.py:(\d+):\d+: DDP013", output, re.M)]


@pytest.mark.parametrize(
    "readme",
    (
        "```\npython -m torch.distributed.launch --nproc_per_node 8 train.py\n```\n",
        "```\ntorchrun --nproc_per_node=8 --nnodes=1 train.py\n```\n",
        "```\ntorchrun --standalone --nproc_per_node 4 train.py\ntorchrun --nproc_per_node 2 train.py\n```\n",
    ),
)
def test_every_documented_run_on_one_node_leaves_the_local_rank_global(tmp_path, run, readme):
    assert _findings(tmp_path, run, readme) == []


@pytest.mark.parametrize(
    "readme",
    (
        None,
        "```\ntorchrun --nproc_per_node 8 --nnodes 2 --node_rank 0 train.py\n```\n",
        "```\ntorchrun --nproc_per_node 8 --nnodes $NNODES train.py\n```\n",
        "```\npython -m torch.distributed.launch --nproc_per_node 8 --node_rank $RANK train.py\n```\n",
        "```\npython -m torch.distributed.launch --nproc_per_node 8 train.py\n"
        "torchrun --nnodes=4 --nproc_per_node 8 train.py\n```\n",
        "```\nsrun -N 2 torchrun --nproc_per_node 8 train.py\n```\n",
        "```\nNNODES=2 python -m torch.distributed.launch --nproc_per_node 8 train.py\n```\n",
    ),
)
def test_a_run_on_several_nodes_or_no_documented_run_keeps_the_finding(tmp_path, run, readme):
    assert _findings(tmp_path, run, readme) == [8]
