"""DDP014 under MosaicML Composer's launcher.

`composer train.py cfg.yaml` (also `composer -n 8 ...`, `composer --node_rank N ...`) starts one
process per GPU of the node (`-n`/`--nproc` defaults to the GPU count), each running the script
from the top: its `__main__` code runs on every rank. The Trainer runs every Callback it is
handed on every rank, so a Callback's event methods (`eval_end`, `epoch_end`, `fit_end`, ...)
are every rank's too; `dist.get_global_rank() == 0` (composer.utils.dist) is the rank-0 test.
"""

from __future__ import annotations

import re
from pathlib import Path

_TRAIN = '''\
import sys

import torch
from composer import Trainer
from composer.utils import dist
from omegaconf import OmegaConf as om

from pkg.callbacks import MaskSaver


def main(cfg):
    trainer = Trainer(model=build(cfg), callbacks=[MaskSaver(cfg.save_folder)], max_duration=cfg.max_duration)
    trainer.fit()


if __name__ == "__main__":
    cfg = om.load(sys.argv[1])
    save_dir = cfg.save_folder.replace("{{run_name}}", cfg.run_name)
{save}
    main(cfg)
'''

_CALLBACKS = '''\
import os

import torch
from composer import Callback, Logger, State
from composer.utils import dist


class MaskSaver(Callback):
    def __init__(self, save_folder):
        self.save_folder = save_folder

    def helper(self, state):
        return state.outputs["zs"]

    def eval_end(self, state: State, logger: Logger) -> None:
        zs = {{key: value.cpu() for key, value in self.helper(state).items()}}
        step = state.timestamp.batch.value
{save}
'''

_SAVE = 'torch.save(cfg, save_dir + "/config.pt")'
_MASKS = 'torch.save(zs, os.path.join(self.save_folder, f"zs_s{step}.pt"))'


def _findings(tmp_path: Path, run, launch: str, save: str = "    " + _SAVE, masks: str = "        " + _MASKS) -> list[str]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "callbacks.py").write_text(_CALLBACKS.format(save=masks))
    (tmp_path / "train.py").write_text(_TRAIN.format(save=save))
    (tmp_path / "run.sh").write_text(launch)
    output = run("check", "--no-cache", "--select", "DDP014", ".").stdout
    return sorted(f"{m[1]}:{m[2]}" for m in re.finditer(r"^(?:\./)?(\S*?\.py):(\d+):\d+: DDP014", output, re.M))


def test_the_composer_launcher_runs_the_scripts_main_and_callbacks_on_every_rank(tmp_path, run):
    assert _findings(tmp_path, run, "composer train.py yamls/pruning.yaml run_name=prune\n") == ["pkg/callbacks.py:18", "train.py:19"]


def test_the_advice_is_composers_rank_zero_test(tmp_path, run):
    _findings(tmp_path, run, "composer train.py yamls/pruning.yaml\n")
    output = run("check", "--no-cache", "--select", "DDP014", "--output-format", "full", ".").stdout
    assert output.count("save on rank 0 only (if dist.get_global_rank() == 0:)") == 2, output
    assert "the Composer Trainer fires eval_end() on every process" in output


def test_a_process_count_and_node_rank_are_options_of_the_launcher(tmp_path, run):
    launch = "composer -n 8 --node_rank ${SLURM_NODEID} $PROJ_DIR/train.py yamls/pruning.yaml\n"
    assert _findings(tmp_path, run, launch) == ["pkg/callbacks.py:18", "train.py:19"]


def test_one_process_is_one_writer(tmp_path, run):
    assert _findings(tmp_path, run, "composer -n 1 train.py yamls/pruning.yaml\n") == []


def test_a_plain_python_run_is_one_process(tmp_path, run):
    assert _findings(tmp_path, run, "python train.py yamls/pruning.yaml\n") == []


def test_the_global_rank_zero_test_guards(tmp_path, run):
    save = f"    if dist.get_global_rank() == 0:\n        {_SAVE}"
    masks = f"        if dist.get_local_rank() == 0:\n            {_MASKS}"
    assert _findings(tmp_path, run, "composer train.py yamls/pruning.yaml\n", save, masks) == []


def test_a_callback_no_code_hands_the_trainer_never_runs(tmp_path, run):
    (tmp_path / "pkg").mkdir(exist_ok=True)
    launch = "composer train.py yamls/pruning.yaml\n"
    findings = _findings(tmp_path, run, launch)
    (tmp_path / "train.py").write_text(_TRAIN.format(save="    " + _SAVE).replace(", callbacks=[MaskSaver(cfg.save_folder)]", "").replace("from pkg.callbacks import MaskSaver\n", "import pkg.callbacks\n"))
    output = run("check", "--no-cache", "--select", "DDP014", ".").stdout
    assert "pkg/callbacks.py:18" in findings and "callbacks.py" not in output


def test_prose_about_composer_models_launches_nothing(tmp_path, run):
    launch = "# convert the composer model to a transformers model\npython convert.py --composer model.pt\n"
    assert _findings(tmp_path, run, launch) == []


def test_a_plain_run_of_a_script_named_for_composer_stays_one_process(tmp_path, run):
    """`composer` is also a word: `python train_composer.py` names no launcher, and is the one
    plain process that runs the script."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train_composer.py").write_text(
        "import torch\nimport torch.distributed as dist\n\n\n"
        "def main():\n    dist.init_process_group('nccl')\n    model = torch.nn.Linear(2, 2)\n"
        "    torch.save(model.state_dict(), 'model.pt')\n\n\nif __name__ == '__main__':\n    main()\n"
    )
    (tmp_path / "run.sh").write_text("python train_composer.py --epochs 3\n")
    assert "DDP014" not in run("check", "--no-cache", "--select", "DDP014", ".").stdout
