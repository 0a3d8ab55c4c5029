from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ddplint.core.diagnostics import StepKind
from ddplint.model.records import Place
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.semantic.model import dotted_name
from ddplint.prefilter.screens import UnreadSelfAttribute
from ddplint.semantic.edits import argument_for
from ddplint.core.fixpoint import fixed_point, reachable
from ddplint.core.torch_api import DDP, DISTRIBUTED_MARKERS, NN_MODULE, PARAMETERISED_LAYERS, TORCH_NN
from ddplint.semantic.walk import children
from ddplint.prefilter.project_facts import ProjectFact

# Ways of reaching submodules without naming them: anything goes after these.
REFLECTIVE_METHODS = frozenset(
    {"children", "named_children", "modules", "named_modules", "__dict__", "_modules", "__getattr__"}
)
REFLECTIVE_BUILTINS = frozenset({"getattr", "setattr", "hasattr", "delattr", "vars"})
CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
# Calls on a model that return the same model: `DDP(Model().cuda())` wraps a `Model`.
_SAME_MODEL_METHODS = frozenset({"cuda", "to", "float", "half", "bfloat16", "train", "requires_grad_"})


@dataclass
class _ModuleClass:
    name: str
    bases: list[tuple[str | None, str | None]]  # (qualified name, plain same-module name)
    # (attribute, its assignment, the qualified name of the constructor called)
    built: list[tuple[str, cst.Assign, str | None]] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    uses_everything: bool = False
    has_forward: bool = False
    # A container built from other attributes (`nn.Sequential(self.conv, self.bn)`): the
    # attributes it groups, and the calls in it that may build layers of its own.
    grouped: dict[str, tuple[set[str], list[tuple[cst.Call, str | None]]]] = field(default_factory=dict)
    # Containers that hold no parameters when built: empty, or of parameter-less layers only.
    empty: set[str] = field(default_factory=set)
    # Calls in __init__ of a name this file does not import: objects of its own classes, the
    # submodules an object of this class holds (`self.block = Block()`, `[Block() for _ in ...]`).
    holds: list[tuple[str, cst.Call]] = field(default_factory=list)
    definition: cst.ClassDef | None = None


class UnusedSubmodule(Rule):
    """
    DDP all-reduces every parameter's gradient in buckets and waits until each parameter of
    the model has produced one. A layer built in `__init__` that the forward pass never uses
    gets no gradient, the reduction never completes, and the next iteration fails with
    "Expected to have finished reduction in the prior iteration before starting a new one.
    This error indicates that your module has parameters that were not used in producing
    loss" (seed report 003: `fc3` defined but forgotten in `forward`).

    Fires when a layer that owns parameters is built in `__init__` of an `nn.Module` class,
    nothing in its class family reads it, and the program shows the class's objects inside a
    DDP model wrapped without `find_unused_parameters=True`: the class is wrapped itself, or
    an object of a wrapped class builds one in its `__init__` (at any depth: `Net` builds an
    `Encoder`, which builds `Block`s), or derives from it; in this file or anywhere in the
    project (`build_model()` returns, wrap helpers). The chain goes from the wrap through each
    class that builds the next to the unused layer. A class nothing wraps and no wrapped class
    builds (a legacy model kept to read old checkpoints, a probe) is not reported: no step
    shows DDP ever reducing its parameters.

    Flagged: `self.x = nn.<Layer>(...)` (a torch.nn layer that owns
    parameters, or a Module subclass of the same file) in `__init__` of an `nn.Module`
    subclass, when `self.x` is read nowhere in the class (every method counts, so do the
    same-file base and derived classes); the finding is on the target `self.x`, the unused
    submodule's name. Not flagged: classes without a `forward` in that
    family (containers whose owner calls `self.block.fc(x)` directly); layers without
    parameters (ReLU, Dropout, pooling, losses); classes that reach submodules indirectly (`getattr(self, name)`
    with a computed name, `self.children()`, `self.modules()`, `self._modules`, `__getattr__`)
    or name them in a string; frozen layers (`self.x.requires_grad_(False)` reads it); classes
    with a base that is neither `nn.Module` nor defined in the file (it may use the layer);
    an `nn.Sequential`/`ModuleList`/`ModuleDict` that only groups layers used elsewhere
    (`self.block = nn.Sequential(self.conv, self.bn)` while forward calls `self.conv`: no
    parameter of its own goes unused); containers built empty (`nn.ModuleList()`,
    `nn.ModuleDict({})`: filled later, they are read where they are filled) or of layers
    without parameters (`nn.Sequential(nn.ReLU(), nn.Dropout())`); stub models whose class
    family reads none of the attributes `__init__` builds (`def forward(self, x): return x` in
    a test: no loss depends on any parameter, so nothing trains through DDP); models wrapped
    with `find_unused_parameters=True` (DDP then copes: it marks the unused parameters
    ready), with the classes they build, also where the wrap is in another module; a class
    that one wrap tolerates and another does not is left alone too (the unused layer may be
    the tolerant model's). A module that never names DDP is checked when the program sees one
    of its classes wrapped elsewhere, or built into a wrapped model; the message names that
    wrap.
    No fix: use the layer, delete it, or pass `find_unused_parameters=True` to DDP if it is
    unused only on some steps.
    """

    code = "DDP015"
    opened_by = frozenset((ProjectFact.WRAPPED_CLASS,))  # the model may be wrapped in DDP in another module
    needs_ranks = True
    name = "unused-submodule"
    frameworks = (Framework.DDP,)
    message = "submodule built in __init__ is never used: DDP waits for its gradients forever; use it or remove it"
    hand_screen_reason = (
        "a layer built in __init__ that no method reads is a fact about a whole class, which no "
        "trigger kind describes; the needles are the methods it reads and the distributed markers"
    )
    needles = ("__init__", "forward", DISTRIBUTED_MARKERS)
    screen = UnreadSelfAttribute(method="forward", package=TORCH_NN.prefix, layers=PARAMETERISED_LAYERS)

    flagged_examples = (
        Flagged(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Model(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.fc1 = nn.Linear(dim, dim * 4)
                    self.fc2 = nn.Linear(dim * 4, dim)
                    self.fc3 = nn.Linear(dim, dim)
                    ^
                    self.act = nn.ReLU()

                def forward(self, x):
                    return self.fc2(self.act(self.fc1(x)))

            model = DDP(Model(8))
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            class Block(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = torch.nn.Conv2d(3, 3, 3)

                def forward(self, x):
                    return self.conv(x)

            class Net(Block):
                def __init__(self):
                    super().__init__()
                    self.aux = Block()
                    ^
                    self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(10))
                    ^

                def forward(self, x):
                    return super().forward(x)

            model = torch.nn.parallel.DistributedDataParallel(Net().cuda())
            """,
        ),
        Flagged(
            # find_unused_parameters=True on another model's wrap, and a container over a
            # layer nothing else uses, do not excuse this one.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 3, 3)
                    self.extra = nn.Linear(3, 3)
                    ^
                    self.block = nn.Sequential(self.extra, nn.ReLU())
                    ^

                def forward(self, x):
                    return self.conv(x)

            class Critic(nn.Module):
                def forward(self, x):
                    return x

            model = DDP(Model().cuda())
            critic = DDP(Critic(), find_unused_parameters=True)
            """,
        ),
        Flagged(
            # A container of activations around one Linear still owns the Linear's parameters.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.heads = nn.ModuleDict({"act": nn.ReLU(), "out": nn.Linear(4, 2)})
                    ^

                def forward(self, x):
                    return self.fc(x)

            def main(rank):
                model = DDP(Model().to(rank), device_ids=[rank])
            """
        ),
        Flagged(
            # Unused in a block that the wrapped model builds: the block's parameters are the
            # DDP model's too. A class nothing wraps, and nothing wrapped builds, is left alone.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Block(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.fc = nn.Linear(dim, dim)
                    self.gate = nn.Linear(dim, 1)
                    ^

                def forward(self, x):
                    return self.fc(x).relu()

            class Encoder(nn.Module):
                def __init__(self, dim, depth):
                    super().__init__()
                    self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])

                def forward(self, x):
                    for block in self.blocks:
                        x = block(x)
                    return x

            class Probe(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.fc = nn.Linear(dim, dim)
                    self.spare = nn.Linear(dim, dim)

                def forward(self, x):
                    return self.fc(x)

            def main(rank):
                model = DDP(Encoder(64, 4).to(rank), device_ids=[rank])
            """
        ),
    )
    clean_examples = (
        Clean(
            # DDP copes with unused parameters when the wrap asks it to.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.aux = nn.Linear(4, 4)

                def forward(self, x):
                    return x

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = Head()
                    self.spare = nn.Linear(4, 4)

                def forward(self, x):
                    return self.head(x)

            def main(local_rank):
                model = Model().cuda(local_rank)
                model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
            """
        ),
        Clean(
            # A Sequential grouping layers that forward calls one by one.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Stem(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3)
                    self.bn = nn.BatchNorm2d(8)
                    self.stem = nn.Sequential(self.conv, self.bn, nn.ReLU(inplace=True))
                    self.layers = nn.ModuleList([self.conv])

                def forward(self, x):
                    return self.bn(self.conv(x))

            stem = DDP(Stem().cuda())
            """
        ),
        Clean(
            """
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone = nn.Linear(4, 4)
                    self.classifier = nn.Linear(4, 2)
                    self.frozen = nn.Embedding(10, 4)
                    self.frozen.requires_grad_(False)
                    self.dropout = nn.Dropout(0.1)
                    self.loss = nn.CrossEntropyLoss()

                def forward(self, x):
                    return self.backbone(x)

                def predict(self, x):
                    return self.classifier(self.backbone(x))

            model = torch.nn.parallel.DistributedDataParallel(Model().cuda())
            """
        ),
        Clean(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layer0 = nn.Linear(4, 4)
                    self.layer1 = nn.Linear(4, 4)

                def forward(self, x):
                    for i in range(2):
                        x = getattr(self, f"layer{i}")(x)
                    return x

            class Tree(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.left = nn.Linear(4, 4)

                def forward(self, x):
                    return sum(child(x) for child in self.children())

            models = [DDP(Stack().cuda()), DDP(Tree().cuda())]
            """
        ),
        Clean(
            """
            import torch.nn as nn
            import pytorch_lightning as pl
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Lit(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.unused_here = nn.Linear(4, 4)

            class Base(nn.Module):
                def forward(self, x):
                    return self.proj(x)

            class Child(Base):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(4, 4)

            class Heads(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cls = nn.Linear(4, 2)
                    self.box = nn.Linear(4, 4)

            models = [DDP(Lit()), DDP(Child()), DDP(Heads())]
            """
        ),
        Clean(
            # Containers that own no parameters (formerly flagged): built empty, or of
            # parameter-less layers; one filled later is read where it is filled.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Model(nn.Module):
                def __init__(self, dim, depth):
                    super().__init__()
                    self.fc = nn.Linear(dim, dim)
                    self.adapters = nn.ModuleDict()
                    self.hooks = nn.ModuleList([])
                    self.post = nn.Sequential(nn.ReLU(), nn.Dropout(0.1))
                    self.acts = nn.ModuleList([nn.GELU() for _ in range(depth)])
                    self.blocks = nn.ModuleList()
                    for _ in range(depth):
                        self.blocks.append(nn.Linear(dim, dim))

                def forward(self, x):
                    for block in self.blocks:
                        x = block(x)
                    return self.fc(x)

            model = DDP(Model(64, 4).cuda())
            """
        ),
        Clean(
            # A stub forward in a distributed test: it uses nothing __init__ builds.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class StubModel(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.linear = nn.Linear(2, 2)
                    self.blocks = nn.ModuleList([nn.Linear(2, 2)])

                def forward(self, x):
                    return x * 2

            model = DDP(StubModel())
            """
        ),
        Clean(
            """
            # a single-GPU model: an unused layer only wastes memory here
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.spare = nn.Linear(4, 4)

                def forward(self, x):
                    return x
            """
        ),
        Clean(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            from mylib import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.spare = nn.Linear(4, 4)

            model = DDP(Model())
            """
        ),
        Clean(
            # A class nothing builds (kept to read old checkpoints) beside the wrapped model,
            # and a layer of a class that nothing wrapped builds: DDP never reduces them.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Adapter(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.down = nn.Linear(dim, dim)
                    self.up = nn.Linear(dim, dim)

                def forward(self, x):
                    return self.down(x)

            class LegacyNet(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.adapter = Adapter(dim)
                    self.aux = nn.Linear(dim, 2)

                def forward(self, x):
                    return self.adapter(x)

            class Net(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.fc = nn.Linear(dim, 2)

                def forward(self, x):
                    return self.fc(x)

            def main(rank):
                model = DDP(Net(64).to(rank), device_ids=[rank])
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._classes: list[_ModuleClass] = []
        self._records: dict[int, _ModuleClass] = {}  # by id of the class node
        self._targets: set[int] = set()
        self._grouping: set[int] = set()  # attribute reads inside a container's construction
        # Model classes wrapped with `find_unused_parameters=True` ("*": a model of unknown class)
        self._tolerated: set[str] = set()
        self._local_wraps: dict[str, list[tuple[cst.Call, bool]]] = {}  # class -> its DDP calls here, tolerant
        self._instances: dict[tuple[str | None, str], str] = {}  # (function, name) -> class built

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = []
        for arg in node.bases:
            plain = arg.value.value if isinstance(arg.value, cst.Name) else None
            bases.append((self.model.qualified(arg.value), plain))
        if node.keywords:
            bases.append((None, None))  # a metaclass: unknown behaviour
        record = _ModuleClass(node.name.value, bases, definition=node)
        self._classes.append(record)
        self._records[id(node)] = record

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frame = self.model.frame
        if frame.parent is not None and frame.parent.is_class:
            record = self._records[id(frame.parent.node)]
            if node.name.value == "__getattr__":
                record.uses_everything = True
            elif node.name.value == "forward":
                record.has_forward = True

    def _method(self) -> tuple[_ModuleClass, str, bool] | None:
        """In a method body (or a function nested in one, a closure over `self`): the class,
        the name of `self`, and whether the method is `__init__`."""
        frame = self.model.frame
        method = frame.method if frame.is_function else None
        if method is None or frame.self_name is None:
            return None
        record = self._records[id(method.parent.node)]  # type: ignore[union-attr]
        return record, frame.self_name, method.node.name.value == "__init__"  # type: ignore[union-attr]

    def _built_class(self, expr: cst.BaseExpression) -> str | None:
        """The same-module class whose instance `expr` is, or "*" when unknown."""
        while (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value in _SAME_MODEL_METHODS
        ):
            expr = expr.func.value
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and self.model.qualified(expr.func) is None:
            return expr.func.value
        name = dotted_name(expr)
        if name is not None:
            return self._instances.get((self.model.frame.key, name), "*")
        return "*"

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call):
            built = self._built_class(node.value)
            for target in node.targets:
                name = dotted_name(target.target)
                if name is not None and built != "*":
                    self._instances[(self.model.frame.key, name)] = built  # type: ignore[assignment]
        method = self._method()
        if method is None or not method[2] or len(node.targets) != 1:
            return
        record, self_name, _ = method
        target = node.targets[0].target
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == self_name
            and isinstance(node.value, cst.Call)
        ):
            self._targets.add(id(target))
            constructor = self.model.qualified(node.value.func)
            record.built.append((target.attr.value, node, constructor))
            if constructor in TORCH_NN and constructor.rpartition(".")[2] in CONTAINERS:
                grouped: set[str] = set()
                calls: list[tuple[cst.Call, str | None]] = []
                for arg in node.value.args:
                    self._scan_container(arg.value, self_name, grouped, calls)
                record.grouped[target.attr.value] = (grouped, calls)
                if not self._may_hold_parameters(node.value):
                    record.empty.add(target.attr.value)

    def _may_hold_parameters(self, expr: cst.BaseExpression) -> bool:
        """Whether a container's contents may own parameters: False only for what is seen to
        own none (no contents, torch.nn layers without parameters, containers of those)."""
        if isinstance(expr, cst.Call):
            constructor = self.model.qualified(expr.func) or ""
            if constructor not in TORCH_NN:
                return True
            if constructor.rpartition(".")[2] in CONTAINERS:
                return any(arg.star or self._may_hold_parameters(arg.value) for arg in expr.args)
            return _owns_parameters(expr, constructor, set())
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            return any(
                isinstance(element, cst.StarredElement) or self._may_hold_parameters(element.value)
                for element in expr.elements
            )
        if isinstance(expr, cst.Dict):
            return any(
                isinstance(element, cst.StarredDictElement) or self._may_hold_parameters(element.value)
                for element in expr.elements
            )
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self._may_hold_parameters(expr.elt)
        if isinstance(expr, cst.DictComp):
            return self._may_hold_parameters(expr.value)
        return True

    def _scan_container(self, expr: cst.CSTNode, self_name: str, grouped: set[str], calls: list) -> None:
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == self_name:
            grouped.add(expr.attr.value)
            self._grouping.add(id(expr))
            return
        if isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute)):
            calls.append((expr, self.model.qualified(expr.func)))
        for child in children(expr):
            self._scan_container(child, self_name, grouped, calls)

    def visit_Call(self, node: cst.Call) -> None:
        if self.model.qualified(node.func) in DDP:
            flag = argument_for(node, DDP, "find_unused_parameters")
            wrapped = argument_for(node, DDP, "module")
            tolerant = flag is not None and not (isinstance(flag.value, cst.Name) and flag.value.value == "False")
            built = self._built_class(wrapped.value) if wrapped is not None else "*"
            if tolerant:
                self._tolerated.add(built)  # type: ignore[arg-type]
            if built not in (None, "*"):
                self._local_wraps.setdefault(built, []).append((node, tolerant))  # type: ignore[arg-type]
            return
        method = self._method()
        if method is not None and method[2] and isinstance(node.func, cst.Name) and self.model.qualified(node.func) is None:
            method[0].holds.append((node.func.value, node))
        self._reflective_call(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        method = self._method()
        if method is None or id(node) in self._targets or id(node) in self._grouping:
            return
        record, self_name, _ = method
        if isinstance(node.value, cst.Name) and node.value.value == self_name:
            record.used.add(node.attr.value)
            if node.attr.value in REFLECTIVE_METHODS:
                record.uses_everything = True

    def _reflective_call(self, node: cst.Call) -> None:
        method = self._method()
        if method is None or not isinstance(node.func, cst.Name) or node.func.value not in REFLECTIVE_BUILTINS:
            return
        record, self_name, _ = method
        if not node.args or not (isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == self_name):
            return
        name = self.model.string_value(node.args[1].value) if len(node.args) > 1 else None
        if name is None:
            record.uses_everything = True
        else:
            record.used.add(name)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        method = self._method()
        if method is not None:
            value = node.evaluated_value
            if isinstance(value, str) and value.isidentifier():
                method[0].used.add(value)

    def leave_Module(self, original_node: cst.Module) -> None:
        # Class names can repeat (test classes nested in functions): a name stands for all.
        by_name: dict[str, list[_ModuleClass]] = {}
        for record in self._classes:
            by_name.setdefault(record.name, []).append(record)
        module_classes = {record.name for record in self._classes if self._is_module(record, by_name, set())}
        if "*" in self._tolerated:
            return  # a model of unknown class is wrapped with find_unused_parameters=True
        wraps = _Wraps(self.model.project, self._local_wraps, by_name, module_classes)
        for record in self._classes:
            if not record.built or not self._is_module(record, by_name, set()):
                continue
            family = self._family(record, by_name)
            # Without a forward the class is a container whose owner calls into it
            # (`self.block.fc(x)`): what it uses is decided elsewhere.
            if any(member.uses_everything for member in family) or not any(m.has_forward for m in family):
                continue
            grouped = {name: entry for member in family for name, entry in member.grouped.items()}
            groups = {name: members for name, (members, _) in grouped.items()}
            # A used container uses what it groups.
            used = set(reachable(set().union(*(member.used for member in family)), lambda name: groups.get(name, ())))
            if not used & {name for member in family for name, _, _ in member.built}:
                # A stub forward that uses nothing __init__ builds (test models): no loss
                # depends on any parameter, so training fails before DDP's reduction matters.
                continue
            unused = [
                (attribute, assign) for attribute, assign, constructor in record.built
                if attribute not in used and attribute not in record.empty
                and _owns_parameters(assign.value, constructor, module_classes)
                and not (attribute in grouped and self._only_groups(grouped[attribute], used, module_classes))
            ]
            wrap = wraps.of(record.name) if unused else None
            if wrap is None:
                continue  # no wrap of it in DDP is known, or one passes find_unused_parameters
            for attribute, assign in unused:
                # the attribute's name: an editor underlines `self.fc3`, not the whole line
                target = assign.targets[0].target
                harm = Link(StepKind.HARM, f"forward never reads self.{attribute}: its parameters get no gradient and DDP's reduction never finishes", target)
                self.report(target, wrap.message(self.message), chain=[*wrap.links, harm])

    @staticmethod
    def _only_groups(entry, used: set[str], module_classes: set[str]) -> bool:
        """The container holds no parameters of its own, only attributes used elsewhere."""
        members, calls = entry
        return bool(members) and members <= used and not any(
            _owns_parameters(call, constructor, module_classes)
            and not (constructor or "").rpartition(".")[2] in CONTAINERS
            for call, constructor in calls
        )

    def _is_module(self, record: _ModuleClass, by_name: dict[str, list[_ModuleClass]], seen: set[int]) -> bool:
        """True when every base is nn.Module or a same-file Module class (and there is one)."""
        if id(record) in seen or not record.bases:
            return False
        seen.add(id(record))
        for qualified, plain in record.bases:
            if qualified in NN_MODULE:
                continue
            bases = by_name.get(plain, []) if qualified is None and plain is not None else []
            if not bases or not all(self._is_module(base, by_name, seen) for base in bases):
                return False
        return True

    def _family(self, record: _ModuleClass, by_name: dict[str, list[_ModuleClass]]) -> list[_ModuleClass]:
        """The class with its same-file ancestors and descendants: any of them may use it."""

        def and_relatives(related: dict[int, _ModuleClass]) -> dict[int, _ModuleClass]:
            grown = dict(related)
            names = {member.name for member in related.values()}
            for other in self._classes:
                plain_bases = {plain for _, plain in other.bases if plain in by_name}
                if id(other) in related:
                    for base in plain_bases:  # ancestors
                        grown.update((id(ancestor), ancestor) for ancestor in by_name[base])
                elif plain_bases & names:
                    grown[id(other)] = other  # descendants
            return grown

        return list(fixed_point(and_relatives, {id(record): record}).values())


# -- questions only this rule asks of the program model -------------------------------------


@dataclass(frozen=True)
class _Wrapped:
    """How a class of this module comes into a DDP model: the links from the wrap through each
    class that builds the next (`Net` builds a `Block`), the class wrapped, and where another
    module wraps it (None: this file)."""

    links: tuple[Link, ...]
    top: str
    target: str
    elsewhere: Place | None

    def message(self, base: str) -> str | None:
        if self.elsewhere is None:
            return None
        if self.target == self.top:
            return f"{base} (`{self.top}` is wrapped in DDP at {self.elsewhere})"
        return f"{base} (`{self.target}` is part of `{self.top}`, wrapped in DDP at {self.elsewhere})"


class _Wraps:
    """Where the objects of this module's classes end up in a DDP model: wrapped themselves, or
    built (in `__init__`, or a base class's) into an object of a class that is, in this file or
    anywhere in the program (ddplint.model.values.Values.parts: `build_model()` returns, wrap
    helpers, classes of other modules)."""

    def __init__(self, view, local_wraps: dict, by_name: dict[str, list[_ModuleClass]], module_classes: set[str]) -> None:
        self.view, self.local_wraps = view, local_wraps
        self.by_name, self.module_classes = by_name, module_classes
        self.parts = self.view.values.parts_in(self.view.module) if self.view is not None else {}

    def of(self, name: str) -> _Wrapped | None:
        """How class `name` of this module comes into a DDP model wrapped without
        find_unused_parameters; None when no wrap is known, or one passes it."""
        reached = []
        for cls, calls in self.local_wraps.items():
            path = self._path(cls, name)
            for call, tolerant in calls if path is not None else ():
                reached.append((tolerant, _Wrapped((_wrap_link(cls, call), *path), cls, name, None)))  # type: ignore[misc]
        for part in self.parts.get(name, ()):
            steps = tuple(_step_link(step.owner, step.held, step.how, step.place) for step in part.steps)
            elsewhere = part.wrap.place if part.wrap.place.path != self.view.path else None  # type: ignore[union-attr]
            reached.append((part.wrap.tolerant, _Wrapped((_wrap_link(part.top[1], part.wrap.place), *steps), part.top[1], name, elsewhere)))
        if not reached or any(tolerant for tolerant, _ in reached):
            return None
        return reached[0][1]

    def _path(self, start: str, goal: str) -> list[Link] | None:
        """The links from this module's class `start` to its class `goal` through the classes
        each builds or derives from, breadth first; None when `goal` is not reached."""
        paths: dict[str, list[Link]] = {start: []}
        pending = [start]
        while pending and goal not in paths:
            current = pending.pop(0)
            for record in self.by_name.get(current, ()):
                held = [(name, _step_link(current, name, "builds", call)) for name, call in record.holds if name in self.module_classes]
                held += [
                    (plain, _step_link(current, plain, "derives", record.definition.name))  # type: ignore[union-attr]
                    for _, plain in record.bases if plain in self.by_name and record.definition is not None
                ]
                for name, link in held:
                    if name not in paths:
                        paths[name] = [*paths[current], link]
                        pending.append(name)
        return paths.get(goal)


def _wrap_link(cls: str, at: Place | cst.CSTNode) -> Link:
    return Link(StepKind.MADE, f"`{cls}` is wrapped in DDP here without find_unused_parameters", at)


def _step_link(owner: str, held: str, how: str, at: Place | cst.CSTNode) -> Link:
    if how == "builds":
        return Link(StepKind.REACHES, f"`{owner}` builds a `{held}` here: its parameters are the DDP model's", at)
    return Link(StepKind.REACHES, f"`{owner}` derives from `{held}`, whose __init__ builds its submodules", at)


def _owns_parameters(call: cst.Call, constructor: str | None, module_classes: set[str]) -> bool:
    if constructor is None:  # a class of this file (its own name resolves to no import)
        return isinstance(call.func, cst.Name) and call.func.value in module_classes
    if constructor not in TORCH_NN:
        return False
    return constructor.rpartition(".")[2].startswith(PARAMETERISED_LAYERS)
