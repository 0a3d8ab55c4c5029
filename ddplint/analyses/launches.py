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
  which Composer's Trainer runs on every rank, and the `on_*` hooks of a Lightning Callback
  subclass (also through project base classes), which Lightning's Trainer calls on every rank
  (`trainer.is_global_zero` is their rank-0 test). These Trainers start no
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
    LIGHTNING_CALLBACK,
    LIGHTNING_CALLBACK_HOOK,
    LIGHTNING_CLI,
    LIGHTNING_DATA_MODULE,
    LIGHTNING_DDP_STRATEGY,
    lightning_hook,
    LIGHTNING_MODULE,
    LIGHTNING_RANK_ZERO_HOOKS,
    LIGHTNING_RUNS,
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
        self._lightning_callbacks: set[str] = set()  # subclasses of Lightning's Callback
        # The event methods of TrainerCallback (and Composer Callback) subclasses (frame keys) ->
        # their `def` names, and which Trainer fires each.
        self.callback_hooks: dict[str, cst.Name] = {}
        self.fired_by: dict[str, str] = {}
        self._composer_dist: str | None = None  # the name this module binds Composer's dist module to
        self._classes: dict[str, cst.ClassDef] = {}  # the classes of this file, by name
        self._functions: dict[str, cst.FunctionDef] = {}  # its module-level functions, by name
        # The open statements, outermost first, each as (id of the block it is in, its id), and
        # the open blocks; per frame, the names bound to a Trainer that runs the script again on
        # every device, and the statements open at each call that starts its run.
        self._statements: list[tuple[int, int]] = []
        self._blocks: list[int] = []
        self._rerunning: dict[str | None, set[str]] = {}
        self._started: dict[str | None, list[tuple[tuple[int, int], ...]]] = {}
        self._trainer_names: dict[int, list[str]] = {}  # a Trainer(...) call (by id) -> the names bound to it

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
        if target is LIGHTNING_TRAINER:
            settings = {**self._unpacked_settings(call), **settings}
        return self._several(settings)

    def trainer_arguments(self, call: cst.Call) -> dict[str, cst.BaseExpression]:
        """The keyword arguments of a Trainer call, with those it passes through `**kwargs`
        (`_unpacked_settings`), a keyword written out winning; a strategy given as Lightning's
        DDPStrategy or a project subclass of it (`strategy=ApexDDPStrategy(...)`) as "ddp"."""
        given = {**self._unpacked_settings(call), **{arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}}
        strategy = given.get("strategy")
        if isinstance(strategy, cst.Call) and self._reruns_script(call):
            given["strategy"] = cst.SimpleString('"ddp"')
        return given

    def _unpacked_settings(self, call: cst.Call) -> dict[str, cst.BaseExpression]:
        """The arguments a Trainer call passes through `**kwargs`: the keys of the dict the name
        is bound to here (`kwargs = dict(strategy=...)`, `{"devices": 4}`), or that a function
        of this file, or a method of a class of this file called on an instance bound once,
        returns, built in its body (`trainer_kwargs = pl_module.set_trainer_kwargs(devices=args.gpus)`,
        whose `ret = dict(strategy=ApexDDPStrategy(...), ...)` is returned), with the keywords
        the call gives it where it merges its `**kwargs` in (`ret.update(kwargs)`)."""
        settings: dict[str, cst.BaseExpression] = {}
        for arg in call.args:
            if arg.star == "**" and isinstance(arg.value, cst.Name):
                bound = self.model.constant(arg.value.value)
                if bound is not None:
                    settings.update(self._dict_settings(bound))
        return settings

    def _dict_settings(self, value: cst.BaseExpression) -> dict[str, cst.BaseExpression]:
        literal = _literal_dict(value, self.model.string_value)
        if literal is not None or not isinstance(value, cst.Call):
            return literal or {}
        function = self._returning_function(value.func)
        if function is None:
            return {}
        returned = _returned_dict(function, self.model.string_value)
        if returned is None:
            return {}
        settings, merges = returned
        if merges:  # `ret.update(kwargs)`: what the call gives by keyword
            settings.update({arg.keyword.value: arg.value for arg in value.args if arg.keyword is not None})
        return settings

    def _returning_function(self, func: cst.BaseExpression) -> cst.FunctionDef | None:
        """The function of this file a call of `func` runs: a module-level one by name, or the
        method of a class of this file on an instance bound once to its construction."""
        if isinstance(func, cst.Name):
            return self._functions.get(func.value)
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        made = self.model.constant(func.value.value)
        cls = self._classes.get(made.func.value) if isinstance(made, cst.Call) and isinstance(made.func, cst.Name) else None
        body = cls.body.body if cls is not None else ()
        return next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value), None)

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
        value = strategy.value if strategy is not None else self._unpacked_settings(call).get("strategy")
        if value is None:
            return False
        if isinstance(value, cst.Call):
            return self._ddp_strategy(value.func) and not any(
                arg.keyword is not None and arg.keyword.value == "start_method" for arg in value.args
            )
        name = self.model.string_value(value)
        return name is not None and name.startswith("ddp") and not name.startswith(("ddp_spawn", "ddp_notebook", "ddp_fork"))

    def _ddp_strategy(self, func: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether `func` names Lightning's DDPStrategy, or a project subclass of it (Earthformer's
        `ApexDDPStrategy(DDPStrategy)` in another module)."""
        name = dotted_name(func) or ""
        if name.rpartition(".")[2] == "DDPStrategy" or self.model.qualified(func) in LIGHTNING_DDP_STRATEGY:
            return True
        cls = self._classes.get(name)
        if cls is not None and depth < 8:
            return any(self._ddp_strategy(base.value, depth + 1) for base in cls.bases)
        view = self.model.project
        return bool(name) and view is not None and view.program.derives_from(view.module, name, LIGHTNING_DDP_STRATEGY)

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
        self._classes.setdefault(node.name.value, node)
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
        if any(self._derives(base.value, LIGHTNING_CALLBACK, "Callback") for base in node.bases) and not self._never_registered(node):
            self._lightning_callbacks.add(node.name.value)
            self._lightning_kinds[node.name.value] = "Callback"

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
        if frame.parent is not None and frame.parent.parent is None:
            self._functions.setdefault(node.name.value, node)
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
            # on_save(self, args, state, control, **kwargs): the TrainerState is the third parameter
            self._fired(frame.key, node, "the Hugging Face Trainer", f"if {_parameter(node, 'state', 2)}.{WORLD_PROCESS_ZERO}:")
        elif (
            frame.method is frame and frame.self_class is not None and frame.self_class.name.value in self._trainer_classes
            and (node.name.value in HF_TRAINER_EVERY_PROCESS or node.name.value == HF_TRAINER_SAVE and self._saved_by_project())
        ):
            self._fired(frame.key, node, "the Hugging Face Trainer", f"if {frame.self_name or 'self'}.args.should_save:")
        elif (
            frame.method is frame and frame.self_class is not None and frame.self_class.name.value in self._composer_callbacks
            and node.name.value in COMPOSER_CALLBACK_EVENTS
        ):
            self._fired(frame.key, node, "the Composer Trainer", f"if {self._composer_dist or 'dist'}.{COMPOSER_GLOBAL_RANK}() == 0:")
        elif (
            frame.method is frame and frame.self_class is not None and frame.self_class.name.value in self._lightning_callbacks
            and node.name.value.startswith(LIGHTNING_CALLBACK_HOOK)
        ):
            # on_train_epoch_end(self, trainer, pl_module): the Trainer is the second parameter
            self._fired(frame.key, node, "the Lightning Trainer", f"if {_parameter(node, 'trainer', 1)}.{GLOBAL_ZERO}:")

    def _fired(self, key: str | None, node: cst.FunctionDef, by: str, guard: str) -> None:
        """A callback's event method `node` (frame `key`) that the Trainer `by` fires on every
        process it runs in, and how its code tests for rank 0."""
        self.callback_hooks[key] = node.name  # type: ignore[index]
        self.fired_by[key] = by  # type: ignore[index]
        self._guards[key] = guard

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
        if qualified in LIGHTNING_TRAINER:
            self._trainer_names[id(value)] = names
        elif qualified in FABRIC:
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

    @property
    def after_start(self) -> bool:
        """Whether the walk is, in its frame, past the call that starts the run of a Trainer that
        runs the script again on every device (`trainer.fit(...)`, also `validate`, `test`,
        `predict`), on the same way through the `if`s: every rank runs what follows, together
        (Earthformer's `torch.save` of the best checkpoint after `trainer.fit`)."""
        return any(_later(started, self._statements) for started in self._started.get(self.model.frame.key, ()))

    def visit_Module(self, node: cst.Module) -> None:
        self._blocks.append(id(node))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(id(node))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def _enter_statement(self, node: cst.CSTNode) -> None:
        self._statements.append((self._blocks[-1] if self._blocks else 0, id(node)))

    def _leave_statement(self, original_node: cst.CSTNode) -> None:
        self._statements.pop()

    visit_SimpleStatementLine = visit_If = visit_For = visit_While = visit_With = visit_Try = _enter_statement
    leave_SimpleStatementLine = leave_If = leave_For = leave_While = leave_With = leave_Try = _leave_statement

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute) and func.attr.value in LIGHTNING_RUNS
            and dotted_name(func.value) in self._rerunning.get(self.model.frame.key, ())
        ):
            self._started.setdefault(self.model.frame.key, []).append(tuple(self._statements))
            self._guards.setdefault(self.model.frame.key, f"if {dotted_name(func.value)}.{GLOBAL_ZERO}:")
        qualified = self.model.qualified(node.func)
        if qualified in ACCELERATOR:
            self._launched.add(self.model.frame.key)
            self._points.append(("builds an Accelerator: `accelerate launch` runs it on every rank", node))
            self._guards.setdefault(self.model.frame.key, f"if accelerator.{MAIN_PROCESS}:")
        elif qualified in LIGHTNING_TRAINER:
            several = self._several_devices(node, LIGHTNING_TRAINER)
            self._trainers.append(several)
            if several and self._reruns_script(node):
                # Not a frame every rank runs alongside the others: the other ranks start at
                # `fit`, and re-run what came before it after rank 0 did (a download is done once);
                # what follows the `fit` every rank runs together.
                self._rerunning.setdefault(self.model.frame.key, set()).update(self._trainer_names.get(id(node), ()))
                if not self._reruns:
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


def _parameter(function: cst.FunctionDef, name: str, index: int) -> str:
    """The parameter `name` of a callback's event method, else the one at position `index`
    (counting `self`), else `name`."""
    positional = [param.name.value for param in function.params.params]
    return name if name in positional else positional[index] if len(positional) > index else name


def _later(before: tuple[tuple[int, int], ...], now: list[tuple[int, int]]) -> bool:
    """Whether the statements open now follow those open `before` on one way through the code:
    where they first differ, a later statement of the same block."""
    for earlier, current in zip(before, now):
        if earlier != current:
            return earlier[0] == current[0]
    return False


def _literal_dict(value: cst.BaseExpression, string_value) -> dict[str, cst.BaseExpression] | None:
    """The keys and values of `dict(k=v, ...)` or `{"k": v, ...}` (those written out); None for
    anything else."""
    if isinstance(value, cst.Dict):
        found = {}
        for element in value.elements:
            key = string_value(element.key) if isinstance(element, cst.DictElement) else None
            if key is not None:
                found[key] = element.value  # type: ignore[union-attr]
        return found
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
        return {arg.keyword.value: arg.value for arg in value.args if arg.keyword is not None}
    return None


def _returned_dict(function: cst.FunctionDef, string_value) -> tuple[dict[str, cst.BaseExpression], bool] | None:
    """What a function returns where it is a dict written out in its body: returned as is, or
    bound once to the name it returns (`ret = dict(...)`, `return ret`); and whether it merges
    its `**kwargs` into it (`ret.update(kwargs)`, also `dict(..., **kwargs)`). None otherwise."""
    star = function.params.star_kwarg.name.value if function.params.star_kwarg is not None else None
    returns: list[cst.BaseExpression] = []
    bound: dict[str, list[cst.BaseExpression]] = {}
    merged: set[str] = set()
    for statement in _simple_statements(function.body):
        for small in statement.body:
            if isinstance(small, cst.Return) and small.value is not None:
                returns.append(small.value)
            elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                bound.setdefault(small.targets[0].target.value, []).append(small.value)
            elif (
                isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute)
                and small.value.func.attr.value == "update" and isinstance(small.value.func.value, cst.Name)
                and any(isinstance(arg.value, cst.Name) and arg.value.value == star for arg in small.value.args)
            ):
                merged.add(small.value.func.value.value)
    if len(returns) != 1:
        return None
    value, name = returns[0], None
    if isinstance(value, cst.Name) and len(bound.get(value.value, ())) == 1:
        name, value = value.value, bound[value.value][0]
    found = _literal_dict(value, string_value)
    if found is None:
        return None
    spread = isinstance(value, cst.Call) and any(arg.star == "**" and isinstance(arg.value, cst.Name) and arg.value.value == star for arg in value.args)
    return found, star is not None and (name in merged or spread)


def _simple_statements(block: cst.BaseSuite):
    """The simple statement lines of a function body, not inside nested functions or classes."""
    for statement in getattr(block, "body", ()):
        if isinstance(statement, cst.SimpleStatementLine):
            yield statement
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        elif isinstance(statement, cst.BaseCompoundStatement):
            yield from _simple_statements(statement.body)
            orelse = getattr(statement, "orelse", None)
            if orelse is not None:
                yield from _simple_statements(orelse.body if isinstance(orelse, cst.Else) else cst.IndentedBlock(body=[orelse]))
