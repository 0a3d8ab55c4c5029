"""DDP022 on an evaluation set whose DistributedSampler is left shuffling.

Depth-Anything-V2's metric_depth/train.py shards its validation set with
`DistributedSampler(valset)` (shuffle and padding left on) and, in `main()` after each epoch of
training, sums each sample's errors and a count in a loop that runs the model under
`torch.no_grad()`, then `dist.reduce`s both: the padded repeats are counted. A loop with
gradients off that steps no optimizer evaluates whatever its function is called; the order a
shuffling sampler deals in changes nothing of its padding.
"""

from __future__ import annotations

import re
from pathlib import Path

_TRAIN = '''\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def main(trainset, valset, model, optimizer, epochs):
    dist.init_process_group("nccl")
    trainsampler = torch.utils.data.distributed.DistributedSampler(trainset)
    trainloader = DataLoader(trainset, batch_size=4, drop_last=True, sampler=trainsampler)
    valsampler = torch.utils.data.distributed.DistributedSampler(valset)
    valloader = DataLoader(valset, batch_size=1, drop_last=True, sampler=valsampler)
    for epoch in range(epochs):
        trainsampler.set_epoch(epoch)
        for img, depth in trainloader:
            loss = (model(img) - depth).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        error, nsamples = torch.zeros(1).cuda(), torch.zeros(1).cuda()
        for img, depth in valloader:
{body}
            nsamples += 1
        dist.reduce(error, dst=0)
        dist.reduce(nsamples, dst=0)


if __name__ == "__main__":
    main(None, None, None, None, 10)
'''

_NO_GRAD = '''\
            with torch.no_grad():
                pred = model(img)
            error += (pred - depth).abs().mean()'''


def _lines(tmp_path: Path, run, body: str) -> list[int]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(_TRAIN.format(body=body))
    output = run("check", "--no-cache", "--select", "DDP022", ".").stdout
    return sorted(int(m[1]) for m in re.finditer(r"^\S*train\.py:(\d+):\d+: DDP022", output, re.M))


def test_a_loop_that_turns_gradients_off_evaluates_a_shuffling_sampler(tmp_path, run):
    assert _lines(tmp_path, run, _NO_GRAD) == [10]


def test_a_loop_inside_no_grad_evaluates_too(tmp_path, run):
    body = "            error += (model(img) - depth).abs().mean()"
    source = _TRAIN.replace("        for img, depth in valloader:\n", "        with torch.no_grad():\n          for img, depth in valloader:\n")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(source.format(body="  " + body).replace("            nsamples += 1", "              nsamples += 1"))
    output = run("check", "--no-cache", "--select", "DDP022", ".").stdout
    assert re.findall(r"^\S*train\.py:(\d+):\d+: DDP022", output, re.M) == ["10"]


def test_a_loop_with_gradients_on_is_no_evaluation_of_a_shuffling_sampler(tmp_path, run):
    assert _lines(tmp_path, run, "            error += (model(img) - depth).abs().mean()") == []


def test_a_loop_that_steps_an_optimizer_trains_though_it_turns_gradients_off(tmp_path, run):
    body = _NO_GRAD + "\n            train_step(model, img, depth)\n            scheduler.step()"
    assert _lines(tmp_path, run, body) == []
