"""DDP021 and DDP003: a count read from a setting (an option, a yacs key) that every documented
run leaves at a value that rules the harm out, whatever its default. A yacs setting's value in a
run is what the YAML files the run merges give its key (`--cfg configs/a.yaml`, then the
file's `BASE` files), else its default, or what an assignment the run may make writes
(`config.TRAIN.ACCUMULATION_STEPS = args.accumulation_steps`, under a test not known,
`None` where the run leaves the option unset). An accumulation count of 1 or less in every
run accumulates nothing (DDP021); an epoch count of 1 in every run repeats no order (DDP003).
Where one run may give more, or the runs are not known, the rules report as before."""

from __future__ import annotations

import re

_FINDING = re.compile(r"^(\S+?):(\d+):\d+: (DDP\d{3})", re.M)

CONFIG = """\
from yacs.config import CfgNode as CN

_C = CN()
_C.TRAIN = CN()
_C.TRAIN.EPOCHS = 100
_C.TRAIN.ACCUMULATION_STEPS = 0


def _update_config_from_file(config, cfg_file):
    config.defrost()
    config.merge_from_file(cfg_file)
    config.freeze()


def update_config(config, args):
    _update_config_from_file(config, args.cfg)
    config.defrost()

    def _check_args(name):
        return hasattr(args, name) and getattr(args, name)

    if _check_args("accumulation_steps"):
        config.TRAIN.ACCUMULATION_STEPS = args.accumulation_steps
    config.freeze()


def get_config(args):
    config = _C.clone()
    update_config(config, args)
    return config
"""
MAIN = """\
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from config import get_config


def train_one_epoch(config, model, loader, optimizer):
    for idx, (x, y) in enumerate(loader):
        loss = model(x).mean()
        if config.TRAIN.ACCUMULATION_STEPS > 1:
            loss = loss / config.TRAIN.ACCUMULATION_STEPS
            loss.backward()
            if (idx + 1) % config.TRAIN.ACCUMULATION_STEPS == 0:
                optimizer.step()
                optimizer.zero_grad()
        else:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main(net, loader, optimizer):
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg", type=str, required=True)
    parser.add_argument("--accumulation-steps", type=int)
    args = parser.parse_args()
    config = get_config(args)
    dist.init_process_group("nccl")
    model = DDP(net)
    for epoch in range(config.TRAIN.EPOCHS):
        train_one_epoch(config, model, loader, optimizer)


if __name__ == "__main__":
    main(None, None, None)
"""
SETS_NOTHING = "MODEL:\n  NAME: swin\nDATA:\n  BATCH_SIZE: 64\n"


def _findings(tmp_path, run, readme: str, configs: dict[str, str], select: str = "DDP021", main: str = MAIN) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "config.py").write_text(CONFIG)
    (tmp_path / "main.py").write_text(main)
    (tmp_path / "configs").mkdir()
    for name, text in configs.items():
        (tmp_path / "configs" / name).write_text(text)
    (tmp_path / "README.md").write_text(readme)
    out = run("check", "--no-cache", "--select", select, ".").stdout
    return sorted((path.removeprefix("./"), int(line)) for path, line, _ in _FINDING.findall(out))


def test_a_yacs_count_no_merged_file_nor_launch_raises_is_spared(tmp_path, run):
    readme = "    torchrun --nproc_per_node 8 main.py --cfg configs/a.yaml\n    torchrun --nproc_per_node 8 main.py --cfg configs/b.yaml\n"
    configs = {"a.yaml": SETS_NOTHING, "b.yaml": "BASE: ['a.yaml']\nTRAIN:\n  EPOCHS: 30\n"}
    assert _findings(tmp_path, run, readme, configs) == []


def test_a_yacs_count_a_merged_file_raises_is_reported(tmp_path, run):
    readme = "    torchrun --nproc_per_node 8 main.py --cfg configs/a.yaml\n    torchrun --nproc_per_node 8 main.py --cfg configs/b.yaml\n"
    configs = {"a.yaml": SETS_NOTHING, "b.yaml": "TRAIN:\n  ACCUMULATION_STEPS: 4\n"}
    assert _findings(tmp_path, run, readme, configs) == [("main.py", 15)]


def test_a_yacs_count_a_base_file_raises_is_reported(tmp_path, run):
    readme = "    torchrun --nproc_per_node 8 main.py --cfg configs/b.yaml\n"
    configs = {"a.yaml": "TRAIN:\n  ACCUMULATION_STEPS: 4\n", "b.yaml": "BASE: ['a.yaml']\nMODEL:\n  NAME: swin\n"}
    assert _findings(tmp_path, run, readme, configs) == [("main.py", 15)]


def test_a_yacs_count_a_launch_raises_is_reported(tmp_path, run):
    readme = "    torchrun --nproc_per_node 8 main.py --cfg configs/a.yaml --accumulation-steps 4\n"
    assert _findings(tmp_path, run, readme, {"a.yaml": SETS_NOTHING}) == [("main.py", 15)]


def test_a_yacs_count_of_a_run_naming_no_shipped_file_is_reported(tmp_path, run):
    readme = "    torchrun --nproc_per_node 8 main.py --cfg <your config>\n"
    assert _findings(tmp_path, run, readme, {"a.yaml": SETS_NOTHING}) == [("main.py", 15)]


def _epoch_findings(tmp_path, run, readme: str, epochs: str) -> list[tuple[str, int]]:
    main = MAIN.replace("    model = DDP(net)\n", (
        "    model = DDP(net)\n"
        "    sampler = torch.utils.data.DistributedSampler(loader.dataset)\n"
        "    loader = torch.utils.data.DataLoader(loader.dataset, sampler=sampler)\n"
    ))
    configs = {"a.yaml": SETS_NOTHING, "b.yaml": f"BASE: ['a.yaml']\nTRAIN:\n  EPOCHS: {epochs}\n"}
    return _findings(tmp_path, run, readme, configs, "DDP003", main)


def test_a_yacs_epoch_count_of_one_in_every_merged_file_repeats_no_order(tmp_path, run):
    readme = "    torchrun --nproc_per_node 8 main.py --cfg configs/b.yaml\n"
    assert _epoch_findings(tmp_path, run, readme, "1") == []


def test_a_yacs_epoch_count_above_one_in_a_merged_file_is_reported(tmp_path, run):
    readme = "    torchrun --nproc_per_node 8 main.py --cfg configs/b.yaml\n"
    assert _epoch_findings(tmp_path, run, readme, "3") == [("main.py", 35)]


def test_a_yacs_epoch_count_a_launch_raises_is_reported(tmp_path, run):
    readme = "    torchrun --nproc_per_node 8 main.py --cfg configs/b.yaml --opts TRAIN.EPOCHS 5\n"
    assert _epoch_findings(tmp_path, run, readme, "1") == [("main.py", 35)]


EPOCHS = """\
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(dataset, net, optimizer):
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_train_epochs", type=int, default=DEFAULT)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    model = DDP(net)
    sampler = torch.utils.data.DistributedSampler(dataset)
    loader = torch.utils.data.DataLoader(dataset, sampler=sampler)
    for epoch in range(args.num_train_epochs):
        for x in loader:
            model(x).mean().backward()
            optimizer.step()


if __name__ == "__main__":
    main(None, None, None)
"""


def _option_epoch_findings(tmp_path, run, default: int, scripts: list[str]) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(EPOCHS.replace("DEFAULT", str(default)))
    for number, passed in enumerate(scripts):
        (tmp_path / f"run_{number}.sh").write_text(f"torchrun --nproc_per_node 8 main.py {passed}\n")
    out = run("check", "--no-cache", "--select", "DDP003", ".").stdout
    return sorted((path.removeprefix("./"), int(line)) for path, line, _ in _FINDING.findall(out))


def test_an_epoch_option_every_script_passes_one_repeats_no_order(tmp_path, run):
    assert _option_epoch_findings(tmp_path, run, 1, ["--num_train_epochs 1", "--num_train_epochs 1 --seed 3"]) == []
    assert _option_epoch_findings(tmp_path, run, 10, ["--num_train_epochs 1", "--num_train_epochs=1"]) == []


def test_an_epoch_option_a_script_leaves_or_raises_is_reported(tmp_path, run):
    assert _option_epoch_findings(tmp_path, run, 10, ["--num_train_epochs 1", ""]) == [("main.py", 16)]
    assert _option_epoch_findings(tmp_path, run, 1, ["--num_train_epochs 1", "--num_train_epochs 2"]) == [("main.py", 16)]
    assert _option_epoch_findings(tmp_path, run, 1, ["--num_train_epochs $EPOCHS"]) == [("main.py", 16)]


ACCUMULATE = """\
import argparse

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(net, loader, optimizer):
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum", type=int, default=4)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    model = DDP(net)
    for step, x in enumerate(loader):
        loss = model(x).mean() / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main(None, None, None)
"""


def _accumulation_option_findings(tmp_path, run, scripts: list[str]) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(ACCUMULATE)
    for number, passed in enumerate(scripts):
        (tmp_path / f"run_{number}.sh").write_text(f"torchrun --nproc_per_node 8 main.py {passed}\n")
    out = run("check", "--no-cache", "--select", "DDP021", ".").stdout
    return sorted((path.removeprefix("./"), int(line)) for path, line, _ in _FINDING.findall(out))


def test_an_accumulation_option_every_script_sets_to_one_accumulates_nothing(tmp_path, run):
    assert _accumulation_option_findings(tmp_path, run, ["--accum 1", "--accum=1 --seed 2"]) == []


def test_an_accumulation_option_a_script_leaves_at_four_is_reported(tmp_path, run):
    assert _accumulation_option_findings(tmp_path, run, ["--accum 1", "--seed 2"]) == [("main.py", 15)]
