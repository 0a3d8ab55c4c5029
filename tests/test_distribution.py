"""ddplint/analyses/distribution.py: the one answer to "does this file's own code show that ranks
run it", read from the catalog's spellings, with what shows it first."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.analyses.distribution import DistributedEvidence
from ddplint.engine.lint import prepare, traverse
from ddplint.rules.rule import Rule


class _Probe(Rule):
    code, name, message, needles = "DDP998", "probe", "probe", ("probe",)
    analyses = (DistributedEvidence,)


def evidence(source: str) -> str | None:
    module = cst.parse_module(textwrap.dedent(source))
    model, rules = prepare(module, [_Probe])
    traverse(module, model, rules)
    found = model.get(DistributedEvidence)
    assert found.found == (found.where is not None)
    return found.where


@pytest.mark.parametrize("source, where", [
    ("import torch.distributed as dist\n", "imports torch.distributed"),
    ("from torch import distributed\n", "imports torch.distributed"),
    ("from torch.distributed import init_process_group\n", "imports torch.distributed.init_process_group"),
    ("from torch.nn.parallel import DistributedDataParallel\n", "imports torch.nn.parallel.DistributedDataParallel"),
    # the module that defines DDP, as the catalog spells it too (DDP004 once missed this one)
    ("from torch.nn.parallel.distributed import DistributedDataParallel as D\n",
     "imports torch.nn.parallel.distributed.DistributedDataParallel"),
    ("from torch.multiprocessing import spawn\n", "imports torch.multiprocessing.spawn"),
    ("import torch\ntorch.distributed.barrier()\n", "calls torch.distributed.barrier"),
    ("import torch\ntorch.utils.data.DistributedSampler(ds)\n", "calls torch.utils.data.DistributedSampler"),
    ("import os\nrank = int(os.environ['LOCAL_RANK'])\n", "reads LOCAL_RANK"),
    ("import os\nrank = os.getenv('RANK', 0)\n", "reads RANK"),
    ("from accelerate import Accelerator\naccelerator = Accelerator()\n",
     "is a launch point of a library that starts the ranks"),
])
def test_evidence_in_code_and_what_shows_it_first(source, where):
    assert evidence(source) == where


@pytest.mark.parametrize("source", [
    '"""Runs distributed, with torch.distributed and DistributedDataParallel."""\nimport torch\n',
    "import torch.multiprocessing as mp\nmp.Process(target=f)\n",
    "import os\nworld = os.environ['WORLD_SIZE']\nargs.distributed = True\n",
    "from torch.nn.parallel import DataParallel\n",
])
def test_words_and_look_alikes_are_no_evidence(source):
    assert evidence(source) is None
