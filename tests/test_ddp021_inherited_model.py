"""DDP021: the DDP model of a trainer whose base class, in another module, keeps what the
constructor hands it through `super().__init__(model, ...)`. Each step splits its batch into
micro-batches in an inner loop and steps the optimizer once after it: every micro-batch's
backward all-reduces."""

from __future__ import annotations

import re

_BASE = """\
class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
"""

_TRAINER = """\
from base import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer, loader):
        super().__init__(model, optimizer)
        self.loader = loader

    def train_epoch(self):
        for batch in self.loader:
            self.optimizer.zero_grad()
            parts = batch.shape[0] // 2
            for i in range(parts):
{body}
            self.optimizer.step()
"""

_EVERY_BACKWARD = """\
                loss = self.model(batch[2 * i:2 * i + 2]).mean() / parts
                loss.backward()
"""

_NO_SYNC = """\
                context = self.model.no_sync() if i < parts - 1 else contextlib.nullcontext()
                with context:
                    loss = self.model(batch[2 * i:2 * i + 2]).mean() / parts
                    loss.backward()
"""

_MAIN = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer import Trainer


def main(net, loader):
    dist.init_process_group("nccl")
    model = DDP(net.cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    Trainer(model, optimizer, loader).train_epoch()


if __name__ == "__main__":
    main(torch.nn.Linear(2, 2), [])
"""


def _findings(tmp_path, run, body: str, imports: str = "") -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "base.py").write_text(_BASE)
    (tmp_path / "trainer.py").write_text(imports + _TRAINER.format(body=body))
    (tmp_path / "main.py").write_text(_MAIN)
    output = run("check", "--no-cache", "--select", "DDP021", ".").stdout
    return [(m[1], int(m[2])) for m in re.finditer(r"^(\S+?\.py):(\d+):\d+: DDP021", output, re.M)]


def test_a_model_a_base_class_keeps_is_the_ddp_model_of_the_micro_batch_loop(tmp_path, run):
    assert _findings(tmp_path, run, _EVERY_BACKWARD) == [("trainer.py", 15)]


def test_no_sync_around_the_non_stepping_micro_batches_is_clean(tmp_path, run):
    assert _findings(tmp_path, run, _NO_SYNC, imports="import contextlib\n") == []
