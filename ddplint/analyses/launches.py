"""Where a launcher that never names a DDP entry point runs code on every rank.

Code written for Accelerate, Fabric or Lightning calls no `init_process_group`, builds no
`DistributedDataParallel` and spawns nothing: the library does (ddplint.core.torch_api,
`LAUNCH_POINT_TEXT`). Its launch points, by the frame keys of the semantic model:

- a function (or module code) that builds an `Accelerator(...)`, itself or through a project
  function of another module that returns the one it builds (`accelerator =
  train_util.prepare_accelerator(args)`): `accelerate launch` runs it on every rank;
- a function that calls `fabric.launch()` on a Fabric built in this file for several devices,
  and the same-module function `fabric.launch(fn)` hands its ranks;
- the hooks of a LightningModule (or LightningDataModule) subclass, also through project base
  classes of any module (`class LoRAModule(ControlnetModule)`) (`training_step`, `on_*`, ...,
  and the methods they or other methods use on `self`): the Trainer runs them on every rank of the
  devices it is given at run time (a command-line flag or a config file as often as a literal),
  so a LightningModule is written to run on every rank; unless every Trainer this file builds is
  for one device (`Trainer(devices=1)`, `Trainer(accelerator="cpu")`), which is its own evidence.
  Not `prepare_data`: the Trainer runs it on one process per node (or on rank 0) and waits for it.
- a script that builds a Lightning Trainer for several devices with the DDP strategy by name
  (`strategy="ddp"`, `DDPStrategy(...)`; not "ddp_spawn" or "ddp_notebook"): Lightning's
  subprocess launcher runs the script again for every other device, so every rank runs it (a
  launch `point`, evidence that ranks run the file). Its frames are not in `every_rank`: the
  other ranks start at `fit` and re-run what comes before it only after rank 0 did;
- the event methods (`on_save`, `on_train_end`, ...) of a Hugging Face TrainerCallback subclass,
  and the saving methods a Trainer subclass overrides (`save_model`, `_save`, `_save_checkpoint`):
  the Trainer fires them on every process it runs in (`callback_hooks`), once it is handed the
  callback (a class whose name no code of a training project uses is never registered); so do the
  event methods (`eval_end`, `epoch_end`, `fit_end`, ...) of a MosaicML Composer Callback subclass,
  which Composer's Trainer runs on every rank. The Trainer starts no
  processes, so these are not launch points: a rule counts them where the file shows that ranks
  run it (the `composer` launcher runs a script that imports it, say).

A Fabric or Trainer is for one device when `devices` is 1, "1" or a list of one device (also
through a module constant), or is left out on the CPU, and `num_nodes` is left out or 1; any
other value, a variable or "auto" may give several. A LightningCLI builds its Trainer from the
literal `trainer_defaults={...}` it is given, judged the same way (without one it may give several). Rank-0 regions inside them (`if
fabric.is_global_zero:`, `@rank_zero_only`, `if accelerator.is_main_process:`) are
ddplint.analyses.ranks' to find; `guard` says how the launcher's own code writes one.
"""

from __future__ import annotations

import libcst as cst

from ddplint.semantic.edits import argument_for
from ddplint.semantic.model import Analysis, SemanticModel, dotted_name
from ddplint.core.torch_api import (
    ACCELERATOR,
    API,
    COMPOSER_CALLBACK,
    COMPOSER_CALLBACK_EVENTS,
    COMPOSER_DIST,
    COMPOSER_GLOBAL_RANK,
    FABRIC,
    FABRIC_LAUNCH,
    GLOBAL_ZERO,
    HF_TRAINER,
    HF_TRAINER_EVERY_PROCESS,
    HF_TRAINER_SAVE,
    LIGHTNING_CLI,
    LIGHTNING_DATA_MODULE,
    lightning_hook,
    LIGHTNING_MODULE,
    LIGHTNING_RANK_ZERO_HOOKS,
    LIGHTNING_TRAINER,
    MAIN_PROCESS,
    RANK_ZERO_ONLY,
    TRAINER_CALLBACK,
    TRAINER_CALLBACK_EVENT,
    WORLD_PROCESS_ZERO,
)


class Launches(Analysis):
    """Read `every_rank` (frame keys), `any`, `point`, `guard` and `built_at` after the walk (in a
    rule's leave_Module)."""

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self._launched: set[str | None] = set()
        self._fabrics: dict[str, bool] = {}  # name bound to a Fabric(...) -> whether for several devices
        self._lightning_classes: set[str] = set()
        self._lightning_kinds: dict[str, str] = {}  # a Lightning class of this file -> "LightningModule", ...
        self._hooks: dict[str, tuple[str, str]] = {}  # a Lightning class's method (frame key) -> (class, name)
        self._used_on_self: set[tuple[str, str]] = set()  # (class, name) of `self.<name>` in that class
        self._trainers: list[bool] = []  # per Trainer(...) built here: whether for several devices
        self._reruns = False  # a Trainer here runs the script again on every device (its DDP strategy)
        self._guards: dict[str | None, str] = {}  # launch point -> its launcher's rank-0 test, in order
        self._points: list[tuple[str, cst.CSTNode]] = []  # what each launch point is, and where
        # A call that returns an Accelerator another module builds (by id) -> where it is built.
        self.built_at: dict[int, object] = {}  # a Place of the program model
        self._callback_classes: set[str] = set()
        self._trainer_classes: set[str] = set()  # subclasses of Hugging Face's Trainer
        self._composer_callbacks: set[str] = set()  # subclasses of Composer's Callback
        # The event methods of TrainerCallback (and Composer Callback) subclasses (frame keys) ->
        # their `def` names, and which Trainer fires each.
        self.callback_hooks: dict[str, cst.Name] = {}
        self.fired_by: dict[str, str] = {}
        self._composer_dist: str | None = None  # the name this module binds Composer's dist module to

    @property
    def every_rank(self) -> set[str | None]:
        """The frames a launch point runs on every rank."""
        if self._trainers and not any(self._trainers):
            return self._launched
        return self._launched | {key for key, (cls, name) in self._hooks.items() if lightning_hook(name) or (cls, name) in self._used_on_self}

    @property
    def any(self) -> bool:
        return bool(self.every_rank) or self._reruns

    @property
    def point(self) -> tuple[str, cst.CSTNode] | None:
        """What the first launch point is, and where, when there is one."""
        return self._points[0] if self.any and self._points else None

    def guard(self, key: str | None, elsewhere: bool) -> str | None:
        """How the launcher of frame `key` runs code on rank 0 alone (`if accelerator.is_main_process:`,
        `if fabric.is_global_zero:`, `if self.trainer.is_global_zero: or @rank_zero_only`): the
        frame's own launch point's, or else, where `elsewhere`, the first launch point's of the
        same class (for a method; of the functions and module code for a function), or of the
        file; None where neither is known."""
        if key in self._guards or not elsewhere:
            return self._guards.get(key)
        owner = (key or "").rpartition(".")[0]
        nearest = sorted(self._guards.items(), key=lambda item: (item[0] or "").rpartition(".")[0] != owner)
        return next((guard for _, guard in nearest), None)

    @property
    def file_guard(self) -> str | None:
        """The rank-0 test of the distributed module the file imports where it is not
        torch.distributed: Composer's (`from composer.utils import dist`, which has no
        `get_rank`), `if dist.get_global_rank() == 0:`; None for any other file."""
        return f"if {self._composer_dist}.{COMPOSER_GLOBAL_RANK}() == 0:" if self._composer_dist else None

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if self.model.frame.function is None and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(bound, cst.Name) and self.model.qualified(bound) == COMPOSER_DIST:
                    self._composer_dist = bound.value

    def _one(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name) and self.model.constant(expr.value) is not None:
            expr = self.model.constant(expr.value)  # type: ignore[assignment]
        if isinstance(expr, (cst.List, cst.Tuple)):
            return len(expr.elements) == 1
        if isinstance(expr, cst.Integer):
            return expr.value == "1"
        return self.model.string_value(expr) == "1"

    def _several_devices(self, call: cst.Call, target: API) -> bool:
        settings = {name: found.value for name in ("num_nodes", "devices", "accelerator") if (found := argument_for(call, target, name)) is not None}
        return self._several(settings)

    def _several(self, settings: dict[str, cst.BaseExpression]) -> bool:
        """Whether a Trainer or Fabric with these arguments may start several processes."""
        nodes = settings.get("num_nodes")
        if nodes is not None and not self._one(nodes):
            return True
        devices = settings.get("devices")
        if devices is not None:
            return not self._one(devices)
        accelerator = settings.get("accelerator")
        return accelerator is None or self.model.string_value(accelerator) != "cpu"

    def _reruns_script(self, call: cst.Call) -> bool:
        """A Trainer given the DDP strategy by name (`strategy="ddp"`, not "ddp_spawn" or
        "ddp_notebook", which start only the fit) or as `DDPStrategy(...)`: Lightning's
        subprocess launcher starts the script anew for every other device."""
        strategy = argument_for(call, LIGHTNING_TRAINER, "strategy")
        if strategy is None:
            return False
        value = strategy.value
        if isinstance(value, cst.Call):
            return (dotted_name(value.func) or "").rpartition(".")[2] == "DDPStrategy" and not any(
                arg.keyword is not None and arg.keyword.value == "start_method" for arg in value.args
            )
        name = self.model.string_value(value)
        return name is not None and name.startswith("ddp") and not name.startswith(("ddp_spawn", "ddp_notebook", "ddp_fork"))

    def _cli_defaults(self, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
        """The Trainer arguments a LightningCLI's literal `trainer_defaults={...}` gives; None
        where they are not written out here."""
        defaults = argument_for(call, LIGHTNING_CLI, "trainer_defaults")
        if defaults is None or not isinstance(defaults.value, cst.Dict):
            return None
        settings = {}
        for element in defaults.value.elements:
            if not isinstance(element, cst.DictElement):
                return None  # `**base`: what it holds is not written here
            key = self.model.string_value(element.key)
            if key is not None:
                settings[key] = element.value
        return settings

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for kind, target in (("LightningModule", LIGHTNING_MODULE), ("LightningDataModule", LIGHTNING_DATA_MODULE)):
            if any(self._derives(base.value, target, kind) for base in node.bases):
                self._lightning_classes.add(node.name.value)
                self._lightning_kinds[node.name.value] = kind
                self._points.append((f"defines a {kind}, whose hooks the Trainer runs on every rank", node.name))
        if any(self.model.qualified(base.value) in TRAINER_CALLBACK for base in node.bases) and not self._never_registered(node):
            self._callback_classes.add(node.name.value)
        if any(self.model.qualified(base.value) in HF_TRAINER for base in node.bases):
            self._trainer_classes.add(node.name.value)
        if any(self.model.qualified(base.value) in COMPOSER_CALLBACK for base in node.bases) and not self._never_registered(node):
            self._composer_callbacks.add(node.name.value)

    def _derives(self, base: cst.BaseExpression, target: API, kind: str) -> bool:
        """Whether a class with this base is a `target` (a LightningModule): the base is one, a
        class of this file that is one (`class LoRAModule(ControlnetModule)`), or a project
        class of another module derived from one."""
        if self.model.qualified(base) in target:
            return True
        name = dotted_name(base)
        if name is None:
            return False
        if self._lightning_kinds.get(name) == kind:
            return True
        view = self.model.project
        return view is not None and view.program.derives_from(view.module, name, target)

    def _never_registered(self, node: cst.ClassDef) -> bool:
        """A Trainer fires only the callbacks it is handed (`callbacks=[SaveCallback()]`,
        `trainer.add_callback(SaveCallback)`): one whose name no code of the project uses never runs."""
        view = self.model.project
        return view is not None and view.never_named(node.name.value)

    def _saved_by_project(self) -> bool:
        """Whether the project calls a Trainer's `_save` itself where every rank gets."""
        view = self.model.project
        return view is not None and view.calls_on_every_rank(HF_TRAINER_SAVE)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frame = self.model.frame
        if (
            frame.method is frame and frame.self_class is not None and frame.self_class.name.value in self._lightning_classes
            and node.name.value not in LIGHTNING_RANK_ZERO_HOOKS
        ):
            self._hooks[frame.key] = (frame.self_class.name.value, node.name.value)  # type: ignore[index]
            self._guards[frame.key] = f"if {frame.self_name or 'self'}.trainer.{GLOBAL_ZERO}: or @{RANK_ZERO_ONLY}"
        elif (
            frame.method is frame and frame.self_class is not None and frame.self_class.name.value in self._callback_classes
            and node.name.value.startswith(TRAINER_CALLBACK_EVENT)
        ):
            self.callback_hooks[frame.key] = node.name  # type: ignore[index]
            self.fired_by[frame.key] = "the Hugging Face Trainer"  # type: ignore[index]
            # on_save(self, args, state, control, **kwargs): the TrainerState is the third parameter
            positional = [param.name.value for param in node.params.params]
            state = "state" if "state" in positional else positional[2] if len(positional) > 2 else "state"
            self._guards[frame.key] = f"if {state}.{WORLD_PROCESS_ZERO}:"
        elif (
            frame.method is frame and frame.self_class is not None and frame.self_class.name.value in self._trainer_classes
            and (node.name.value in HF_TRAINER_EVERY_PROCESS or node.name.value == HF_TRAINER_SAVE and self._saved_by_project())
        ):
            self.callback_hooks[frame.key] = node.name  # type: ignore[index]
            self.fired_by[frame.key] = "the Hugging Face Trainer"  # type: ignore[index]
            self._guards[frame.key] = f"if {frame.self_name or 'self'}.args.should_save:"
        elif (
            frame.method is frame and frame.self_class is not None and frame.self_class.name.value in self._composer_callbacks
            and node.name.value in COMPOSER_CALLBACK_EVENTS
        ):
            self.callback_hooks[frame.key] = node.name  # type: ignore[index]
            self.fired_by[frame.key] = "the Composer Trainer"  # type: ignore[index]
            self._guards[frame.key] = f"if {self._composer_dist or 'dist'}.{COMPOSER_GLOBAL_RANK}() == 0:"

    def visit_Attribute(self, node: cst.Attribute) -> None:
        frame = self.model.frame
        if (
            frame.self_class is not None and frame.self_class.name.value in self._lightning_classes
            and isinstance(node.value, cst.Name) and node.value.value == frame.self_name
        ):
            self._used_on_self.add((frame.self_class.name.value, node.attr.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if not isinstance(value, cst.Call):
            return
        qualified = self.model.qualified(value.func)
        names = [name for target in node.targets if (name := dotted_name(target.target)) is not None]
        if qualified in FABRIC:
            several = self._several_devices(value, FABRIC)
            self._fabrics.update((name, several) for name in names)
        elif qualified in ACCELERATOR and names:  # `self.accelerator = Accelerator()`
            self._guards.setdefault(self.model.frame.key, f"if {names[0]}.{MAIN_PROCESS}:")
        elif qualified is not None and names and self.model.project is not None:
            self._built_elsewhere(value, qualified, names[0])

    def _built_elsewhere(self, call: cst.Call, qualified: str, name: str) -> None:
        """`accelerator = train_util.prepare_accelerator(args)`: a project function of another
        module builds the Accelerator it returns, so this frame is a launch point as one that
        builds it here is."""
        view = self.model.project
        made = view.program.made_by(view.module, qualified, ACCELERATOR)
        if made is None:
            return
        self._launched.add(self.model.frame.key)
        self.built_at.setdefault(id(call), made)
        called = dotted_name(call.func)
        self._points.append((f"builds an Accelerator through {called}() ({made}): `accelerate launch` runs it on every rank", call))
        self._guards.setdefault(self.model.frame.key, f"if {name}.{MAIN_PROCESS}:")

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        if qualified in ACCELERATOR:
            self._launched.add(self.model.frame.key)
            self._points.append(("builds an Accelerator: `accelerate launch` runs it on every rank", node))
            self._guards.setdefault(self.model.frame.key, f"if accelerator.{MAIN_PROCESS}:")
        elif qualified in LIGHTNING_TRAINER:
            several = self._several_devices(node, LIGHTNING_TRAINER)
            self._trainers.append(several)
            if several and self._reruns_script(node) and not self._reruns:
                # Not a frame every rank runs alongside the others: the other ranks start at
                # `fit`, and re-run what came before it after rank 0 did (a download is done once).
                self._reruns = True
                self._points.append(("builds a Lightning Trainer whose DDP strategy runs this script again on every device", node))
        elif qualified in LIGHTNING_CLI:
            settings = self._cli_defaults(node)
            self._trainers.append(True if settings is None else self._several(settings))
        elif (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == FABRIC_LAUNCH
            and self._fabrics.get(dotted_name(node.func.value) or "")
        ):
            fabric = dotted_name(node.func.value)
            launched = [self.model.frame.key]
            if node.args and isinstance(node.args[0].value, cst.Name):  # `fabric.launch(main)`
                launched.append(node.args[0].value.value)
            for key in launched:
                self._launched.add(key)
                self._guards.setdefault(key, f"if {fabric}.{GLOBAL_ZERO}:")
            self._points.append((f"launches {fabric}, a Fabric for several devices", node))
