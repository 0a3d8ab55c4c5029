"""DDP022: the padded evaluation sampler harms only in a run that builds it. Built only under a
switch of the command line (`if args.dist_eval:`, off unless passed) that no documented launch
passes, it is never made: each rank then evaluates the whole set with a SequentialSampler."""

from __future__ import annotations

import re

_FINDING = re.compile(r"^(\S+?):(\d+):\d+: (DDP\d{3})", re.M)

MAIN = """\
import argparse

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler


def evaluate(model, loader):
    correct = torch.zeros(2)
    for images, labels in loader:
        correct[0] += (model(images).argmax(1) == labels).sum()
        correct[1] += len(labels)
    dist.all_reduce(correct)
    return (correct[0] / correct[1]).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dist_eval", action="store_true")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    dataset_val, model = torch.load("val.pt"), torch.load("model.pt")
    if args.dist_eval:
        sampler_val = DistributedSampler(dataset_val, shuffle=False)
    else:
        sampler_val = SequentialSampler(dataset_val)
    loader_val = DataLoader(dataset_val, sampler=sampler_val, batch_size=64)
    print(evaluate(model, loader_val))


if __name__ == "__main__":
    main()
"""


def _padded_findings(tmp_path, run, readme: str) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "README.md").write_text(readme)
    out = run("check", "--no-cache", "--select", "DDP022", ".").stdout
    return sorted((path.removeprefix("./"), int(line)) for path, line, _ in _FINDING.findall(out))


def test_a_padded_sampler_under_a_switch_no_documented_run_passes_is_spared(tmp_path, run):
    readme = "Evaluate on 4 GPUs:\n\n    torchrun --nproc_per_node=4 main.py --epochs 20\n"
    assert _padded_findings(tmp_path, run, readme) == []


def test_a_padded_sampler_under_a_switch_a_documented_run_passes_is_reported(tmp_path, run):
    readme = "Evaluate on 4 GPUs:\n\n    torchrun --nproc_per_node=4 main.py --epochs 20 --dist_eval\n"
    assert _padded_findings(tmp_path, run, readme) == [("main.py", 25)]
