"""DDP028 on a monitored name that no log call writes out: the callback needs the key logged
(Lightning stops the run otherwise), so where the only log call of the file whose name can be
it is an f-string that matches it, that call logs it; and a Trainer built from the command line
(`Trainer.from_argparse_args(args)`) runs on several devices where a documented run of the
script passes `--gpus`, `--devices` above 1 or `--num_nodes` above 1."""

from pathlib import Path

import pytest

from ddplint.api import lint_paths

SCRIPT = '''\
import argparse
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint


class Folding(pl.LightningModule):
    def record(self, breakdown, batch, training=True):
        stage = "train" if training else "val"
        for part, value in breakdown.items():
            self.log(f"{stage}/{part}", value, on_step=training, on_epoch=not training)
        extra = self.scores(batch)
        for key, score in extra.items():
            self.log(f"{stage}/{key}", score, on_epoch=True{extra_sync})
{more}
    def scores(self, batch):
        found = {}
        found["rmsd"] = self.rmsd(batch)
        if self.full:
            found["tm"] = self.tm(batch)
        return found

    def validation_step(self, batch, batch_idx):
        breakdown = self.loss(self(batch), batch)
        self.record(breakdown, batch, training=False)


def main(args):
    callbacks = []
    if args.checkpoint:
        callbacks.append(ModelCheckpoint(monitor="val/total", mode="min", save_top_k=3))
    trainer = pl.Trainer.from_argparse_args(args, callbacks=callbacks)
    trainer.fit(Folding(), datamodule=args.data)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", type=bool, default=True)
    parser = pl.Trainer.add_argparse_args(parser)
    main(parser.parse_args())
'''


def _lint(tmp_path: Path, run: str | None = "srun python train.py --data x --gpus 4", **fill) -> list[int]:
    values = {"extra_sync": "", "more": ""}
    values.update(fill)
    (tmp_path / "train.py").write_text(SCRIPT.replace("{extra_sync}", values["extra_sync"]).replace("{more}\n", values["more"]))
    if run is not None:
        (tmp_path / "run.sh").write_text(f"#!/bin/bash\n#SBATCH --gres=gpu:4\n{run}\n")
    results = lint_paths([str(tmp_path)], select=["DDP028"])
    return [d.line for result in results for d in result.diagnostics]


def test_the_only_pattern_that_can_name_the_monitor_is_judged(tmp_path):
    # `{stage}/{key}` names only the keys `scores` returns; `{stage}/{part}` is the one that can be `val/total`.
    assert _lint(tmp_path) == [10]


@pytest.mark.parametrize("run", ["python train.py --devices 8 --accelerator cpu", "python train.py --gpus=2", "python train.py --num_nodes 2 --gpus 1"])
def test_each_setting_of_several_processes_on_the_command_line_counts(tmp_path, run):
    assert _lint(tmp_path, run) == [10]


@pytest.mark.parametrize("run", [None, "python train.py --gpus 1", "python train.py --gpus $NGPU"])
def test_a_command_line_that_does_not_show_several_processes_leaves_it_alone(tmp_path, run):
    assert _lint(tmp_path, run) == []


def test_a_second_name_that_can_be_the_monitor_leaves_it_unknown(tmp_path):
    # another f-string that may name `val/total`, or a name known only at run time: which call logs it is unknown
    more = '''
    def on_validation_epoch_end(self):
        for name, value in self.summary.items():
            self.log(f"val/{name}", value)
'''
    assert _lint(tmp_path, more=more) == []
    assert _lint(tmp_path, more="\n    def on_validation_epoch_end(self):\n        self.log(self.name, self.total)\n") == []


def test_a_synced_or_literal_log_of_the_monitor_is_not_judged_through_patterns(tmp_path):
    assert _lint(tmp_path, more='\n    def on_validation_epoch_end(self):\n        self.log("val/total", self.total, sync_dist=True)\n') == []


def test_the_pattern_counts_only_where_the_trainer_fits_the_class_that_logs_it(tmp_path):
    # a model bound to a name first is still this class; a module of another file may log the key itself
    named = SCRIPT.replace("trainer.fit(Folding(), ", "model = Folding()\n    trainer.fit(model, ")
    assert _lint_text(tmp_path, named) == [10]
    other = SCRIPT.replace("trainer.fit(Folding(), ", "Folding().summarize()\n    trainer.fit(Pretrained.load(args.path), ")
    assert _lint_text(tmp_path, other) == []


def _lint_text(tmp_path: Path, text: str) -> list[int]:
    (tmp_path / "train.py").write_text(text.replace("{extra_sync}", "").replace("{more}\n", ""))
    (tmp_path / "run.sh").write_text("python train.py --gpus 4\n")
    results = lint_paths([str(tmp_path)], select=["DDP028"])
    return [d.line for result in results for d in result.diagnostics]
