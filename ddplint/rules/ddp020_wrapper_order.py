from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.triggers import CallTrigger
from ddplint.model.placement import device_wraps
from ddplint.model.records import Place
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.model import dotted_name
from ddplint.semantic.edits import argument_for, passed_arguments
from ddplint.core.torch_api import (
    CONVERT_SYNC_BATCHNORM, DDP, TORCH, TORCH_DEVICE, TORCH_NN, TORCH_NN_PARALLEL, TORCH_NN_UTILS,
)

# Where a model built on the CPU comes from: constructors that do not move it anywhere.
CPU_FACTORIES = (TORCH_NN.prefix, "torchvision.models.", "timm.create_model", "timm.models.")
MOVES = frozenset({"to", "cuda", "to_empty", "xpu"})


@dataclass
class _Wrap:
    call: cst.Call
    inner: str  # the unwrapped model's name
    wrapper: str | None = None  # the name the DDP model is bound to
    move: cst.Call | None = None
    move_statement: cst.SimpleStatementLine | None = None
    built_at: Place | None = None  # where a helper of another function built the CPU model
    wrapped_at: Place | None = None  # for a call of a helper that wraps: where the helper calls DDP


def _constructor(qualified: str) -> bool:
    """Whether calling `qualified` builds a model on the CPU."""
    return qualified.startswith(CPU_FACTORIES) and not (qualified in TORCH_NN_PARALLEL or qualified in TORCH_NN_UTILS)


class WrapperOrder(Rule):
    """
    DistributedDataParallel's documented set-up order is: convert BatchNorm layers with
    `SyncBatchNorm.convert_sync_batchnorm`, move the model to its device, wrap it in DDP, and
    compile the wrapper last. The step of that order that breaks a program is the device move:
    `DDP(model, device_ids=[local_rank])` while the model is still on the CPU is refused at
    construction, before the later `model.to(device)` can run:

        ValueError: DistributedDataParallel device_ids and output_device arguments only work
        with single-device/multiple-device GPU modules or CPU modules, but got device_ids [0],
        output_device None, and module parameters {device(type='cpu')}.

    (ddplint/harness/scenarios/ddp020/experiment_wrapper_order.py shows exactly this message on
    CPU with gloo: the check runs on the model's device, so a GPU machine raises it the same
    way.)

    Fires when `DDP(model, device_ids=...)` wraps a `model` that was built in the same function
    by a constructor that leaves it on the CPU (a `torch.nn` layer, a `torchvision.models` or
    `timm` factory, also picked by name as in `models.__dict__[args.arch]()`, or a class of the
    project whose `__init__` places nothing on CUDA; the model may be a `self` attribute, as in
    a Trainer's `__init__`), was not moved or handed to another function
    before the wrap, and is moved (`.to(...)`, `.cuda()`) only after it. Through the program
    model also a model returned by a project helper as such a constructor left it
    (`model = build_model(cfg)`, in this file or another), and a call of a project helper that
    hands the CPU model, untouched, to `DDP(..., device_ids=...)` before the caller moves it
    (`model = wrap(model, rank)`; no fix there). Not flagged: models moved before the wrap,
    models that come from elsewhere (a parameter, a helper that moves, initialises or hands
    them on before returning them, one the linter cannot read), wraps without `device_ids`.

    Not flagged, after measuring: `SyncBatchNorm.convert_sync_batchnorm(ddp_model)` after the
    wrap. The conversion hands the very same Parameter and buffer objects to the new layers, so
    DDP's reducer hooks and buffer broadcast still cover them (measured on torch 2.13: all
    parameters and buffers of the converted layers are the ones DDP registered); it only skips
    DDP's construction-time check that SyncBatchNorm runs on GPUs. Nor `DDP(torch.compile(model))`:
    DDP marks itself active around its call of the inner module, and TorchDynamo's DDPOptimizer
    splits that compiled graph at the bucket boundaries too (measured: 6 graphs for six 1 MiB
    layers with 1 MiB buckets), so the harm the order is documented for could not be shown.

    Fix (unsafe): move the model before the wrap, `DDP(model.to(device), device_ids=...)`, and
    drop the later move (only when it is a statement of its own); unsafe because the device
    expression is evaluated earlier than before.
    """

    code = "DDP020"
    needs_ranks = True
    name = "wrapper-order"
    frameworks = (Framework.DDP, Framework.TIMM)
    message = (
        "DDP(model, device_ids=...) before the model is moved to its device: DDP refuses a CPU "
        "model with device_ids (ValueError at construction); move the model first, then wrap"
    )
    fix = Applicability.UNSAFE
    # `also`: the device_ids it checks, and the move that comes too late.
    trigger = CallTrigger(DDP, also=("device_ids", (".to(", ".cuda(")))
    # a helper of another module makes the wrap: `model = wrap(model, rank)` names neither DDP nor device_ids
    opened_by = unscreened_by = frozenset((ProjectFact.CALLS_WRAP_HELPER,))

    flagged_examples = (
        Flagged(
            """
            import torch
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(local_rank):
                model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
                model = DDP(model, device_ids=[local_rank])
                        ^
                model.to(local_rank)
                train(model)
            """,
            fixed="""
            import torch
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(local_rank):
                model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
                model = DDP(model.to(local_rank), device_ids=[local_rank])
                train(model)
            """,
        ),
        Flagged(
            """
            import torch
            import torchvision
            from torch.nn.parallel import DistributedDataParallel

            def setup(args):
                net = torchvision.models.resnet50()
                net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
                ddp_net = DistributedDataParallel(net, device_ids=[args.gpu], output_device=args.gpu)
                          ^
                ddp_net = ddp_net.cuda(args.gpu)
                return ddp_net
            """,
            fixed="""
            import torch
            import torchvision
            from torch.nn.parallel import DistributedDataParallel

            def setup(args):
                net = torchvision.models.resnet50()
                net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
                ddp_net = DistributedDataParallel(net.cuda(args.gpu), device_ids=[args.gpu], output_device=args.gpu)
                return ddp_net
            """,
        ),
        Flagged(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)

            def build(rank):
                model = Net()
                ddp = DDP(model, device_ids=[rank])
                      ^
                print("moving", model.to(f"cuda:{rank}"))
                return ddp
            """
        ),
        Flagged(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            def build_model(width):
                model = nn.Sequential(nn.Linear(width, width), nn.ReLU())
                return model

            def main(local_rank):
                model = build_model(8)
                model = DDP(model, device_ids=[local_rank])
                        ^
                model.to(local_rank)
            """,
            fixed="""
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            def build_model(width):
                model = nn.Sequential(nn.Linear(width, width), nn.ReLU())
                return model

            def main(local_rank):
                model = build_model(8)
                model = DDP(model.to(local_rank), device_ids=[local_rank])
            """,
            messages=(
                "DDP(model, device_ids=...) before the model is moved to its device: DDP refuses a CPU model with "
                "device_ids (ValueError at construction); move the model first, then wrap (`model` is built on the "
                "CPU at example.py:5 and returned unmoved)",
            ),
        ),
        Flagged(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel

            def wrap(module, rank):
                return DistributedDataParallel(module, device_ids=[rank])

            def main(rank):
                model = nn.Linear(8, 2)
                model = wrap(model, rank)
                        ^
                model.cuda(rank)
            """,
            messages=(
                "DDP(model, device_ids=...) before the model is moved to its device: DDP refuses a CPU model "
                "with device_ids (ValueError at construction); move the model first, then wrap (this call hands "
                "`model` to DDP(..., device_ids=...) at example.py:5)"
            ),
        ),
        Flagged(
            # PyTorch's ImageNet example picks the torchvision model by name; a Trainer keeps it on `self`.
            """
            import torch
            import torchvision.models as models
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, args):
                    self.model = models.__dict__[args.arch]()
                    self.model = DDP(self.model, device_ids=[args.gpu])
                                 ^
                    self.model.cuda(args.gpu)
            """,
            fixed="""
            import torch
            import torchvision.models as models
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, args):
                    self.model = models.__dict__[args.arch]()
                    self.model = DDP(self.model.cuda(args.gpu), device_ids=[args.gpu])
            """,
        ),
    )
    clean_examples = (
        Clean(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel

            def build_model(width, rank):
                model = nn.Linear(width, width)
                return model.to(rank)

            def initialised(width):
                model = nn.Linear(width, width)
                nn.init.zeros_(model.bias)
                return model

            def wrap(module, rank):
                module.cuda(rank)
                return DistributedDataParallel(module, device_ids=[rank])

            def main(rank):
                model = build_model(8, rank)
                model = DistributedDataParallel(model, device_ids=[rank])
                model.to(rank)
                other = initialised(8)
                other = DistributedDataParallel(other, device_ids=[rank])
                other.to(rank)
                head = nn.Linear(8, 2)
                head = wrap(head, rank)
                head.cuda(rank)
            """
        ),
        Clean(
            """
            import torch
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(local_rank):
                model = nn.Linear(8, 2)
                model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
                model.to(local_rank)
                model = DDP(model, device_ids=[local_rank])
                model = torch.compile(model)
                model.to(torch.bfloat16)
            """
        ),
        Clean(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(model, local_rank, cfg):
                ddp = DDP(model, device_ids=[local_rank])
                ddp.to(local_rank)
                net = build_model(cfg)
                net = DDP(net, device_ids=[local_rank])
                net.cuda()
                cpu = nn.Linear(4, 4)
                cpu = DDP(cpu)
                cpu.to("cpu")
                other = nn.Linear(4, 4)
                initialize(other)
                other = DDP(other, device_ids=[local_rank])
                other.cuda()
            """
        ),
        Clean(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(local_rank):
                model = nn.Linear(8, 2).cuda(local_rank)
                model = DDP(model, device_ids=[local_rank])
                model.cuda(local_rank)
                head = nn.Linear(2, 2, device=f"cuda:{local_rank}")
                head = DDP(head, device_ids=[local_rank], output_device=local_rank)
                head.to(local_rank)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._cpu: dict[int, set[str]] = {}  # per function node: names of models still on the CPU
        self._wraps: dict[int, list[_Wrap]] = {}
        self._classes: set[str] = set()
        self._found: list[_Wrap] = []
        self._built: dict[tuple[int, str], Place] = {}  # (function, name) -> where a helper built it on the CPU

    def visit_Module(self, node: cst.Module) -> None:
        self._classes = {s.name.value for s in node.body if isinstance(s, cst.ClassDef)}

    def _key(self) -> int | None:
        function = self.model.function
        return id(function.node) if function is not None else None

    def _cpu_factory(self, value: cst.BaseExpression, cpu: set[str]) -> bool | Place:
        """True for a constructor that leaves the model on the CPU; for a project helper that
        returns such a model untouched, where it builds it; False otherwise."""
        if not isinstance(value, cst.Call):
            return False
        if any(arg.keyword is not None and arg.keyword.value in ("device", "device_map") for arg in value.args):
            return False
        func = value.func
        if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Attribute) and func.value.attr.value == "__dict__":
            # `models.__dict__[args.arch]()`: a torchvision or timm model picked by name (PyTorch's ImageNet example)
            table = self.model.qualified(func.value.value)
            return table is not None and _constructor(table + ".")
        qualified = self.model.qualified(func)
        if qualified is None and isinstance(func, cst.Name) and func.value in self._classes:
            return True
        if qualified in CONVERT_SYNC_BATCHNORM:
            return len(value.args) >= 1 and dotted_name(value.args[0].value) in cpu
        if qualified is not None and (_constructor(qualified) or qualified in TORCH):
            return _constructor(qualified)
        callee, project = dotted_name(value.func), self.model.project
        if callee is None or project is None:
            return False
        self_class = self.model.frame.self_class
        place = cpu_built(project.program, project.module, callee, self_class.name.value if self_class else None, _constructor)
        return True if place is HERE else place or False

    def visit_Assign(self, node: cst.Assign) -> None:
        key = self._key()
        if key is None:
            return
        cpu = self._cpu.setdefault(key, set())
        on_cpu = self._cpu_factory(node.value, cpu)
        wrap = self._wrap_of(node.value) if isinstance(node.value, cst.Call) else None
        for target in node.targets:
            name = dotted_name(target.target)
            if name is None:
                continue
            cpu.discard(name)
            self._built.pop((key, name), None)
            if on_cpu:
                cpu.add(name)
            if isinstance(on_cpu, Place):
                self._built[(key, name)] = on_cpu
            if wrap is not None:
                wrap.wrapper = name

    def leave_Assign(self, original_node: cst.Assign) -> None:
        key = self._key()
        names = {dotted_name(t.target) for t in original_node.targets} - {None}
        for pending in self._wraps.get(key, []) if key is not None else []:
            if pending.call is not original_node.value and pending.wrapper in names and pending.move is None:
                pending.wrapper = None  # rebound: a later move is of something else

    def _wrap_of(self, call: cst.Call) -> _Wrap | None:
        if self.model.qualified(call.func) not in DDP:
            return self._helper_wrap(call)
        key = self._key()
        device_ids = argument_for(call, DDP, "device_ids")
        module = argument_for(call, DDP, "module")
        if (
            key is None
            or device_ids is None
            or (isinstance(device_ids.value, cst.Name) and device_ids.value.value == "None")
            or module is None
            or dotted_name(module.value) not in self._cpu.get(key, set())
        ):
            return None
        for wrap in self._wraps.setdefault(key, []):
            if wrap.call is call:
                return wrap
        inner = dotted_name(module.value)
        wrap = _Wrap(call, inner, built_at=self._built.get((key, inner)))  # type: ignore[arg-type]
        self._wraps[key].append(wrap)
        return wrap

    def _helper_wrap(self, call: cst.Call) -> _Wrap | None:
        """A call of a project helper that wraps the CPU model it is handed in DDP with
        device_ids (`model = wrap(model, rank)`), found through the program model."""
        key, project, callee = self._key(), self.model.project, dotted_name(call.func)
        if key is None or project is None or callee is None:
            return None
        for wrap in self._wraps.get(key, []):
            if wrap.call is call:
                return wrap
        frame, self_class = self.model.frame, self.model.frame.self_class
        for position, value in passed_arguments(call):
            name = dotted_name(value)
            if name is not None and name in self._cpu.get(key, set()):
                where = handed_to_ddp(project.program, project.module, frame.key, self_class.name.value if self_class else None, callee, position)
                if where is not None:
                    wrap = _Wrap(call, name, built_at=self._built.get((key, name)), wrapped_at=where)
                    self._wraps.setdefault(key, []).append(wrap)
                    return wrap
        return None

    def visit_Call(self, node: cst.Call) -> None:
        key = self._key()
        if key is None:
            return
        cpu = self._cpu.get(key, set())
        if self.model.qualified(node.func) in DDP:
            self._wrap_of(node)
            return
        func = node.func
        name = dotted_name(func.value) if isinstance(func, cst.Attribute) and func.attr.value in MOVES else None
        if name is not None:
            if not self._device_move(node):
                return
            for wrap in self._wraps.get(key, []):
                if wrap.move is None and name in (wrap.inner, wrap.wrapper):
                    wrap.move = node
                    wrap.move_statement = self.model.statement
                    self._found.append(wrap)
            cpu.discard(name)
            return
        if self.model.qualified(func) in CONVERT_SYNC_BATCHNORM:
            return
        self._helper_wrap(node)
        for arg in node.args:  # handed to a helper, which may move it
            cpu.discard(dotted_name(arg.value))  # type: ignore[arg-type]

    def _device_move(self, call: cst.Call) -> bool:
        func = call.func
        if func.attr.value != "to":  # type: ignore[attr-defined]
            return True
        if not call.args or call.args[0].keyword is not None and call.args[0].keyword.value == "dtype":
            return False
        first = call.args[0].value
        text = self.model.string_value(first)
        if text is not None:
            return text.startswith(("cuda", "xpu", "npu", "hpu"))
        qualified = self.model.qualified(first)
        return not (qualified in TORCH and qualified not in TORCH_DEVICE)

    def leave_Module(self, original_node: cst.Module) -> None:
        for wrap in self._found:
            notes = []
            if wrap.wrapped_at is not None:
                notes.append(f"this call hands `{wrap.inner}` to DDP(..., device_ids=...) at {wrap.wrapped_at}")
            if wrap.built_at is not None:
                notes.append(f"`{wrap.inner}` is built on the CPU at {wrap.built_at} and returned unmoved")
            message = self.message + (f" ({'; '.join(notes)})" if notes else "")
            self.report(wrap.call, message, replace=self._fix(wrap) if wrap.wrapped_at is None else None)

    def _fix(self, wrap: _Wrap) -> dict | None:
        statement, move = wrap.move_statement, wrap.move
        if statement is None or move is None or len(statement.body) != 1:
            return None
        small = statement.body[0]
        alone = (isinstance(small, cst.Expr) and small.value is move) or (
            isinstance(small, cst.Assign)
            and small.value is move
            and all(dotted_name(t.target) in (wrap.inner, wrap.wrapper) for t in small.targets)
        )
        if not alone:
            return None
        module = argument_for(wrap.call, DDP, "module")
        moved = move.with_changes(func=move.func.with_changes(value=module.value))  # type: ignore[union-attr]
        return {module.value: moved, statement: cst.RemovalSentinel.REMOVE}  # type: ignore[union-attr]


# -- questions only this rule asks of the program model -------------------------------------

MAX_DEPTH = 3  # project helpers followed below the call asked about; deeper is unknown


class BuiltHere:
    """`cpu_built`'s answer for a call that builds the model itself (a constructor, a project class)."""

    def __repr__(self) -> str:
        return "HERE"


HERE = BuiltHere()


def cpu_built(program, module: str, callee: str, cls: str | None, constructor,
              depth: int = 0) -> Place | BuiltHere | None:
    """Where the model that calling `callee` in `module` returns was built and left on the
    CPU: HERE when the call builds it (a project class, a call `constructor(qualified name)`
    accepts), the place of that build in a project function every `return` of which gives such a
    model untouched; None otherwise."""
    if depth > MAX_DEPTH or program.summary(module) is None:
        return None
    qualified = program.qualify(module, callee)
    if qualified is not None and constructor(qualified):
        return HERE
    made = program.class_of(module, callee)
    if made is not None:  # a project class, unless its __init__ places something on CUDA itself
        init = program.summary(made[0]).functions.get(f"{made[1]}.__init__")
        return HERE if init is None or init.cuda is None else None
    target = program.resolve(module, callee, cls)
    if target is None or target.bound:  # unknown, or a method: its object may have moved it
        return None
    record = program.summary(target.module).functions[target.key]
    returns = record.fresh
    if not returns or None in returns:
        return None
    places = []
    for made_by in returns:
        place = cpu_built(program, target.module, made_by.callee, record.cls, constructor, depth + 1)
        if place is None:
            return None
        places.append(program.place(target.module, made_by.line) if place is HERE else place)
    return places[0]


def handed_to_ddp(program, module: str, key: str | None, cls: str | None, callee: str, position: int | str) -> Place | None:
    """Where the project function that calling `callee` reaches hands the argument at `position`
    (an index, or a keyword: `wrap(model=net)`), untouched, to `DDP(..., device_ids=...)`;
    None otherwise."""
    target = program.target(module, key, cls, callee)
    if target is None:
        return None
    record = program.summary(target.module).functions[target.key]
    params = record.arguments(target.bound)
    if isinstance(position, int):
        position = params[position] if position < len(params) else None
    return next((program.place(target.module, line) for param, line in device_wraps(program, target.module, record) if param == position), None)
