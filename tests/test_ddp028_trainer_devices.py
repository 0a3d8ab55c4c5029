"""DDP028 judges a metric only where a Lightning Trainer runs on several devices: how it reads the
Trainer's device settings, in the linted file and in a module that imports it."""

from pathlib import Path

import pytest

from ddplint.api import lint_paths, lint_source

MODULE = '''\
import pytorch_lightning as pl


class Regressor(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log("val/mse", self.loss(batch))
'''
TRAIN = '''\
import pytorch_lightning as pl
from pytorch_lightning.callbacks import EarlyStopping
GPUS = "0,1"
ONE = "1"


def main():
    stop = EarlyStopping("val/mse", patience=3)
    pl.Trainer({settings}, callbacks=[stop])
'''
SEVERAL = ["devices=[0, 1]", "devices=4", "devices=-1", 'devices="0,1"', 'gpus="-1"', "num_nodes=2, devices=1", 'strategy="ddp"']
ONE_DEVICE = ["devices=[0]", "devices=1", 'devices="1"', 'devices=1, strategy="ddp"']
UNKNOWN = ["devices=True", "devices=2.0", "devices=args.devices", "accelerator='gpu'"]


def _flagged_here(settings: str) -> bool:
    source = MODULE + "\n\n" + TRAIN.replace("import pytorch_lightning as pl\n", "").format(settings=settings)
    return [d.code for d in lint_source(source, select=["DDP028"])] == ["DDP028"]


def _flagged_from_importer(tmp_path: Path, settings: str, parsed: str = "") -> bool:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "case"\nversion = "0.1"\n')
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "regressor.py").write_text(MODULE)
    train = TRAIN.format(settings=settings).replace("\n\n\ndef main", "\nfrom models.regressor import Regressor\n" + parsed + "\n\ndef main")
    (tmp_path / "train.py").write_text(train)
    results = lint_paths([str(tmp_path)], select=["DDP028"])
    return [d.code for result in results for d in result.diagnostics] == ["DDP028"]


@pytest.mark.parametrize("settings", SEVERAL)
def test_a_trainer_for_several_devices_makes_the_metric_judged(tmp_path, settings):
    assert _flagged_here(settings)
    assert _flagged_from_importer(tmp_path, settings)


@pytest.mark.parametrize("settings", ONE_DEVICE + UNKNOWN)
def test_one_device_or_settings_that_do_not_say_leave_it_alone(tmp_path, settings):
    assert not _flagged_here(settings)
    assert not _flagged_from_importer(tmp_path, settings)


def test_a_name_bound_to_a_device_string_is_read_in_the_linted_file_only(tmp_path):
    # The linted file's names are known (GPUS = "0,1"); another module's are not followed.
    assert _flagged_here("devices=GPUS")
    assert not _flagged_here("devices=ONE")
    assert not _flagged_from_importer(tmp_path, "devices=GPUS")


PARSED = '''\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--devices", type=int, nargs="+", default={default})
args = parser.parse_args()
'''


@pytest.mark.parametrize(("default", "several"), [("[0, 1]", True), ("(0, 1, 2, 3)", True), ("4", True), ("[0]", False), ("None", False)])
def test_a_device_option_is_read_at_the_value_every_documented_run_gives_it(tmp_path, default, several):
    # `devices=args.devices`: the option's default, which no launch command of the project overrides.
    parsed = PARSED.format(default=default)
    assert _flagged_from_importer(tmp_path, "devices=args.devices", parsed) is several


def test_a_device_option_a_launch_command_passes_is_not_known(tmp_path):
    (tmp_path / "run.sh").write_text("python train.py --devices 0\n")
    assert not _flagged_from_importer(tmp_path, "devices=args.devices", PARSED.format(default="[0, 1]"))
