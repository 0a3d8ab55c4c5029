from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace

import libcst as cst

from ddplint.analyses.launches import Launches
from ddplint.analyses.ranks import RankRegions
from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.core.lines import split_lines
from ddplint.core.torch_api import (
    CALLBACK_MONITOR, EARLY_STOPPING, LIGHTNING_CLI, LIGHTNING_LOG, LIGHTNING_LOG_DICT, LIGHTNING_MODULE, LIGHTNING_TRAINER,
    LOG_RANK_ZERO_ONLY, LOG_SYNC_DIST, MODEL_CHECKPOINT, MONITORING_CALLBACKS, TORCHMETRICS, TRAINER_FIT,
    TRAINER_FROM_ARGPARSE,
)
from ddplint.model.configs import lookup as configs_lookup
from ddplint.model.records import Place
from ddplint.prefilter.screens import dotted
from ddplint.prefilter.triggers import SubclassTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.semantic.edits import argument_for, has_star_arguments, with_keyword_argument
from ddplint.semantic.model import dotted_name
from ddplint.semantic.walk import children, descendants

# What a torchmetrics Metric object's value is taken with: synced across ranks by the metric.
METRIC_COMPUTE = "compute"


@dataclass(frozen=True)
class _Monitor:
    """A ModelCheckpoint or EarlyStopping that monitors `name`: its call here, or its place in
    a module that imports this one."""

    name: str
    callback: str
    at: cst.Call | Place


@dataclass
class _Log:
    call: cst.Call
    cls: str
    names: dict[str, cst.BaseExpression]  # logged name -> its value
    rank_zero_region: bool
    named_by: dict[str, tuple[cst.CSTNode, str]] = field(default_factory=dict)  # a name -> where it is given, how
    # the logged names whose value is a local bound (once) to what syncs itself (`valid_loss =
    # -scores["csi"]` after `scores = self.valid_score.compute()`)
    synced: set[str] = field(default_factory=set)


@dataclass
class _Dict:
    """A dict a function builds: `summary = {...}` or `{}`, then `summary["loss"] = value`."""

    made: cst.BaseExpression  # the expression it is bound to (once)
    keys: dict[str, tuple[cst.BaseExpression, cst.CSTNode]]  # literal key -> (its value, where it is set)


@dataclass(frozen=True)
class _Template:
    """A log name that is an f-string of the method's parameters (`f"{stage} acc"`): its parts,
    text or a parameter's name, filled in by the calls of the method (`self.log_metrics(p, y, "val")`)."""

    log: _Log
    method: str
    parameters: tuple[str, ...]  # the method's parameters after `self`, in order
    defaults: dict[str, str]  # parameter -> its literal string default
    parts: tuple[tuple[bool, str], ...]  # (is a parameter, text or its name)
    value: cst.BaseExpression


@dataclass(frozen=True)
class _Pattern:
    """A log call whose name may be a monitored one: its parts, each a text (`"text"`), anything
    (`"any"`: a value known only at run time), the keys a method of its class returns (`"keys"`,
    (class, method)) or a set of keys (`"known"`). `log` is None for a call that is not a
    LightningModule's own `self.log`."""

    call: cst.Call
    parts: tuple[tuple[str, object], ...]
    log: _Log | None = None

    def matches(self, name: str, returns: dict) -> bool:
        regex = ""
        for kind, part in self.parts:
            if kind == "text":
                regex += re.escape(part)  # type: ignore[arg-type]
                continue
            keys = returns.get(part) if kind == "keys" else part if kind == "known" else None
            regex += ".*" if keys is None else "(?:" + "|".join(re.escape(key) for key in sorted(keys)) + ")" if keys else "(?!)"
        return re.fullmatch(regex, name, re.DOTALL) is not None


class UnsyncedMonitoredMetric(Rule):
    """
    Under DDP, Lightning runs a LightningModule's hooks on every rank, each over its own shard of
    the validation data, and `self.log(name, value)` records each rank's own value unless it is
    given `sync_dist=True`, which averages it across ranks. `ModelCheckpoint(monitor=name)` and
    `EarlyStopping(monitor=name)` then decide on every rank from that rank's value: the best
    score each rank records differs, the checkpoint names rank 0 writes carry rank 0's value, a
    top-k checkpoint is kept only when every rank's own value improved (Lightning reduces the
    decision across ranks), and early stopping stops when any one rank's shard stopped
    improving. With `rank_zero_only=True` the other ranks never record the metric at all, and
    their callback fails on the missing key while rank 0 goes on (Lightning's documentation:
    such a metric cannot be monitored, "improper use can lead to deadlocks"). Lightning warns at
    run time that it is "recommended to use `self.log(..., sync_dist=True)`" for epoch-level
    metrics.

    Measured on CPU with gloo, two ranks, Lightning's Trainer with `strategy="ddp"`
    (ddplint/harness/scenarios/ddp028/experiment_monitored_metric.py, which reports "needs
    lightning" where it is not installed; Lightning 2.6): with `self.log("val_loss", loss)` the
    two ranks' ModelCheckpoint record best scores of 3.486 and 18.337, each its own shard's
    loss; with `sync_dist=True` both record 10.911, their mean.

    Fires when a LightningModule of this file logs, with `self.log(name, ...)` or
    `self.log_dict({name: ...})` and a literal name (or, with `self.log`, an f-string of
    parameters of its method that the method never rebinds, `f"{stage} acc"`, filled in by each
    call of the method in its class that passes them string literals, `self.log_metrics(p, y,
    "val")`, or leaves them at a literal default; or, from a dict the method builds, `summary =
    {...}` then `summary["loss"] = x`, each literal key of it that `self.log_dict(summary)` logs
    or that `self.log(key, value)` logs in `for key, value in summary.items()`, less those an `if
    key == "..."` (`!=`, `in`, `not in` literals) around the call keeps from it), a metric that a ModelCheckpoint or
    EarlyStopping monitors (a literal `monitor=`, in this file or in a module that imports it,
    or one that imports such a module) without `sync_dist=True`, or with `rank_zero_only=True`,
    and a Trainer in this file or such a module is set for several processes (`devices` or
    `gpus` above 1, -1, a list or a "0,1" string of several, `num_nodes` above 1, or a ddp,
    fsdp or deepspeed `strategy`, also Lightning's `DDPStrategy(...)` or a project subclass of
    it, and also through the `**kwargs` dict a function or method of the file returns,
    `Trainer(**module.set_trainer_kwargs(devices=args.gpus))` (ddplint.analyses.launches:
    `Launches.trainer_arguments`); a Trainer built from the command line,
    `Trainer.from_argparse_args(args)`, where a documented run of the script passes `--gpus`
    or `--devices` above 1 or `--num_nodes` above 1): that Trainer, or that run, is the chain's
    "several ranks run the hooks" step. Also a monitor of this file that no log call names in
    full: its callback needs the key logged (Lightning stops the run without it), so where the
    one log call of the file whose name can be that key is an f-string that matches it
    (`self.log(f"{phase}/{name}", value)` in a loop over a loss breakdown, for `val/loss`; a part
    that is a loop's key over a dict a method of the class returns with literal keys, `for k, v
    in self.scores(batch).items()`, can be those keys alone), that call logs it, where the file's
    Trainer fits (`trainer.fit(model)`) an object of its class alone. Not a value that is a
    torchmetrics object or its `compute()`, which syncs itself, also through locals of the hook
    bound once to one (`scores = self.valid_score.compute()`, then `-scores["csi"]`).

    Flagged too, where the callbacks, the Trainer's settings and the model are in the config
    files a LightningCLI script is given (Lightning 2.x builds all three from them): a
    documented run of the one project script that builds a LightningCLI (`python main.py fit
    --config configs/ddp.yaml`, `-c`; several files merge, a later one winning) whose files name
    a LightningModule class of this file as the model (`model: class_path:
    models.gpt.Transformer`, or the class the CLI is given), set the trainer for several
    processes (`devices`, `num_nodes`, `strategy` as above; a strategy given as a class by its
    name) and list under `trainer: callbacks:` a ModelCheckpoint or EarlyStopping whose
    `init_args` give a literal `monitor`: that run is the "several ranks" step and the file's
    line the monitor. A run that names a config the project does not ship, or that overrides
    `--model` or `--trainer.*` on the command line, shows nothing.

    Not flagged: a torchmetrics Metric object logged as the value (`self.log("val_acc",
    self.accuracy)`) or its `compute()`, which the metric syncs itself; a `sync_dist` the code
    decides at run time or `**kwargs` (unknown); a metric no callback monitors; a monitor name
    that is not a literal (a configuration value: which metric it names is unknown here, as in
    a YAML set-up no documented LightningCLI run shows); a loop over a dict the method does not build, or under another
    test of the key (which keys it logs is unknown); a monitor no log call names in full where
    two calls' names can be it, or a log call's name is known only at run time; a module whose Trainers are all for one device, or where no
    Trainer shown says how many processes run (settings from a configuration file, or a
    command line no documented run shows: unknown, so silent).

    Fix (safe): add `sync_dist=True` (or turn `sync_dist=False` into it). Offered only where
    the log call is not in a rank-0 branch and does not pass `rank_zero_only=True`; there the
    metric must be logged on every rank first.
    """

    code = "DDP028"
    name = "unsynced-monitored-metric"
    needs_ranks = True
    frameworks = (Framework.LIGHTNING,)
    message = (
        "metric monitored by ModelCheckpoint/EarlyStopping is logged without sync_dist=True: each rank decides "
        "from its own shard's value, so the ranks keep different best checkpoints or stop at different times; "
        "log it with sync_dist=True"
    )
    rank_zero_message = (
        "metric monitored by ModelCheckpoint/EarlyStopping is logged with rank_zero_only=True: the other ranks "
        "never record it and their callback fails or hangs on the missing key; log it on every rank with "
        "sync_dist=True"
    )
    fix = Applicability.SAFE
    # `also`: the log call it looks at.
    trigger = SubclassTrigger(LIGHTNING_MODULE, also=(".log",))
    analyses = (RankRegions, Launches)

    flagged_examples = (
        Flagged(
            """
            import torch
            import lightning as L
            from lightning.pytorch.callbacks import ModelCheckpoint

            class Classifier(L.LightningModule):
                def validation_step(self, batch, batch_idx):
                    x, y = batch
                    loss = torch.nn.functional.cross_entropy(self(x), y)
                    self.log("val_loss", loss, prog_bar=True)
                    ^

                def configure_callbacks(self):
                    return [ModelCheckpoint(monitor="val_loss", mode="min", save_top_k=3)]

            def main(data):
                L.Trainer(accelerator="gpu", devices=[0, 1]).fit(Classifier(), data)
            """,
            fix_edits=(("prog_bar=True", "prog_bar=True, sync_dist=True"),),
            messages=(
                "metric monitored by ModelCheckpoint/EarlyStopping is logged without sync_dist=True: each rank "
                "decides from its own shard's value, so the ranks keep different best checkpoints or stop at "
                "different times; log it with sync_dist=True (`val_loss` is monitored by ModelCheckpoint in this file)"
            ),
        ),
        Flagged(
            """
            import pytorch_lightning as pl
            from pytorch_lightning.callbacks import EarlyStopping

            class Regressor(pl.LightningModule):
                def validation_step(self, batch, batch_idx):
                    mse = self.loss(batch)
                    self.log_dict({"val/mse": mse, "val/n": len(batch)}, sync_dist=False)
                    ^
                    self.log("val/mse_rank0", mse, rank_zero_only=True)
                    ^

            def main():
                stop = EarlyStopping("val/mse", patience=3)
                best = EarlyStopping(monitor="val/mse_rank0")
                trainer = pl.Trainer(devices=4, strategy="ddp", callbacks=[stop, best])
            """,
            fix_edits=(("sync_dist=False", "sync_dist=True"),),
            messages=(
                "metric monitored by ModelCheckpoint/EarlyStopping is logged without sync_dist=True: each rank "
                "decides from its own shard's value, so the ranks keep different best checkpoints or stop at "
                "different times; log it with sync_dist=True (`val/mse` is monitored by EarlyStopping in this file)",
                "metric monitored by ModelCheckpoint/EarlyStopping is logged with rank_zero_only=True: the other "
                "ranks never record it and their callback fails or hangs on the missing key; log it on every rank "
                "with sync_dist=True (`val/mse_rank0` is monitored by EarlyStopping in this file)",
            ),
        ),
        Flagged(
            # The Trainer's arguments are a dict a method returns, whose strategy is a project
            # subclass of DDPStrategy: a DDP run of several ranks (Earthformer's ENSO script).
            """
            import pytorch_lightning as pl
            from pytorch_lightning.callbacks import ModelCheckpoint
            from pytorch_lightning.strategies import DDPStrategy

            class ApexDDPStrategy(DDPStrategy):
                pass

            class Forecaster(pl.LightningModule):
                def validation_epoch_end(self, outputs):
                    self.log("valid_loss_epoch", -self.score(outputs), on_epoch=True)
                    ^

                def set_trainer_kwargs(self, **kwargs):
                    best = ModelCheckpoint(monitor="valid_loss_epoch", save_top_k=3)
                    ret = dict(callbacks=[best], strategy=ApexDDPStrategy(find_unused_parameters=False))
                    ret.update(kwargs)
                    return ret

            def main(args):
                pl.seed_everything(args.seed, workers=True)
                model = Forecaster()
                trainer_kwargs = model.set_trainer_kwargs(devices=args.gpus)
                trainer = pl.Trainer(**trainer_kwargs)
                trainer.fit(model)
            """,
            fix_edits=(('on_epoch=True)', 'on_epoch=True, sync_dist=True)'),),
            messages=(
                "metric monitored by ModelCheckpoint/EarlyStopping is logged without sync_dist=True: each rank "
                "decides from its own shard's value, so the ranks keep different best checkpoints or stop at "
                "different times; log it with sync_dist=True (`valid_loss_epoch` is monitored by ModelCheckpoint in this file)"
            ),
        ),
        Flagged(
            # The name is an f-string of a parameter: the hook's call passes "val", so it logs "val acc".
            """
            import lightning as L
            from lightning.pytorch.callbacks import EarlyStopping

            class Classifier(L.LightningModule):
                def log_metrics(self, preds, targets, stage):
                    accuracy = (preds == targets).float().mean()
                    self.log(f"{stage} acc", accuracy)
                    ^

                def validation_step(self, batch, batch_idx):
                    x, y = batch
                    self.log_metrics(self(x).argmax(-1), y, "val")

                def test_step(self, batch, batch_idx):
                    x, y = batch
                    self.log_metrics(self(x).argmax(-1), y, stage="test")

            def main(data):
                trainer = L.Trainer(devices=2, callbacks=[EarlyStopping(monitor="val acc", mode="max")])
                trainer.fit(Classifier(), data)
            """,
            fix_edits=(("accuracy)\n", "accuracy, sync_dist=True)\n"),),
            messages=(
                "metric monitored by ModelCheckpoint/EarlyStopping is logged without sync_dist=True: each rank "
                "decides from its own shard's value, so the ranks keep different best checkpoints or stop at "
                "different times; log it with sync_dist=True (`val acc` is monitored by EarlyStopping in this file)"
            ),
        ),
        Flagged(
            # The name is a loop's key over a dict the hook builds: `summary["loss"]` is one of them.
            """
            import torch
            import lightning as L
            from lightning.pytorch.callbacks import ModelCheckpoint

            class Tuner(L.LightningModule):
                def on_validation_epoch_end(self):
                    summary = {"count": len(self.losses)}
                    summary["loss"] = torch.stack(self.losses).mean().item()
                    for key, value in summary.items():
                        if key == "count":
                            self.log(key, value, prog_bar=True)
                        else:
                            self.log(key, value, logger=True)
                            ^
                    self.losses.clear()

            def main(data):
                checkpoint = ModelCheckpoint(monitor="loss", mode="min")
                L.Trainer(devices=4, callbacks=[checkpoint]).fit(Tuner(), data)
            """,
            fix_edits=(("logger=True)", "logger=True, sync_dist=True)"),),
            messages=(
                "metric monitored by ModelCheckpoint/EarlyStopping is logged without sync_dist=True: each rank "
                "decides from its own shard's value, so the ranks keep different best checkpoints or stop at "
                "different times; log it with sync_dist=True (`loss` is monitored by ModelCheckpoint in this file)"
            ),
        ),
    )
    clean_examples = (
        Clean(
            # The monitored value is a local computed from a metric's `compute()`, which syncs
            # its state across the ranks itself (Earthformer's SEVIR and N-body scripts).
            """
            import pytorch_lightning as pl
            from pytorch_lightning.callbacks import ModelCheckpoint

            class Nowcaster(pl.LightningModule):
                def validation_epoch_end(self, outputs):
                    scores = self.valid_score.compute()
                    valid_loss = -scores["avg"]["csi"]
                    self.log("valid_loss_epoch", valid_loss, on_epoch=True)

            def main():
                best = ModelCheckpoint(monitor="valid_loss_epoch", save_top_k=3)
                trainer = pl.Trainer(devices=2, strategy="ddp", callbacks=[best])
                trainer.fit(Nowcaster())
            """
        ),
        Clean(
            """
            import torch
            import torchmetrics
            import lightning as L
            from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint

            class Classifier(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.val_acc = torchmetrics.Accuracy(task="multiclass", num_classes=10)

                def training_step(self, batch, batch_idx):
                    loss = self.loss(batch)
                    self.log("train_loss", loss)
                    return loss

                def validation_step(self, batch, batch_idx):
                    x, y = batch
                    self.val_acc(self(x), y)
                    self.log("val_acc", self.val_acc)
                    self.log("val_loss", self.loss(batch), sync_dist=True)

                def on_validation_epoch_end(self):
                    self.log("val_acc_epoch", self.val_acc.compute())

            def main(sync):
                callbacks = [
                    ModelCheckpoint(monitor="val_acc", mode="max"),
                    ModelCheckpoint(monitor="val_loss"),
                    EarlyStopping(monitor="val_acc_epoch"),
                ]
                return L.Trainer(devices=2, callbacks=callbacks)
            """
        ),
        Clean(
            # No Trainer shown says how many processes run the module (its settings come from
            # the command line): whether several ranks log the metric is unknown.
            """
            import pytorch_lightning as pl
            from pytorch_lightning.callbacks import ModelCheckpoint

            class Model(pl.LightningModule):
                def validation_step(self, batch, batch_idx):
                    self.log("val_loss", self.loss(batch))

            def main(args):
                trainer = pl.Trainer.from_argparse_args(args, callbacks=[ModelCheckpoint(monitor="val_loss")])
                trainer.fit(Model())
            """
        ),
        Clean(
            # One device: a single process, nothing to sync. The monitor from a configuration
            # file, and a sync decided at run time, are unknown here.
            """
            import lightning as L
            from lightning.pytorch.callbacks import ModelCheckpoint

            class Model(L.LightningModule):
                def validation_step(self, batch, batch_idx):
                    self.log("val_loss", self.loss(batch))
                    self.log(self.monitor, self.loss(batch))
                    self.log("val_rec", self.loss(batch), sync_dist=self.distributed)

            def main(cfg):
                checkpoints = [ModelCheckpoint(monitor="val_loss"), ModelCheckpoint(monitor=cfg.monitor)]
                trainer = L.Trainer(devices=1, callbacks=checkpoints)
            """
        ),
        Clean(
            # Loops over a dict's keys: the monitored one is logged with sync_dist=True, skipped by
            # a test of the key, or left to a test ddplint cannot read; a dict the hook does not
            # build (its keys are unknown here).
            """
            import lightning as L
            from lightning.pytorch.callbacks import EarlyStopping

            class Model(L.LightningModule):
                def on_validation_epoch_end(self):
                    summary = {"val_loss": self.mean_loss(), "val_n": self.count}
                    for key, value in summary.items():
                        self.log(key, value, sync_dist=True)
                    extra = {}
                    extra["val_loss"] = self.mean_loss()
                    extra["val_max"] = self.max_loss()
                    for name, value in extra.items():
                        if name != "val_loss":
                            self.log(name, value)
                    for name in extra:
                        if name.startswith("train"):
                            self.log(name, extra[name])
                    for name, value in self.outputs.items():
                        self.log(name, value)

            def main(data):
                L.Trainer(devices=2, callbacks=[EarlyStopping(monitor="val_loss")]).fit(Model(), data)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._lightning: set[str] = set()
        self._metrics: dict[str, set[str]] = {}  # class -> its `self.x` torchmetrics objects
        self._logs: list[_Log] = []
        self._monitors: list[_Monitor] = []
        self._trainers: list[tuple[bool | None, cst.Call | Place, str]] = []  # per Trainer(...) here: several devices? where, why
        self._patterns: list[_Pattern] = []  # the log calls whose names are not written out, and other modules' `x.log(...)`
        self._unknown_logs = False  # a log call whose name ddplint cannot tell: it may log any monitored name
        self._returns: dict[tuple[str, str], set[str] | None] = {}  # (class, method) -> the keys of the dicts it returns
        self._fitted: list[str | None] = []  # per `trainer.fit(model, ...)` here: the class of this file it builds the model of
        self._templates: list[_Template] = []
        self._self_calls: list[tuple[str, str, cst.Call]] = []  # (class, method, call): `self.log_metrics(...)`
        self._dicts: dict[tuple[int, str], _Dict] = {}  # (function scope, name) -> the dict it builds so far

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if any(self.model.qualified(b.value) in LIGHTNING_MODULE or dotted_name(b.value) in self._lightning for b in node.bases):
            self._lightning.add(node.name.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._note_dict(node)
        cls = self._lightning_class()
        value = node.value
        if cls is None or not isinstance(value, cst.Call) or self.model.qualified(value.func) not in TORCHMETRICS:
            return
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None and name.startswith("self."):
                self._metrics.setdefault(cls, set()).add(name)

    def _note_dict(self, node: cst.Assign) -> None:
        """Follow the dicts a method of a LightningModule builds: `summary = {}`, `summary["loss"] = x`."""
        function = self.model.function
        if function is None or self._lightning_class() is None or len(node.targets) != 1:
            return
        target, scope = node.targets[0].target, id(function.scope)
        if isinstance(target, cst.Name) and _empty_or_dict(node.value):
            keys = {}
            for element in node.value.elements if isinstance(node.value, cst.Dict) else ():
                key = self.model.string_value(element.key) if isinstance(element, cst.DictElement) else None
                if key is not None:
                    keys[key] = (element.value, element)  # type: ignore[union-attr]
            self._dicts[(scope, target.value)] = _Dict(node.value, keys)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and (scope, target.value.value) in self._dicts:
            key = self._subscript_key(target)
            if key is not None:
                self._dicts[(scope, target.value.value)].keys[key] = (node.value, node)

    def _subscript_key(self, target: cst.Subscript) -> str | None:
        element = target.slice[0] if len(target.slice) == 1 else None
        index = element.slice if element is not None else None
        return self.model.string_value(index.value) if isinstance(index, cst.Index) else None

    def visit_Del(self, node: cst.Del) -> None:
        """`del summary["loss"]`: the key is no longer logged."""
        function = self.model.function
        target = node.target
        if function is not None and isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            built = self._dicts.get((id(function.scope), target.value.value))
            if built is not None:
                built.keys.pop(self._subscript_key(target) or "", None)

    def _built(self, name: cst.BaseExpression) -> tuple[str, _Dict] | None:
        """The dict this function built that `name` holds, where the name is bound to it once."""
        function = self.model.function
        if function is None or not isinstance(name, cst.Name):
            return None
        built = self._dicts.get((id(function.scope), name.value))
        return (name.value, built) if built is not None and self.model.constant(name.value) is built.made else None

    def _lightning_class(self) -> str | None:
        self_class = self.model.frame.self_class
        return self_class.name.value if self_class is not None and self_class.name.value in self._lightning else None

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        if qualified in MONITORING_CALLBACKS:
            given = _monitor_argument(node, qualified)
            name = self.model.string_value(given.value) if given is not None else None
            if name is not None:
                self._monitors.append(_Monitor(name, _callback_name(qualified), node))
            return
        func = node.func
        from_command_line = isinstance(func, cst.Attribute) and func.attr.value == TRAINER_FROM_ARGPARSE
        if qualified in LIGHTNING_TRAINER or from_command_line and self.model.qualified(func.value) in LIGHTNING_TRAINER:  # type: ignore[union-attr]
            self._note_trainer(node, from_command_line)
            return
        if isinstance(func, cst.Attribute) and func.attr.value in TRAINER_FIT:
            self._fitted.append(self._fitted_class(node))
        cls = self._lightning_class()
        api = _log_api(func)
        if cls is None or not (isinstance(func, cst.Attribute) and dotted_name(func.value) == self.model.frame.self_name):
            if api is not None and qualified is None:
                self._note_other_log(node, api)  # `pl_module.log(...)` in a callback: it may log a monitored name
            return
        if api is None or has_star_arguments(node):
            if api is None and not has_star_arguments(node):
                self._self_calls.append((cls, func.attr.value, node))  # type: ignore[union-attr]
            self._unknown_logs |= api is not None
            return
        names = self._logged(node, api)
        log = _Log(node, cls, names, self.model.get(RankRegions).only_rank_zero)
        if not names:
            names, log.named_by = self._from_dict(node, api)
            log.names = names
        if names:
            log.synced = {name for name, value in names.items() if self._synced_through_locals(value, cls)}
            self._logs.append(log)
            return
        if api is LIGHTNING_LOG:
            self._template(log)
        name = argument_for(node, api, "name") if api is LIGHTNING_LOG else None
        parts = self._name_parts(name.value) if name is not None else None
        if parts is None:
            self._unknown_logs = True
        else:
            self._patterns.append(_Pattern(node, parts, log))

    def _fitted_class(self, call: cst.Call) -> str | None:
        """The class whose object `trainer.fit(model, ...)` trains: `Model(...)`, or a name bound
        once to one; None where unknown."""
        given = argument_for(call, TRAINER_FIT, "model")
        model = given.value if given is not None else None
        if isinstance(model, cst.Name):
            model = self.model.constant(model.value)
        return model.func.value if isinstance(model, cst.Call) and isinstance(model.func, cst.Name) else None

    def _note_trainer(self, node: cst.Call, from_command_line: bool) -> None:
        """A Trainer: whether it runs on several devices, by its settings, or, built from the
        command line without them, by the options a documented run of this script passes."""
        project = self.model.project
        option = project.documented_value if project is not None else None
        given = node.args if from_command_line else self.model.get(Launches).trainer_arguments(node)
        settings = _trainer_settings_cst(self.model, given, option)
        several = _several_devices(settings)
        if several is None and from_command_line and project is not None and not settings.keys() & _COUNT_SETTINGS:
            for command in project.runs(own=True):
                given = _command_line_settings(command.command)
                if _several_devices(given):
                    shown = " ".join(f"--{key} {value}" for key, value in given.items())
                    why = f"this run passes `{shown}` to the script, whose Trainer takes its settings from the command line: every rank runs the module's hooks"
                    self._trainers.append((True, command.place, why))
                    return
        self._trainers.append((several, node, "this Trainer runs on several devices: every rank runs the module's hooks"))

    def _note_other_log(self, node: cst.Call, api) -> None:
        """A `.log(...)`/`.log_dict(...)` not on a LightningModule's own `self`: a name it may give
        (a call with fewer arguments than Lightning's, a tensor's `x.log()`, is none)."""
        if len(node.args) < (2 if api is LIGHTNING_LOG else 1):
            return
        name = node.args[0].value if node.args and node.args[0].keyword is None else None
        parts = self._name_parts(name) if api is LIGHTNING_LOG and name is not None else None
        if parts is None:
            self._unknown_logs = True
        else:
            self._patterns.append(_Pattern(node, parts))

    def _name_parts(self, name: cst.BaseExpression) -> tuple[tuple[str, object], ...] | None:
        """The parts of a log name (`_Pattern`): a literal, or an f-string whose parts are text,
        a loop's key over the dict a method of the class returns or this function built, or
        anything; None for a name known only at run time."""
        text = self.model.string_value(name)
        if text is not None:
            return (("text", text),)
        if not isinstance(name, cst.FormattedString):
            return None
        parts: list[tuple[str, object]] = []
        for part in name.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(("text", part.value))
                continue
            expr = part.expression
            keys = self._loop_keys(expr) if part.conversion is None and part.format_spec is None else None
            parts.append(keys if keys is not None else ("any", None))
        return tuple(parts)

    def _loop_keys(self, expr: cst.BaseExpression) -> tuple[str, object] | None:
        """The keys a loop's key `k` takes, `for k, v in scores.items()`: those of the dict this
        function built, or of what `scores = self.scores(batch)` returns ((class, method))."""
        if not isinstance(expr, cst.Name):
            return None
        loop = next((loop for loop in reversed(self.model.loops) if expr.value in _loop_names(loop)), None)
        if not isinstance(loop, cst.For) or expr.value in _rebound_in(loop.body):
            return None
        over, _ = _looped_dict(loop, expr.value)
        built = self._built(over) if over is not None else None
        if built is not None:
            return ("known", frozenset(built[1].keys))
        made = self.model.constant(over.value) if isinstance(over, cst.Name) else None
        cls = self._lightning_class()
        if (
            isinstance(made, cst.Call) and isinstance(made.func, cst.Attribute) and cls is not None
            and dotted_name(made.func.value) == self.model.frame.self_name
        ):
            return ("keys", (cls, made.func.attr.value))
        return None

    def visit_Return(self, node: cst.Return) -> None:
        """What a method of a LightningModule returns: the keys of a dict it built and uses
        only by literal keys (`found = {}`, `found["rmsd"] = x`, `return found`)."""
        cls, function = self._lightning_class(), self.model.frame.function
        if cls is None or not isinstance(function, cst.FunctionDef):
            return
        key = (cls, function.name.value)
        keys = self._returned_keys(node.value, function)
        before = self._returns.get(key, set())
        self._returns[key] = None if keys is None or before is None else before | keys

    def _returned_keys(self, value: cst.BaseExpression | None, function: cst.FunctionDef) -> set[str] | None:
        if isinstance(value, cst.Dict):
            keys = [self.model.string_value(e.key) if isinstance(e, cst.DictElement) else None for e in value.elements]
            return None if None in keys else set(keys)  # type: ignore[arg-type]
        built = self._built(value) if value is not None else None
        if built is None:
            return None
        allowed: set[int] = set()
        for node in descendants(function.body):
            if isinstance(node, cst.Subscript) and self._subscript_key(node) is not None:
                allowed.add(id(node.value))
            elif isinstance(node, (cst.AssignTarget, cst.Return)):
                allowed.add(id(node.target if isinstance(node, cst.AssignTarget) else node.value))
            elif isinstance(node, cst.Attribute):
                allowed.add(id(node.attr))
            elif isinstance(node, cst.Arg) and node.keyword is not None:
                allowed.add(id(node.keyword))
        used = [node for node in descendants(function.body) if isinstance(node, cst.Name) and node.value == built[0]]
        return set(built[1].keys) if all(id(node) in allowed for node in used) else None

    def _from_dict(self, call: cst.Call, api) -> tuple[dict[str, cst.BaseExpression], dict[str, tuple[cst.CSTNode, str]]]:
        """The names logged from a dict this method built (`_Dict`): `self.log_dict(summary)`, or
        `self.log(key, value)` in `for key, value in summary.items()` (or `for key in summary`),
        less the keys a test of `key` around the call rules out; each with its value and where
        the key is set."""
        if api is LIGHTNING_LOG_DICT:
            given = argument_for(call, api, "dictionary")
            built = self._built(given.value) if given is not None else None
            return _named_from(built, built[1].keys if built is not None else {}, None, call)
        name, value = argument_for(call, api, "name"), argument_for(call, api, "value")
        if name is None or value is None or not isinstance(name.value, cst.Name):
            return {}, {}
        key = name.value.value
        loop = next((loop for loop in reversed(self.model.loops) if key in _loop_names(loop)), None)
        if loop is None or not isinstance(loop, cst.For):
            return {}, {}
        over, item = _looped_dict(loop, key)
        built = self._built(over) if over is not None else None
        if built is None or key in _rebound_in(loop.body):
            return {}, {}
        keys = _tested_keys(self.model.string_value, self.model.ifs, loop, key, call, dict(built[1].keys))
        if keys is None:
            return {}, {}  # a test of the key that ddplint cannot read: which keys this call logs is unknown
        taken = item is not None and isinstance(value.value, cst.Name) and value.value.value == item
        return _named_from(built, keys, None if taken else value.value, call)

    def _template(self, log: _Log) -> None:
        """Keep `self.log(f"{stage} acc", value)` in a method whose parameter `stage` it reads
        and never rebinds: the calls of the method name what it logs."""
        name, value = argument_for(log.call, LIGHTNING_LOG, "name"), argument_for(log.call, LIGHTNING_LOG, "value")
        function = self.model.frame.function
        if name is None or value is None or not isinstance(name.value, cst.FormattedString) or not isinstance(function, cst.FunctionDef):
            return
        params = function.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None:
            return  # `*args`, `**kwargs`: which argument is which is unknown
        positional = [param.name.value for param in (*params.posonly_params, *params.params)]
        every = positional + [param.name.value for param in params.kwonly_params]
        defaults = {
            param.name.value: self.model.string_value(param.default)
            for param in (*params.posonly_params, *params.params, *params.kwonly_params)
            if param.default is not None and self.model.string_value(param.default) is not None
        }
        rebound = {dotted_name(node.target) for node in descendants(function.body) if isinstance(node, cst.AssignTarget)}
        parts: list[tuple[bool, str]] = []
        for part in name.value.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append((False, part.value))
                continue
            expr = part.expression
            plain = part.conversion is None and part.format_spec is None
            if not (plain and isinstance(expr, cst.Name) and expr.value in every[1:] and expr.value not in rebound):
                return
            parts.append((True, expr.value))
        if positional and positional[0] == self.model.frame.self_name:
            self._templates.append(_Template(log, function.name.value, tuple(every[1:]), defaults, tuple(parts), value.value))

    def _filled(self, template: _Template) -> dict[str, tuple[cst.CSTNode, str]]:
        """The names a template logs, each with a call of its method (in its class) that passes
        string literals for its parameters."""
        found: dict[str, tuple[cst.CSTNode, str]] = {}
        for cls, method, call in self._self_calls:
            if cls != template.log.cls or method != template.method:
                continue
            given = dict(template.defaults)
            for index, arg in enumerate(call.args):
                keyword = arg.keyword.value if arg.keyword is not None else None
                target = keyword if keyword is not None else template.parameters[index] if index < len(template.parameters) else None
                text = self.model.string_value(arg.value)
                if target is not None and text is not None:
                    given[target] = text
                elif target is not None:
                    given.pop(target, None)
            if all(given.get(text) is not None for is_parameter, text in template.parts if is_parameter):
                name = "".join(given[text] if is_parameter else text for is_parameter, text in template.parts)
                found[name] = (call, f"this call of {dotted_name(call.func)}() fills in the logged name: `{name}`")
        return found

    def _logged(self, call: cst.Call, api) -> dict[str, cst.BaseExpression]:
        """The literal names a log call records, each with its value."""
        if api is LIGHTNING_LOG:
            name, value = argument_for(call, api, "name"), argument_for(call, api, "value")
            text = self.model.string_value(name.value) if name is not None else None
            return {text: value.value} if text is not None and value is not None else {}
        given = argument_for(call, api, "dictionary")
        if given is None or not isinstance(given.value, cst.Dict):
            return {}
        found = {}
        for element in given.value.elements:
            if isinstance(element, cst.DictElement) and self.model.string_value(element.key) is not None:
                found[self.model.string_value(element.key)] = element.value
        return found  # type: ignore[return-value]

    def leave_Module(self, original_node: cst.Module) -> None:
        for template in self._templates:
            filled = self._filled(template)
            if filled:
                self._logs.append(replace(template.log, names={name: template.value for name in filled}, named_by=filled))
        if not self._logs and not self._patterns:
            return
        judged: set[tuple[int, str]] = set()
        runs = self._several_ranks()
        if runs is not None:  # else nothing here shows a Trainer that runs these hooks on several ranks
            monitors = {m.name: m for m in [*self._monitors, *self._imported_monitors()]}
            for log in self._logs:
                for name, value in log.names.items():
                    monitor = monitors.get(name)
                    if monitor is None or name in log.synced or self._synced_itself(value, log.cls):
                        continue
                    judged.add((id(log.call), name))
                    self._judge(log, name, monitor, runs)
            self._judge_patterns(runs)
        self._judge_cli_runs(judged)

    def _judge_cli_runs(self, judged: set[tuple[int, str]]) -> None:
        """The log calls of a class a documented LightningCLI run trains, by the config files it
        passes (`python main.py fit --config configs/ddp.yaml`), whose trainer there runs on
        several devices and whose callbacks there monitor the logged name."""
        project = self.model.project
        if project is None or not self._logs:
            return
        for cls, monitors, runs in cli_runs(project, {log.cls for log in self._logs}):
            for log in (log for log in self._logs if log.cls == cls):
                for name, value in log.names.items():
                    monitor = monitors.get(name)
                    if monitor is None or (id(log.call), name) in judged or name in log.synced or self._synced_itself(value, log.cls):
                        continue
                    judged.add((id(log.call), name))
                    self._judge(log, name, monitor, runs)

    def _judge_patterns(self, runs: Link) -> None:
        """A monitor of this file that no log call names in full: its callback needs the key
        logged (Lightning stops the run when it is missing), so where one log call alone of this
        file can give that name, an f-string that matches it (`f"{stage}/{part}"` for
        `val/loss`), that call logs it. Unknown where a log call's name is known only at run time."""
        if self._unknown_logs or not self._fitted or any(cls not in self._lightning for cls in self._fitted):
            return  # a module a Trainer here fits may be another file's, which may log the key itself
        logged = {name for log in self._logs for name in log.names}
        for monitor in self._monitors:
            if monitor.name in logged:
                continue
            matching = [pattern for pattern in self._patterns if pattern.matches(monitor.name, self._returns)]
            log = matching[0].log if len(matching) == 1 else None
            if log is not None and log.cls not in self._fitted:
                continue
            value = argument_for(log.call, LIGHTNING_LOG, "value") if log is not None else None
            if log is None or value is None or self._synced_itself(value.value, log.cls):
                continue
            why = (f"the one log call of this file whose name can be `{monitor.name}`: the callback needs that key logged "
                   "(Lightning stops the run without it), so this call logs it")
            self._judge(replace(log, named_by={monitor.name: (log.call, why)}), monitor.name, monitor, runs)

    def _several_ranks(self) -> Link | None:
        """The step "several ranks run these hooks": a Trainer here, or in a module importing
        this one, set for several devices or nodes or a multi-process strategy; None when every
        Trainer shown is for one device or none says how many."""
        if any(several is False for several, _, _ in self._trainers) and not any(several for several, _, _ in self._trainers):
            return None
        here = next(((at, why) for several, at, why in self._trainers if several), None)
        if here is not None:
            return Link(StepKind.RUNS, here[1], here[0])
        project = self.model.project
        if project is None:
            return None
        program = project.program
        for importer in importers(program, project.module):
            place = several_devices_trainer(program, importer, project.seen_from(importer).documented_value)
            if place is not None:
                return Link(StepKind.RUNS, "this Trainer runs on several devices: every rank runs the module's hooks", place)
        return None

    def _judge(self, log: _Log, name: str, monitor: _Monitor, runs: Link) -> None:
        api = LIGHTNING_LOG if log.call.func.attr.value in LIGHTNING_LOG else LIGHTNING_LOG_DICT  # type: ignore[attr-defined]
        sync, rank_zero = _flag(argument_for(log.call, api, LOG_SYNC_DIST)), _flag(argument_for(log.call, api, LOG_RANK_ZERO_ONLY))
        if rank_zero is None or (not rank_zero and sync is not False):
            return  # synced, or decided at run time
        where = "in this file" if isinstance(monitor.at, cst.CSTNode) else f"at {monitor.at}"
        note = f"`{name}` is monitored by {monitor.callback} {where}"
        harm = ("only rank 0 records it; the other ranks' callback finds no such metric" if rank_zero else
                "each rank records its own shard's value, and the callback decides on every rank from that")
        named = log.named_by.get(name)
        chain = [
            Link(StepKind.MADE, f"{monitor.callback} monitors `{name}`", monitor.at),
            runs,
            *([Link(StepKind.REACHES, named[1], named[0])] if named is not None else []),
            Link(StepKind.HARM, harm, log.call),
        ]
        message = self.rank_zero_message if rank_zero else self.message
        fix = None
        if not rank_zero and not log.rank_zero_region:
            fix = {log.call: _with_sync(log.call, api)}
        self.report(log.call, f"{message} ({note})", replace=fix, chain=chain)

    def _synced_through_locals(self, value: cst.BaseExpression, cls: str, depth: int = 0) -> bool:
        """`_synced_itself` of a value that reads locals of the hook (as the walk is in it):
        what each name is bound to once, followed a few bindings deep."""
        if depth > 4:
            return False
        names = [node.value for node in descendants(value) if isinstance(node, cst.Name)]
        bound = [found for name in names if (found := self.model.constant(name)) is not None and found is not value]
        return any(self._synced_itself(found, cls) or self._synced_through_locals(found, cls, depth + 1) for found in bound)

    def _synced_itself(self, value: cst.BaseExpression, cls: str) -> bool:
        """A torchmetrics object, or its `compute()`, which syncs across ranks itself."""
        metrics = self._metrics.get(cls, set())
        stack = [value]
        while stack:
            node = stack.pop()
            if dotted_name(node) in metrics:  # type: ignore[arg-type]
                return True
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == METRIC_COMPUTE:
                return True
            stack.extend(children(node))
        return False

    def _imported_monitors(self) -> list[_Monitor]:
        project = self.model.project
        if project is None:
            return []
        program = project.program
        return [m for importer in importers(program, project.module) for m in monitors_in(program, importer)]


def _log_api(func: cst.BaseExpression):
    """LIGHTNING_LOG for a `x.log(...)` call, LIGHTNING_LOG_DICT for `x.log_dict(...)`, None otherwise."""
    method = func.attr.value if isinstance(func, cst.Attribute) else None
    return LIGHTNING_LOG if method in LIGHTNING_LOG else LIGHTNING_LOG_DICT if method in LIGHTNING_LOG_DICT else None


def _command_line_settings(command: str) -> dict[str, object]:
    """The device settings a command passes a script (`--gpus 4`, `--devices=8`, `--num_nodes 2`)."""
    settings: dict[str, object] = {}
    for match in _COUNT_OPTION.finditer(command):
        key, value = match.group(1), match.group(2)
        settings[key] = int(value) if key == "num_nodes" and value.isdigit() else value
    return settings


def _empty_or_dict(value: cst.BaseExpression) -> bool:
    """`{...}` or `dict()`."""
    if isinstance(value, cst.Dict):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict" and not value.args


def _loop_names(loop: cst.For | cst.While) -> set[str]:
    if not isinstance(loop, cst.For):
        return set()
    target = loop.target
    parts = [element.value for element in target.elements] if isinstance(target, cst.Tuple) else [target]
    return {part.value for part in parts if isinstance(part, cst.Name)}


def _looped_dict(loop: cst.For, key: str) -> tuple[cst.BaseExpression | None, str | None]:
    """What `for key, value in summary.items()` (or `for key in summary` / `summary.keys()`)
    loops over, `summary`, and the name of the value (None without one); (None, None) for
    other loops."""
    target, over = loop.target, loop.iter
    method = over.func.attr.value if isinstance(over, cst.Call) and isinstance(over.func, cst.Attribute) and not over.args else None
    owner = over.func.value if method is not None else over  # type: ignore[union-attr]
    if isinstance(target, cst.Name) and target.value == key and method in (None, "keys"):
        return owner, None
    pair = [element.value for element in target.elements] if isinstance(target, cst.Tuple) else []
    if method == "items" and len(pair) == 2 and all(isinstance(p, cst.Name) for p in pair) and pair[0].value == key:  # type: ignore[attr-defined]
        return owner, pair[1].value  # type: ignore[attr-defined]
    return None, None


def _rebound_in(body: cst.CSTNode) -> set[str]:
    return {node.target.value for node in descendants(body) if isinstance(node, (cst.AssignTarget, cst.AugAssign)) and isinstance(node.target, cst.Name)}


def _tested_keys(string_value, ifs: list[cst.If], loop: cst.For, key: str, call: cst.Call, keys: dict) -> dict | None:
    """`keys` less those a test of `key` in the loop keeps away from `call` (`if key ==
    "accuracy": ... else: <call>`); None where the call is under a test of the key other than
    `==`, `!=`, `in` or `not in` literals."""
    inside = {id(node) for node in descendants(loop.body)}
    for branch in ifs:
        if id(branch) not in inside or not any(isinstance(n, cst.Name) and n.value == key for n in descendants(branch.test)):
            continue
        literals = _compared(string_value, branch.test, key)
        if literals is None:
            return None
        wanted, texts = literals
        in_body = any(node is call for node in descendants(branch.body))
        keep = wanted if in_body else not wanted
        keys = {name: given for name, given in keys.items() if (name in texts) == keep}
    return keys


def _compared(string_value, test: cst.BaseExpression, key: str) -> tuple[bool, set[str]] | None:
    """`key == "a"`, `key in ("a", "b")`: (True, the literals); `!=`, `not in`: (False, ...)."""
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == key and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    operator, right = comparison.operator, comparison.comparator
    if isinstance(operator, (cst.Equal, cst.NotEqual)):
        texts = [string_value(right)]
    elif isinstance(operator, (cst.In, cst.NotIn)) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        texts = [string_value(element.value) for element in right.elements]
    else:
        return None
    if any(text is None for text in texts):
        return None
    return isinstance(operator, (cst.Equal, cst.In)), set(texts)  # type: ignore[arg-type]


def _named_from(built: tuple[str, _Dict] | None, keys: dict, value: cst.BaseExpression | None, call: cst.Call):
    """The names a call logs from a built dict's `keys`, each with its value (`value` where the
    call logs something else than the dict's value) and the step that names it."""
    if built is None:
        return {}, {}
    names = {name: value if value is not None else given for name, (given, _) in keys.items()}
    how = "loops over" if isinstance(call.func, cst.Attribute) and call.func.attr.value in LIGHTNING_LOG else "logs"
    named = {name: (where, f"`{name}` is a key of `{built[0]}`, set here, which the log call {how}") for name, (_, where) in keys.items()}
    return names, named


def _flag(given: cst.Arg | None) -> bool | None:
    """A boolean argument: False when left out, its literal value, None when decided at run time."""
    if given is None:
        return False
    if isinstance(given.value, cst.Name) and given.value.value in ("True", "False"):
        return given.value.value == "True"
    return None


def _with_sync(call: cst.Call, api) -> cst.Call:
    given = argument_for(call, api, LOG_SYNC_DIST)
    true = cst.Name("True")
    if given is None:
        return with_keyword_argument(call, LOG_SYNC_DIST, true)
    return call.with_changes(args=[arg.with_changes(value=true) if arg is given else arg for arg in call.args])


def _monitor_argument(call: cst.Call, qualified: str) -> cst.Arg | None:
    return argument_for(call, EARLY_STOPPING if qualified in EARLY_STOPPING else MODEL_CHECKPOINT, CALLBACK_MONITOR)


def _callback_name(qualified: str) -> str:
    return qualified.rpartition(".")[2]


def _trainer_settings_cst(model, given, option=None) -> dict[str, object]:
    """The device settings a Trainer call gives (its arguments, or the keywords with their values
    that ddplint.analyses.launches finds it passes), as `_several_devices` reads them; a setting
    read from a command-line option (`devices=args.devices`) is the value `option` says every
    documented run gives it (ProjectView.documented_value)."""
    settings: dict[str, object] = {}
    pairs = given.items() if isinstance(given, dict) else ((arg.keyword.value, arg.value) for arg in given if arg.keyword is not None)
    for keyword, value in pairs:
        if keyword not in _DEVICE_SETTINGS:
            continue
        if isinstance(value, (cst.List, cst.Tuple)):
            settings[keyword] = ("list", len(value.elements))
        elif isinstance(value, cst.Integer):
            settings[keyword] = int(value.value, 0)
        elif isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) and isinstance(value.expression, cst.Integer):
            settings[keyword] = -int(value.expression.value, 0)
        elif isinstance(value, cst.Attribute) and option is not None:
            settings[keyword] = _option_setting(option(value.attr.value))
        else:
            settings[keyword] = model.string_value(value)
    return settings


def _option_setting(value: object) -> object:
    """An option's documented value as a device setting: a list of devices `("list", n)`, a
    count or a text; None where not shown."""
    if isinstance(value, tuple):
        return ("list", len(value))
    return value if isinstance(value, (int, str)) else None


# -- questions only this rule asks of the program model -------------------------------------

MAX_IMPORTERS = 20  # modules read for monitors: importers of the module, and theirs


def importers(program, module: str) -> list[str]:
    """The modules that import `module`, and those that import them (a package's `__init__`
    re-exporting it, then the script), at most MAX_IMPORTERS."""
    found: list[str] = []
    for first in program.importers_of(module):
        for name in (first, *program.importers_of(first)):
            if name not in found and name != module:
                found.append(name)
    return found[:MAX_IMPORTERS]


def monitors_in(program, module: str) -> list[_Monitor]:
    """The literal monitors of the ModelCheckpoint and EarlyStopping calls of `module`."""
    found = []
    for node, qualified in _calls(program, module):
        if qualified in MONITORING_CALLBACKS:
            name = _monitor_literal(node, qualified)
            if name is not None:
                found.append(_Monitor(name, _callback_name(qualified), program.place(module, node.lineno)))
    return found


def several_devices_trainer(program, module: str, option=None) -> Place | None:
    """Where `module` builds a Lightning Trainer for several devices (`_several_devices`); a
    setting read from a command-line option is what `option` says every documented run gives it."""
    for node, qualified in _calls(program, module):
        if qualified in LIGHTNING_TRAINER and _several_devices(_trainer_settings_ast(node, option)):
            return program.place(module, node.lineno)
    return None


def _calls(program, module: str):
    tree = program.tree(module)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call):
            yield node, program.qualify(module, dotted(node.func) or "")


def _monitor_literal(call: ast.Call, qualified: str) -> str | None:
    given = next((k.value for k in call.keywords if k.arg == CALLBACK_MONITOR), None)
    if given is None and qualified in EARLY_STOPPING and call.args:
        given = call.args[0]
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else None


def _trainer_settings_ast(call: ast.Call, option=None) -> dict[str, object]:
    settings: dict[str, object] = {}
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg not in _DEVICE_SETTINGS:
            continue
        if isinstance(value, (ast.List, ast.Tuple)):
            settings[keyword.arg] = ("list", len(value.elts))
        elif isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
            settings[keyword.arg] = -value.operand.value if isinstance(value.operand.value, int) else None
        elif isinstance(value, ast.Attribute) and option is not None:
            settings[keyword.arg] = _option_setting(option(value.attr))
        else:
            settings[keyword.arg] = value.value if isinstance(value, ast.Constant) else None
    return settings


# -- LightningCLI runs: the config files a documented command passes -------------------------

# `--config path` (also `-c path`, `--config=path`): LightningCLI reads each file given, in order,
# a later one overriding what an earlier one set.
_CLI_CONFIG = re.compile(r"(?<![\w-])(?:--config|-c)(?:=|\s+)['\"]?([^\s'\";|&]+)")
# Options that override, on the command line, what the files say of the model, trainer or callbacks.
_CLI_OVERRIDE = re.compile(r"(?<![\w-])--(?:model|trainer)\b")


def cli_runs(project, classes: set[str]) -> list[tuple[str, dict[str, _Monitor], Link]]:
    """For each documented run of a project script that builds a LightningCLI, which passes
    config files that name one of `classes` of this module as the model (`model: class_path:`;
    or the CLI's own model class), set the trainer for several processes and give it
    ModelCheckpoint or EarlyStopping callbacks with a literal `monitor`: (that class, its
    monitors by name, the step "several ranks run the hooks" at the command). Lightning's CLI
    builds the Trainer, its callbacks and the model from the merged files (LightningCLI, Lightning
    2.x: classes "instantiated using a parsed configuration file and / or command line args").
    A run whose config cannot be read, or that overrides the model or trainer on the command
    line, shows nothing."""
    program = project.program
    found = []
    for script in program.modules():
        text = program.read(script)
        tree = program.tree(script, text) if text is not None and "LightningCLI" in text else None
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)] if tree is not None else []
        clis = [call for call in calls if program.qualify(script, dotted(call.func) or "") in LIGHTNING_CLI]
        if len(clis) != 1:
            continue  # no CLI, or several: which one a run builds is not shown
        view = project.seen_from(script)
        for command in view.runs(own=True):
            run = _cli_run(view, program, script, clis[0], command)
            if run is not None and run[0] == project.module and run[1] in classes:
                found.append(run[1:])
    return found


def _cli_run(view, program, script: str, cli: ast.Call, command) -> tuple[str, str, dict[str, _Monitor], Link] | None:
    """(module, class, monitors, runs) of one documented run of a LightningCLI script; None
    where the run passes no config, or one that is not the project's, or overrides settings."""
    paths = _CLI_CONFIG.findall(command.command)
    if not paths or _CLI_OVERRIDE.search(command.command):
        return None
    configs = [view.shipped_config(path, "json" if path.endswith(".json") else "yaml") for path in paths]
    if None in configs:
        return None
    merged: dict[str, object] = {}
    for config in configs:
        for key, keys in (("model", ("model", "class_path")), ("callbacks", ("trainer", "callbacks", "-")),
                          *((setting, ("trainer", setting)) for setting in _DEVICE_SETTINGS)):
            merged.update({key: (value[0], config) for value in [view.config_value(config, keys)] if value})
    model = merged.get("model", (_cli_model(program, script, cli), None))[0]
    located = program.split(model, script) if isinstance(model, str) else None
    settings = {key: _config_setting(merged[key][0]) for key in _DEVICE_SETTINGS if key in merged}
    if located is None or not _several_devices(settings) or "callbacks" not in merged:
        return None
    items, config = merged["callbacks"]
    monitors = {}
    for item in items if isinstance(items, list) else ():
        qualified, name = item.get("class_path"), configs_lookup(item, ("init_args", CALLBACK_MONITOR))
        if isinstance(qualified, str) and qualified in MONITORING_CALLBACKS and isinstance(name, str):
            monitors.setdefault(name, _Monitor(name, _callback_name(qualified), Place(config, _line_of_monitor(view, config, name))))
    shown = ", ".join(f"{key}: {value}" for key, value in settings.items() if value is not None)
    why = (f"this run passes `--config {paths[-1]}`, whose trainer runs on several devices ({shown}): every rank runs "
           "the module's hooks")
    return located[0], located[1], monitors, Link(StepKind.RUNS, why, command.place)


def _cli_model(program, script: str, cli: ast.Call) -> str | None:
    """The model class a LightningCLI call is given (`LightningCLI(Model)`), qualified; None without one."""
    given = cli.args[0] if cli.args else next((k.value for k in cli.keywords if k.arg == "model_class"), None)
    return program.qualify(script, dotted(given) or "") if given is not None else None


def _config_setting(value: object) -> object:
    """A trainer setting as a config file gives it: a strategy given as a class
    (`class_path: ...DDPStrategy`) by its class's name, lowercased."""
    if isinstance(value, dict):
        strategy = value.get("class_path")
        return strategy.rpartition(".")[2].lower() if isinstance(strategy, str) else None
    return value


def _line_of_monitor(view, config: str, name: str) -> int:
    """The line of the config file that sets `monitor: name` (1 where none is found)."""
    pattern = re.compile(rf"^\s*{CALLBACK_MONITOR}\s*:\s*['\"]?{re.escape(name)}['\"]?\s*(#.*)?$")
    lines = split_lines(view.document(config) or "")
    return next((index + 1 for index, line in enumerate(lines) if pattern.match(line)), 1)


# A Trainer's settings that say how many processes run: Lightning 2's `devices` and 1.x's `gpus`
# (a count, -1 or "-1" for all, a list or a "0,1" string of indices), `num_nodes`, `strategy`.
_DEVICE_SETTINGS = frozenset({"devices", "gpus", "num_nodes", "strategy"})
_MULTI_PROCESS_STRATEGIES = ("ddp", "fsdp", "deepspeed")
# Those that say how many: passed on a command line as `--gpus 4` or `--devices=8`.
_COUNT_SETTINGS = frozenset({"devices", "gpus", "num_nodes"})
_COUNT_OPTION = re.compile(r"(?<![\w-])--(devices|gpus|num_nodes)(?:=|\s+)['\"]?([\w,-]+)")


def _several_devices(settings: dict[str, object]) -> bool | None:
    """Whether a Trainer so set runs several processes: True, False (one device on one node),
    or None where its settings do not say (defaults, values read at run time)."""
    nodes = settings.get("num_nodes")
    if isinstance(nodes, int) and nodes > 1:
        return True
    count = _device_count(settings.get("devices", settings.get("gpus")))
    if count is not None:
        return count != 1
    strategy = settings.get("strategy")
    if isinstance(strategy, str) and strategy.startswith(_MULTI_PROCESS_STRATEGIES):
        return True
    return None


def _device_count(given: object) -> int | None:
    """How many devices a `devices`/`gpus` value names; -1 (all) counts as several."""
    if isinstance(given, tuple):
        return given[1]  # ("list", n)
    if isinstance(given, str):
        given = given.strip()
        if "," in given:
            return len([part for part in given.split(",") if part.strip()])
        given = int(given) if given.lstrip("-").isdigit() else None
    if isinstance(given, int) and not isinstance(given, bool):
        return 2 if given == -1 else given
    return None


