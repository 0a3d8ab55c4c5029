from __future__ import annotations

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Rule
from ddplint.semantic.model import dotted_name
from ddplint.core.torch_api import (
    DDP, NN_MODULE, PARAMETER, PARAMETERISED_LAYERS, TORCH_NN, TORCH_NN_PARALLEL, TORCH_NN_UTILS,
)
from ddplint.semantic.walk import descendants

# Containers whose members a forward may pick from: whether all are used cannot be read off.
SELECTING_CONTAINERS = ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
# Calls that are not modules, allowed on the right of `self.x = ...` in __init__.
PLAIN_VALUES = frozenset({"int", "float", "bool", "str", "tuple", "list", "dict", "len", "max", "min", "round"})
# Moves and casts that return the same module.
SAME_MODULE = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train"})
# In a forward: anything that can leave a parameter without a gradient on some step.
CUTS_GRADIENT = frozenset({"detach", "detach_", "data", "item", "requires_grad_", "training", "no_grad"})


class UnneededFindUnusedParameters(Rule):
    """
    `find_unused_parameters=True` makes DDP traverse the autograd graph after every forward
    to find the parameters that will get no gradient, so that it does not wait for them. On a
    model whose forward uses every parameter on every step the traversal finds nothing and
    is pure overhead. PyTorch says so itself at run time (measured,
    ddplint/harness/scenarios/ddp024/experiment_find_unused.py, gloo, 2 ranks, a 24-layer
    MLP): "find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward
    pass. This flag results in an extra traversal of the autograd graph every iteration,
    which can adversely affect performance." The step took 13.5 ms with the flag and 13.1 ms
    without it on CPU (about 3%; the cost grows with the size of the graph). This is a
    performance finding (level "warning"), not an error: the program is correct either way.

    Fires when `find_unused_parameters=True` (the literal) is passed to
    `DistributedDataParallel(...)` for a model of a class defined in this file, deriving
    directly from `nn.Module`, and every parameter of it is used on every step: `__init__` is
    straight-line code (an `if` that only binds locals to values that call nothing, such as
    `if channel is None: channel = 64`, aside) that builds only torch.nn layers that own parameters (not
    ModuleList/ModuleDict), `nn.Parameter`s, or classes of this file that pass the same test;
    the forward is straight-line code (no `if`, loop, conditional expression, `and`/`or`,
    comprehension, `detach`, `self.training`, or call of another method), returns one value
    (not a tuple or dict whose parts a loss may ignore), and every layer and parameter flows
    into that value. This is DDP015's question (which layers does forward use) asked the other
    way round, with no condition allowed. A class imported from another project module
    (`from models.net import Net`) is judged the same way in its own module, through the
    program model. Not flagged: forwards with branches or loops, auxiliary heads returned
    beside the output, a class whose layers come from yet another module, models of other
    libraries, a flag computed at run time.

    Fix (unsafe): remove the argument. Unsafe because the linter cannot see the loss: a
    returned value that the loss uses only in part still gives every parameter a gradient,
    but a model later changed to skip a layer would then fail with DDP's "Expected to have
    finished reduction in the prior iteration" error, which is what the flag is for.
    """

    code = "DDP024"
    needs_ranks = True
    name = "unneeded-find-unused-parameters"
    level = "warning"
    message = (
        "find_unused_parameters=True on a model whose forward uses every parameter on every step: "
        "an extra autograd-graph traversal each iteration for nothing (PyTorch warns at run time); "
        "remove it"
    )
    fix = Applicability.UNSAFE
    # `also`: the argument it flags.
    trigger = CallTrigger(DDP, also=("find_unused_parameters",))

    flagged_examples = (
        Flagged(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Block(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.norm = nn.LayerNorm(dim)
                    self.fc = nn.Linear(dim, dim)
                    self.act = nn.GELU()

                def forward(self, x):
                    return x + self.act(self.fc(self.norm(x)))

            class Net(nn.Module):
                def __init__(self, dim, classes):
                    super().__init__()
                    self.embed = nn.Linear(16, dim)
                    self.block = Block(dim)
                    self.head = nn.Linear(dim, classes)
                    self.scale = nn.Parameter(torch.ones(1))

                def forward(self, x):
                    h = self.embed(x)
                    h = self.block(h)
                    return self.head(h) * self.scale

            def main(local_rank):
                model = Net(64, 10).to(local_rank)
                model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
                                                            ^
            """,
            fixed="""
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Block(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.norm = nn.LayerNorm(dim)
                    self.fc = nn.Linear(dim, dim)
                    self.act = nn.GELU()

                def forward(self, x):
                    return x + self.act(self.fc(self.norm(x)))

            class Net(nn.Module):
                def __init__(self, dim, classes):
                    super().__init__()
                    self.embed = nn.Linear(16, dim)
                    self.block = Block(dim)
                    self.head = nn.Linear(dim, classes)
                    self.scale = nn.Parameter(torch.ones(1))

                def forward(self, x):
                    h = self.embed(x)
                    h = self.block(h)
                    return self.head(h) * self.scale

            def main(local_rank):
                model = Net(64, 10).to(local_rank)
                model = DDP(model, device_ids=[local_rank])
            """,
        ),
        Flagged(
            """
            import torch
            import torch.nn as nn

            class ConvNet(nn.Module):
                def __init__(self, width=None):
                    super().__init__()
                    if width is None:  # a default: every layer is built either way
                        width = 8
                    self.features = nn.Sequential(nn.Conv2d(3, width, 3), nn.BatchNorm2d(width), nn.ReLU())
                    self.pool = nn.AdaptiveAvgPool2d(1)
                    self.fc = nn.Linear(width, 10)

                def forward(self, x):
                    x = self.pool(self.features(x))
                    return self.fc(torch.flatten(x, 1))

            ddp = torch.nn.parallel.DistributedDataParallel(
                ConvNet().cuda(),
                find_unused_parameters=True,
                ^
            )
            """,
            fixed="""
            import torch
            import torch.nn as nn

            class ConvNet(nn.Module):
                def __init__(self, width=None):
                    super().__init__()
                    if width is None:  # a default: every layer is built either way
                        width = 8
                    self.features = nn.Sequential(nn.Conv2d(3, width, 3), nn.BatchNorm2d(width), nn.ReLU())
                    self.pool = nn.AdaptiveAvgPool2d(1)
                    self.fc = nn.Linear(width, 10)

                def forward(self, x):
                    x = self.pool(self.features(x))
                    return self.fc(torch.flatten(x, 1))

            ddp = torch.nn.parallel.DistributedDataParallel(
                ConvNet().cuda(),
            )
            """,
        ),
    )
    clean_examples = (
        Clean(
            # An `if` in __init__ that builds a layer, or picks one by a call: not judged.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class MaybeProjected(nn.Module):
                def __init__(self, channel=None):
                    super().__init__()
                    if channel is None:
                        channel = 64
                        self.proj = nn.Conv2d(3, 3, 1)
                    self.out = nn.Conv2d(3, channel, 3, padding=1)

                def forward(self, x):
                    return self.out(x)

            class Picked(nn.Module):
                def __init__(self, deep=False):
                    super().__init__()
                    if deep:
                        body = nn.Sequential(nn.Conv2d(3, 3, 3), nn.Conv2d(3, 3, 3))
                    else:
                        body = nn.Conv2d(3, 3, 3)
                    self.body = body
                    self.out = nn.Conv2d(3, 3, 1)

                def forward(self, x):
                    return self.out(x)

            a = DDP(MaybeProjected(), find_unused_parameters=True)
            b = DDP(Picked(), find_unused_parameters=True)
            """
        ),
        Clean(
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Branchy(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.extra = nn.Linear(4, 4)

                def forward(self, x, use_extra=False):
                    x = self.fc(x)
                    if use_extra:
                        x = self.extra(x)
                    return x

            class WithAux(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Linear(4, 4)
                    self.head = nn.Linear(4, 2)
                    self.aux = nn.Linear(4, 2)

                def forward(self, x):
                    h = self.body(x)
                    return self.head(h), self.aux(h)

            class Dropped(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.probe = nn.Linear(4, 1)

                def forward(self, x):
                    p = self.probe(x)
                    return self.fc(x)

            a = DDP(Branchy(), find_unused_parameters=True)
            b = DDP(WithAux(), find_unused_parameters=True)
            c = DDP(Dropped(), find_unused_parameters=True)
            """
        ),
        Clean(
            """
            import timm
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x

            class Frozen(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone = timm.create_model("resnet18")
                    self.head = nn.Linear(512, 2)

                def forward(self, x):
                    return self.head(self.backbone(x).detach())

            def main(args):
                model = DDP(Stack(), find_unused_parameters=True)
                other = DDP(Frozen(), find_unused_parameters=True)
                flagged = DDP(Stack(), find_unused_parameters=args.find_unused)
                imported = DDP(build_model(args), find_unused_parameters=True)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._classes: dict[str, list[cst.ClassDef]] = {}
        self._bindings: dict[int | None, dict[str, list[str | None]]] = {}  # per function: name -> classes bound
        # (DDP call, the flag, the model's class: a name of this file, or ("project", callee) for
        # a class of another project module)
        self._wraps: list[tuple[cst.Call, cst.Arg, str | tuple[str, str]]] = []

    def _function(self) -> int | None:
        frame = self.model.function
        return id(frame.node) if frame is not None else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.setdefault(node.name.value, []).append(node)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        # On leaving, so that a wrap in the value sees the bindings before this one.
        bindings = self._bindings.setdefault(self._function(), {})
        for target in original_node.targets:
            if isinstance(target.target, cst.Name):
                bindings.setdefault(target.target.value, []).append(self._class_of(original_node.value, bindings))

    def _class_of(self, expr: cst.BaseExpression, bindings: dict) -> str | tuple[str, str] | None:
        """The same-file class `expr` builds (`Net(...)`, `Net(...).to(d)`), ("project", callee)
        for a call of a class imported from another project module, or None."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in SAME_MODULE:
            expr = expr.func.value
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and self.model.qualified(expr.func) is None:
            return expr.func.value
        if isinstance(expr, cst.Call) and self.model.project is not None:
            callee = dotted_name(expr.func)
            return ("project", callee) if callee is not None else None
        if isinstance(expr, cst.Name):
            # Every binding so far builds the same class (`model = Net()`, `model = model.to(d)`).
            seen = set(bindings.get(expr.value, [None]))
            return seen.pop() if len(seen) == 1 else None
        return None

    def visit_Call(self, node: cst.Call) -> None:
        if self.model.qualified(node.func) not in DDP:
            return
        flag = next((a for a in node.args if a.keyword is not None and a.keyword.value == "find_unused_parameters"), None)
        module = node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star else None
        if flag is None or module is None:
            return
        if not (isinstance(flag.value, cst.Name) and flag.value.value == "True"):
            return
        bindings = self._bindings.get(self._function(), {})
        name = self._class_of(module, bindings)
        if name is not None:
            self._wraps.append((node, flag, name))

    def leave_Module(self, original_node: cst.Module) -> None:
        here = _Proof(self._classes, self.model.qualified)
        for call, flag, name in self._wraps:
            if isinstance(name, str):
                if here.static(name, set()):
                    self.report(flag, replace={call: _without(call, flag)})
                continue
            found = self.model.project.project_class(name[1])  # type: ignore[union-attr]
            if found is None:
                continue
            where, text, qualify, cls = found
            try:
                module = cst.parse_module(text)
            except (cst.ParserSyntaxError, RecursionError, ValueError):
                continue  # a module that does not parse hides its class: unknown
            classes: dict[str, list[cst.ClassDef]] = {}
            for statement in module.body:
                if isinstance(statement, cst.ClassDef):
                    classes.setdefault(statement.name.value, []).append(statement)
            there = _Proof(classes, lambda expr: qualify(dotted_name(expr)) if dotted_name(expr) else None)
            if there.static(cls, set()):
                message = f"{self.message} (`{cls}` is defined at {where}, where its forward uses every parameter)"
                self.report(flag, message, replace={call: _without(call, flag)})


class _Proof:
    """Whether every parameter of a class is used on every step, from the classes of its own
    module and `qualified`, which names what an expression of that module refers to."""

    def __init__(self, classes: dict[str, list[cst.ClassDef]], qualified) -> None:
        self._classes = classes
        self._qualified = qualified

    # -- is every parameter used on every step? ------------------------------------------------

    def static(self, name: str, seen: set[str]) -> bool:
        classes = self._classes.get(name, [])
        if len(classes) != 1 or name in seen:
            return False
        seen = seen | {name}
        cls = classes[0]
        if len(cls.bases) != 1 or cls.keywords or self._qualified(cls.bases[0].value) not in NN_MODULE:
            return False
        methods = {
            s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)  # type: ignore[union-attr]
        }
        init, forward = methods.get("__init__"), methods.get("forward")
        if init is None or forward is None or init.decorators or forward.decorators:
            return False
        found = self._owned(init, seen)
        if found is None:
            return False
        owned, assigned = found
        contributing = _contributing(forward, _self_name(forward), assigned)
        return contributing is not None and set(owned) <= contributing

    def _owned(self, init: cst.FunctionDef, seen: set[str]) -> tuple[list[str], set[str]] | None:
        """The attributes of `self` holding parameters, and all it assigns, if __init__ is
        straight-line and builds nothing whose use cannot be judged; None otherwise."""
        self_name = _self_name(init)
        owned: list[str] = []
        assigned: set[str] = set()
        for statement in _body(init):
            if isinstance(statement, cst.If) and _sets_locals_only(statement):
                continue  # `if channel is None: channel = [64]`: a default, no module either way
            if not isinstance(statement, cst.SimpleStatementLine):
                return None
            for small in statement.body:
                if isinstance(small, cst.Expr):
                    if _mentions(small, {"add_module", "register_parameter", "register_module", "setattr"}):
                        return None
                    continue
                if not isinstance(small, cst.Assign):
                    if isinstance(small, (cst.Pass, cst.AnnAssign)) and not isinstance(small, cst.AnnAssign):
                        continue
                    return None
                for target in small.targets:
                    attribute = target.target
                    if not (isinstance(attribute, cst.Attribute) and dotted_name(attribute.value) == self_name):
                        if isinstance(attribute, cst.Name):
                            continue
                        return None
                    kind = self._value_kind(small.value, seen)
                    if kind is None:
                        return None
                    assigned.add(attribute.attr.value)
                    if kind == "owns":
                        owned.append(attribute.attr.value)
        return owned, assigned

    def _value_kind(self, value: cst.BaseExpression, seen: set[str]) -> str | None:
        """"owns" (a layer with parameters, a Parameter), "plain" (no parameters), None (unknown)."""
        if not isinstance(value, cst.Call):
            return "plain" if not _calls(value) else None
        qualified = self._qualified(value.func)
        if qualified is None:
            if isinstance(value.func, cst.Name) and value.func.value in PLAIN_VALUES:
                return "plain"
            if isinstance(value.func, cst.Name) and value.func.value in self._classes:
                return "owns" if self.static(value.func.value, seen) else None
            return None
        if qualified in PARAMETER:
            return "owns"
        if qualified.startswith("math."):
            return "plain"
        if qualified not in TORCH_NN or qualified.startswith((TORCH_NN_PARALLEL.name, TORCH_NN_UTILS.name)):
            return None
        last = qualified.rpartition(".")[2]
        if last.startswith(SELECTING_CONTAINERS):
            return None
        if last == "Sequential":
            kinds = [self._value_kind(arg.value, seen) for arg in value.args]
            return None if None in kinds or any(arg.star for arg in value.args) else "owns"
        return "owns" if last.startswith(PARAMETERISED_LAYERS) else "plain"


def _self_name(function: cst.FunctionDef) -> str | None:
    params = function.params.posonly_params or function.params.params
    return params[0].name.value if params else None


def _body(function: cst.FunctionDef):
    body = function.body
    return body.body if isinstance(body, cst.IndentedBlock) else [cst.SimpleStatementLine(body=body.body)]  # type: ignore[attr-defined]




def _sets_locals_only(branch: cst.If | cst.Else) -> bool:
    """An `if` (its `elif`s and `else` too) whose every statement binds local names to values
    that call nothing: whichever way it goes, it builds no module and sets nothing on `self`."""
    for statement in branch.body.body:
        smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
        for small in smalls:
            if not (isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets)):
                return False
            if _calls(small.value):
                return False
    orelse = branch.orelse if isinstance(branch, cst.If) else None
    return orelse is None or _sets_locals_only(orelse)


def _mentions(node: cst.CSTNode, names: set[str]) -> bool:
    return any(
        (isinstance(n, cst.Name) and n.value in names) or (isinstance(n, cst.Attribute) and n.attr.value in names)
        for n in descendants(node)
    )


def _calls(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) for n in descendants(node))


def _contributing(forward: cst.FunctionDef, self_name: str | None, assigned: set[str]) -> set[str] | None:
    """The attributes of `self` that flow into the value a straight-line forward returns;
    None when the forward is not straight-line or returns several values."""
    if self_name is None:
        return None
    steps: list[tuple[set[str], cst.BaseExpression]] = []  # (assigned names, value)
    returned: cst.BaseExpression | None = None
    for index, statement in enumerate(_body(forward)):
        if not isinstance(statement, cst.SimpleStatementLine):
            return None
        for small in statement.body:
            if returned is not None:
                return None
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)) and index == 0:
                continue
            if isinstance(small, cst.Assign) and all(_plain_target(t.target) for t in small.targets):
                steps.append(({n for t in small.targets for n in _target_names(t.target)}, small.value))
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                steps.append(({small.target.value}, cst.BinaryOperation(small.target, cst.Add(), small.value)))
            elif isinstance(small, cst.Return) and small.value is not None:
                returned = small.value
            else:
                return None
    if returned is None or isinstance(returned, (cst.Tuple, cst.List, cst.Dict, cst.Set)):
        return None
    for _, value in steps + [(set(), returned)]:
        for node in descendants(value):
            if isinstance(node, (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                return None
            if isinstance(node, cst.Attribute) and node.attr.value in CUTS_GRADIENT:
                return None
            if isinstance(node, cst.Name) and node.value == "no_grad":
                return None
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and dotted_name(node.func.value) == self_name
                and node.func.attr.value not in assigned
            ):
                return None  # self.helper(...): another method, maybe with conditions
    live: set[str] = set()
    contributing: set[str] = set()

    def absorb(value: cst.BaseExpression) -> None:
        for node in descendants(value):
            if isinstance(node, cst.Name):
                live.add(node.value)
            if isinstance(node, cst.Attribute) and dotted_name(node.value) == self_name:
                contributing.add(node.attr.value)

    absorb(returned)
    for targets, value in reversed(steps):
        if targets & live:
            absorb(value)
    return contributing


def _plain_target(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_plain_target(e.value) for e in target.elements)
    return False


def _target_names(target: cst.BaseExpression):
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)


def _without(call: cst.Call, flag: cst.Arg) -> cst.Call:
    """`call` without the argument `flag`, keeping the layout of the rest."""
    args = list(call.args)
    index = next(i for i, a in enumerate(args) if a is flag)
    del args[index]
    if index == len(args) and args:  # the flag was last: the new last argument takes its comma
        args[-1] = args[-1].with_changes(comma=flag.comma)
    return call.with_changes(args=args)
