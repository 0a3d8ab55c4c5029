"""DDP021: a count of micro-batches read from an option through a tuple assignment
(`print_freq, accum_iter = 20, args.accum_iter`) is that option, as `accum_iter =
args.accum_iter` is: left at its default of 1 by every documented launch, the optimizer steps
after every backward and nothing is accumulated."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.semantic.model import SemanticModel

_FINDING = re.compile(r"^(\S+?):(\d+):\d+: (DDP\d{3})", re.M)

MAIN = """\
import argparse

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from engine import train_one_epoch


def main(net, loader, optimizer):
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum_iter", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    torch.distributed.init_process_group("nccl")
    model = DDP(net)
    for _ in range(args.epochs):
        train_one_epoch(model, loader, optimizer, args)
"""
ENGINE = """\
def train_one_epoch(model, loader, optimizer, args):
    log_every, accum_iter = 50, args.accum_iter
    for step, (x, y) in enumerate(loader):
        loss = model(x).mean() / accum_iter
        loss.backward()
        if (step + 1) % accum_iter == 0:
            optimizer.step()
            optimizer.zero_grad()
        if step % log_every == 0:
            print(loss.item())
"""


def _accumulation_findings(tmp_path, run, readme: str) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "README.md").write_text(readme)
    out = run("check", "--no-cache", "--select", "DDP021", ".").stdout
    return sorted((path.removeprefix("./"), int(line)) for path, line, _ in _FINDING.findall(out))


def test_a_count_unpacked_from_an_option_no_launch_changes_is_spared(tmp_path, run):
    readme = "    torchrun --nproc_per_node=8 main.py --epochs 50\n"
    assert _accumulation_findings(tmp_path, run, readme) == []


def test_a_count_unpacked_from_an_option_a_launch_raises_is_reported(tmp_path, run):
    readme = "    torchrun --nproc_per_node=8 main.py --epochs 50 --accum_iter 4\n"
    assert _accumulation_findings(tmp_path, run, readme) == [("engine.py", 5)]


def _constants(source: str, *names: str) -> list[str | None]:
    module = cst.parse_module(source)
    model = SemanticModel(module)
    found = [model.constant(name, model.module_scope) for name in names]
    return [module.code_for_node(value) if value is not None else None for value in found]


def test_a_tuple_assignment_binds_each_name_to_its_own_element():
    assert _constants("a, (b, c) = 1, (x.y, 3)\n", "a", "b", "c") == ["1", "x.y", "3"]
    # Unpacking of anything else, or with a starred name, keeps the whole value (as before).
    assert _constants("d, e = f()\n", "d") == ["f()"]
    assert _constants("g, *h = 1, 2, 3\n", "g") == ["1, 2, 3"]
