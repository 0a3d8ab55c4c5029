"""DDP014 across modules: files named after the samples of a rank's own part of the data.

A file named after a sample (`os.path.join(out, batch["path"][i] + ".pt")`) is written by one
rank only when each rank draws other samples: a loader handed a DistributedSampler, or a
dataset whose constructor keeps only its rank's rows. Then no two ranks write one file.
"""

from __future__ import annotations

import re
from pathlib import Path

_DATASETS = '''\
import torch
import torch.distributed as dist
from {utils} import split_by_rank


class Rows(torch.utils.data.Dataset):
    def __init__(self, rows):
        self.rows = {keep}

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return self.rows[index]
'''

_UTILS = '''\
import torch.distributed as dist


def split_by_rank(rows):
    world_size = dist.get_world_size()
    rank = dist.get_rank()
    chunk = max(1, len(rows) // world_size)
    return rows[rank * chunk:(rank + 1) * chunk]


def every_row(rows):
    return rows[0:len(rows)]
'''

_MAIN = '''\
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from datasets import Rows


def main(rows, out):
    dist.init_process_group("nccl")
    data = Rows(rows)
    for batch in DataLoader(data, batch_size=4):
        for i in range(len(batch)):
            torch.save(batch[i], os.path.join(out, batch[i] + ".pt"))
'''


def _lines(output: str, code: str) -> list[int]:
    return sorted(int(m[1]) for m in re.finditer(rf"^\S*main\.py:(\d+):\d+: {code}", output, re.M))


def _project(tmp_path: Path, keep: str) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(_UTILS)
    (tmp_path / "datasets.py").write_text(_DATASETS.format(utils="utils", keep=keep))
    (tmp_path / "main.py").write_text(_MAIN)


def test_a_dataset_that_keeps_its_ranks_rows_names_other_files_on_each_rank(tmp_path, run):
    """Rows keeps `split_by_rank(rows)`, a slice bounded by the rank (VideoSys's
    split_df_by_rank): each rank saves its own rows' files. Not flagged."""
    _project(tmp_path, "split_by_rank(rows)")
    assert _lines(run("check", "--no-cache", "--select", "DDP014", ".").stdout, "DDP014") == []


def test_a_slice_by_the_rank_in_the_constructor_itself(tmp_path, run):
    _project(tmp_path, "rows[dist.get_rank()::dist.get_world_size()]")
    assert _lines(run("check", "--no-cache", "--select", "DDP014", ".").stdout, "DDP014") == []


def test_a_dataset_that_keeps_every_row_is_written_by_every_rank(tmp_path, run):
    """`every_row` slices by no rank: every rank draws every row and writes every file."""
    _project(tmp_path, "every_row(rows)")
    assert _lines(run("check", "--no-cache", "--select", "DDP014", ".").stdout, "DDP014") == [13]
