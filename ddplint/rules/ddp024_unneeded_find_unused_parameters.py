from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, NamedTuple

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.prefilter.triggers import CallTrigger
from ddplint.model.summary import definitions
from ddplint.prefilter.screens import dotted, walk
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.model import dotted_name
from ddplint.core.torch_api import (
    DDP, NN_MODULE, PARAMETER, PARAMETERISED_LAYERS, SAME_VALUE_METHODS, TORCH_NN, TORCH_NN_PARALLEL, TORCH_NN_UTILS,
)
from ddplint.semantic.walk import descendants

# Project modules parsed per file to judge the classes a model is built from; past it, unknown.
MAX_MODULES = 12
# Containers whose members a forward may pick from: whether all are used cannot be read off.
SELECTING_CONTAINERS = ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
# Calls that are not modules, allowed on the right of `self.x = ...` in __init__.
PLAIN_VALUES = frozenset({"int", "float", "bool", "str", "tuple", "list", "dict", "len", "max", "min", "round"})
# Moves and casts that return the same module.
SAME_MODULE = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train"})
# In a forward: anything that can leave a parameter without a gradient on some step.
CUTS_GRADIENT = frozenset({"detach", "detach_", "data", "item", "requires_grad_", "training", "no_grad"})


# The model of the third flagged example, with and without the flag.
_DENSE_NETWORK = """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Dense(nn.Module):
                def __init__(self, channels, growth, n):
                    super().__init__()
                    layers = []
                    for _ in range(n):
                        layers.append(nn.Conv2d(channels, growth, 3, padding=1))
                        layers.append(nn.ReLU())
                        channels = growth
                    self.body = nn.Sequential(*layers)
                    self.blocks = nn.ModuleList([nn.Conv2d(growth, growth, 1) for _ in range(n)])

                def forward(self, x):
                    x = self.body(x)
                    for block in self.blocks:
                        x = block(x)
                    return x

            def build_network(name):
                if name == "dense":
                    network = Dense
                else:
                    network = Dense  # the only network so far
                return network

            def main(args, device):
                Network = build_network(args.network)
                model = Network(3, 16, 4).to(device)"""


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
    `DistributedDataParallel(...)` (the model positional or `module=`) for a model of a project
    class, deriving directly from `nn.Module`, and every parameter of it is used on every step.
    The class is the one built here (`Net(...)`, `Net(...).to(d)`), or the one every return of
    a project helper gives (`model = create_model(cfg)` returning `Net(cfg)` untouched, with no
    attribute set on it; `Network = build_network(name)` returning the class `Net` on every
    path), followed across modules through the program model and judged in its own module. Its
    `__init__` is straight-line code (an `if` that only binds locals to values that call
    nothing, such as `if channel is None: channel = 64`, aside; a `for` loop that only appends
    modules to a local list, aside) that builds only torch.nn layers that own parameters,
    `nn.Parameter`s, `nn.Sequential`s and `nn.ModuleList`s of such (also from a local list or a
    list comprehension), project classes that pass the same test in whatever module they live,
    and what a project helper returns on every path (a torch.nn layer, such a class). The
    forward is straight-line code (no `if`, conditional expression, `and`/`or`, comprehension,
    `detach`, `self.training`, or call of another method; its one loop form runs a ModuleList
    whole, `for layer in self.layers: x = layer(x)`), returns one value (not a tuple or dict
    whose parts a loss may ignore), and every layer and parameter flows into that value; it
    calls no module handed to `__init__` (`self.backbone = backbone`), whose forward is unknown.
    This is DDP015's question (which layers does forward use) asked the other way round, with
    no condition allowed. Not flagged: forwards with branches or loops that may skip a layer,
    auxiliary heads returned beside the output, a layer from a library helper or a helper that
    may return another class, a model changed after it was built, models of other libraries, a
    flag computed at run time; at most MAX_MODULES modules are read for one file, past which it
    stays silent.

    Fix (unsafe): remove the argument. Unsafe because the linter cannot see the loss: a
    returned value that the loss uses only in part still gives every parameter a gradient,
    but a model later changed to skip a layer would then fail with DDP's "Expected to have
    finished reduction in the prior iteration" error, which is what the flag is for.
    """

    code = "DDP024"
    needs_ranks = True
    name = "unneeded-find-unused-parameters"
    frameworks = (Framework.DDP,)
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
            fix_edits=((", find_unused_parameters=True", ""),),
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
            fix_edits=(("\n    find_unused_parameters=True,", ""),),
        ),
        Flagged(
            # Layers built in a loop into a Sequential and a ModuleList run whole; the class
            # comes from a helper whose every return gives it.
            _DENSE_NETWORK + """
                model = DDP(module=model, device_ids=[device], find_unused_parameters=True)
                                                               ^
            """,
            fixed=_DENSE_NETWORK + """
                model = DDP(module=model, device_ids=[device])
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

                def forward(self, x, depth=3):
                    for i, layer in enumerate(self.layers):
                        if i < depth:  # layers past `depth` get no gradient
                            x = layer(x)
                    return x

            class LastOnly(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

                def forward(self, x):
                    for layer in self.layers:
                        y = layer(x)  # only the last layer's output is returned
                    return y

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
                last = DDP(LastOnly(), find_unused_parameters=True)
                flagged = DDP(Stack(), find_unused_parameters=args.find_unused)
                imported = DDP(build_model(args), find_unused_parameters=True)
            """
        ),
        Clean(
            # A layer bound to a local first and never run; a module handed in and called; a
            # layer from a helper that is not the project's; a helper that may return a class
            # whose forward skips a layer.
            """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP
            from timm.layers import create_act_layer

            class Probe(nn.Module):
                def __init__(self):
                    super().__init__()
                    probe = nn.Linear(4, 1)
                    self.probe = probe
                    self.fc = nn.Linear(4, 4)

                def forward(self, x):
                    return self.fc(x)

            class Wrapper(nn.Module):
                def __init__(self, backbone, dim):
                    super().__init__()
                    self.backbone = backbone
                    self.head = nn.Linear(dim, 2)

                def forward(self, x):
                    return self.head(self.backbone(x))

            class Activated(nn.Module):
                def __init__(self, act):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.act = create_act_layer(act)

                def forward(self, x):
                    return self.act(self.fc(x))

            class Gated(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.gate = nn.Linear(4, 4)

                def forward(self, x, gate=False):
                    if gate:
                        x = self.gate(x)
                    return self.fc(x)

            def build_network(name):
                if name == "probe":
                    return Activated
                return Gated

            def main(args, backbone):
                a = DDP(Probe(), find_unused_parameters=True)
                b = DDP(Wrapper(backbone, 8), find_unused_parameters=True)
                c = DDP(Activated("gelu"), find_unused_parameters=True)
                Network = build_network(args.network)
                d = DDP(Network(), find_unused_parameters=True)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._classes: dict[str, list[cst.ClassDef]] = {}
        self._bindings: dict[int | None, dict[str, list]] = {}  # per function: name -> what each binding holds
        # (DDP call, the flag, what the wrapped model holds: see `_held`)
        self._wraps: list[tuple[cst.Call, cst.Arg, tuple]] = []

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
                bindings.setdefault(target.target.value, []).append(self._held(original_node.value, bindings))

    def _held(self, expr: cst.BaseExpression, bindings: dict) -> tuple | None:
        """What `expr` holds: ("call", callee), what calling `callee` gives (`Net(...)`,
        `Net(...).to(d)`, `create_model(cfg)`, `build_network(name)`); ("called", held), what
        calling a local that holds classes gives (`Network(act=act)`); or None (unknown)."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in SAME_MODULE:
            expr = expr.func.value
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in bindings:
            held = self._held(expr.func, bindings)
            return ("called", held) if held is not None else None
        if isinstance(expr, cst.Call):
            callee = dotted_name(expr.func)
            return ("call", callee) if callee is not None else None
        if isinstance(expr, cst.Name):
            # Every binding so far holds the same (`model = Net()`, `model = model.to(d)`).
            seen = set(bindings.get(expr.value, [None]))
            return seen.pop() if len(seen) == 1 else None
        return None

    def visit_Call(self, node: cst.Call) -> None:
        if self.model.qualified(node.func) not in DDP:
            return
        flag = _keyword(node, "find_unused_parameters")
        first = node.args[0] if node.args and node.args[0].keyword is None and not node.args[0].star else None
        module = first or _keyword(node, "module")
        if flag is None or module is None:
            return
        if not (isinstance(flag.value, cst.Name) and flag.value.value == "True"):
            return
        held = self._held(module.value, self._bindings.get(self._function(), {}))
        if held is not None:
            self._wraps.append((node, flag, held))

    def leave_Module(self, original_node: cst.Module) -> None:
        view = self.model.project
        program = view.program if view is not None else None
        proof = _Proof(_Scope(view.module if view is not None else None, self._classes, self.model.qualified), program)
        for call, flag, held in self._wraps:
            objects = proof.objects(held)
            if not objects or not all(proof.static(proof.scope(module), cls, set()) for module, cls in objects):
                continue
            elsewhere = [(module, cls) for module, cls in objects if module != proof.here.module]
            message = None
            if elsewhere and program is not None:
                module, cls = elsewhere[0]
                where = program.place(module, program.summary(module).classes[cls].line)
                message = f"{self.message} (`{cls}` is defined at {where}, where its forward uses every parameter)"
            self.report(flag, message, replace={call: _without(call, flag)})


class _Scope(NamedTuple):
    """One module's classes and what its names refer to (`qualified(expr)`); `module` is the
    program's name for it (None without a project)."""

    module: str | None
    classes: dict[str, list[cst.ClassDef]]
    qualified: Callable[[cst.BaseExpression], str | None]


class _Proof:
    """Whether every parameter of a class is used on every step, judged in the class's own
    module, following project classes and helpers into other modules through the program
    model (at most MAX_MODULES of them; past that, unknown)."""

    def __init__(self, here: _Scope, program) -> None:
        self.here = here
        self._program = program
        self._gives = Gives(program) if program is not None else None
        self._scopes: dict[str | None, _Scope | None] = {here.module: here}

    def scope(self, module: str | None) -> _Scope | None:
        """The scope of a project module, parsed with libcst on first use; None when it cannot be
        read or parsed, or past MAX_MODULES."""
        if module not in self._scopes:
            if len(self._scopes) > MAX_MODULES:
                return None
            text = self._program.read(module)
            try:
                tree = cst.parse_module(text) if text is not None else None
            except (cst.ParserSyntaxError, RecursionError, ValueError):
                tree = None  # a module that does not parse hides its classes: unknown
            classes: dict[str, list[cst.ClassDef]] = {}
            for statement in tree.body if tree is not None else ():
                if isinstance(statement, cst.ClassDef):
                    classes.setdefault(statement.name.value, []).append(statement)

            def qualified(expr: cst.BaseExpression, module=module) -> str | None:
                name = dotted_name(expr)
                return self._program.qualify(module, name) if name else None

            self._scopes[module] = _Scope(module, classes, qualified) if tree is not None else None
        return self._scopes[module]

    # -- what a call gives ---------------------------------------------------------------------

    def gives(self, scope: _Scope, callee: str) -> list[Made] | None:
        """What calling `callee` in `scope` gives (ddplint.model.program.Program.gives); without
        a program, an object of a class of this module only."""
        if self._program is not None and scope.module is not None:
            return self._gives.gives(scope.module, callee)
        return [Made("object", scope.module, callee)] if callee in scope.classes else None

    def objects(self, held: tuple) -> list[tuple[str | None, str]] | None:
        """The (module, class) of every object the wrapped model may be (see `_held`), or None
        when it may be anything else."""
        kind, inner = held
        if kind == "call":
            given = self.gives(self.here, inner)
        else:
            made = self.gives(self.here, inner[1]) if inner[0] == "call" else None
            classes = made is not None and all(item.kind == "class" for item in made)
            given = [Made("object", item.module, item.name) for item in made] if classes else None  # type: ignore[union-attr]
        if not given or any(item.kind != "object" for item in given):
            return None
        return [(item.module, item.name) for item in given]

    # -- is every parameter used on every step? ------------------------------------------------

    def static(self, scope: _Scope | None, name: str, seen: set) -> bool:
        classes = scope.classes.get(name, []) if scope is not None else []
        if len(classes) != 1 or (scope.module, name) in seen:  # type: ignore[union-attr]
            return False
        seen = seen | {(scope.module, name)}  # type: ignore[union-attr]
        cls = classes[0]
        if len(cls.bases) != 1 or cls.keywords or scope.qualified(cls.bases[0].value) not in NN_MODULE:  # type: ignore[union-attr]
            return False
        methods = {
            s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)  # type: ignore[union-attr]
        }
        init, forward = methods.get("__init__"), methods.get("forward")
        if init is None or forward is None or init.decorators or forward.decorators:
            return False
        found = self._owned(scope, init, seen)  # type: ignore[arg-type]
        if found is None:
            return False
        kinds = found
        self_name = _self_name(forward)
        if any(_calls_attribute(forward, self_name, name) for name, kind in kinds.items() if kind == "given"):
            return False  # a module handed to __init__, called: its forward is unknown
        listed = {name for name, kind in kinds.items() if kind == "listed"}
        contributing = _contributing(forward, self_name, set(kinds), listed)
        owned = {name for name, kind in kinds.items() if kind in ("owns", "listed")}
        return contributing is not None and owned <= contributing

    def _owned(self, scope: _Scope, init: cst.FunctionDef, seen: set) -> dict[str, str] | None:
        """What each attribute of `self` that __init__ assigns holds ("owns", "plain", "given":
        a value handed in, "listed": a ModuleList), if __init__ is straight-line (loops that
        only fill local lists aside) and builds nothing whose use cannot be judged; else None."""
        self_name = _self_name(init)
        kinds: dict[str, str] = {}
        local = _Locals()
        for statement in _body(init):
            if isinstance(statement, cst.If) and _sets_locals_only(statement):
                continue  # `if channel is None: channel = [64]`: a default, no module either way
            if isinstance(statement, cst.For) and statement.orelse is None:
                for _ in range(2):  # twice: what one pass binds, the next may append
                    local.bind(statement.target, None)
                    if not all(self._fills(scope, small, seen, local, None) for small in _smalls(statement.body.body)):
                        return None
                continue
            if not isinstance(statement, cst.SimpleStatementLine):
                return None
            if not all(self._fills(scope, small, seen, local, (self_name, kinds)) for small in statement.body):
                return None
        return kinds

    def _fills(self, scope: _Scope, small, seen: set, local: "_Locals", attributes: tuple | None) -> bool:
        """Reads one statement of __init__ into `local` and, where `attributes` is (self's name,
        kinds) and not None (outside a loop), into the attributes' kinds. False: unknown."""
        if isinstance(small, cst.Expr):
            if _mentions(small, {"add_module", "register_parameter", "register_module", "setattr"}):
                return False
            return local.fill(small.value, lambda value: self._element_kind(scope, value, seen, local))
        if isinstance(small, cst.AugAssign):
            if isinstance(small.target, cst.Name) and small.target.value in local.lists:
                return local.fill_from(small.target.value, small.value, lambda v: self._element_kind(scope, v, seen, local))
            return isinstance(small.target, cst.Name) and not _calls(small.value)
        if isinstance(small, cst.Pass):
            return True
        if not isinstance(small, cst.Assign):
            return False
        for target in small.targets:
            attribute = target.target
            if isinstance(attribute, cst.Name):
                local.bind(attribute, self._value_kind(scope, small.value, seen, local), small.value)
                continue
            if attributes is None or not (isinstance(attribute, cst.Attribute) and dotted_name(attribute.value) == attributes[0]):
                return False
            kind = self._value_kind(scope, small.value, seen, local)
            if kind is None:
                return False
            handed = not (isinstance(small.value, cst.Name) and small.value.value in local.names)
            if kind == "plain" and handed and not _calls(small.value) and not isinstance(small.value, cst.BaseNumber):
                kind = "given"  # `self.x = x`: plain unless the forward calls it
            attributes[1][attribute.attr.value] = kind
        return True

    def _element_kind(self, scope: _Scope, value: cst.BaseExpression, seen: set, local: "_Locals") -> str | None:
        """The kind of a module put in a container: a call judged as `_value_kind`, a local
        bound to one; anything else (a module handed in) is unknown."""
        if isinstance(value, cst.Name):
            return local.names.get(value.value)
        return self._value_kind(scope, value, seen, local) if isinstance(value, cst.Call) else None

    def _value_kind(self, scope: _Scope, value: cst.BaseExpression, seen: set, local: "_Locals") -> str | None:
        """"owns" (a layer with parameters, a Parameter, a proven class), "listed" (a ModuleList
        of such), "plain" (no parameters), None (unknown)."""
        if isinstance(value, cst.Name) and value.value in local.names:
            return local.names[value.value]
        if not isinstance(value, cst.Call):
            return "plain" if not _calls(value) else None
        qualified = scope.qualified(value.func)
        if qualified is None and isinstance(value.func, cst.Name) and value.func.value in PLAIN_VALUES:
            return "plain"
        if qualified is not None and (qualified in PARAMETER or qualified.startswith("math.") or qualified in TORCH_NN):
            return self._library_kind(qualified, value, lambda v: self._element_kind(scope, v, seen, local), local)
        callee = dotted_name(value.func)
        given = self.gives(scope, callee) if callee is not None else None
        kinds = []
        for made in given or [Made("unknown", None, "")]:
            if made.kind == "object":
                kinds.append("owns" if self.static(self.scope(made.module), made.name, seen) else None)
            elif made.kind == "call" and made.module is not None:  # a library call a helper returns: judged without its arguments
                kinds.append(self._library_kind(self._program.qualify(made.module, made.name) or "", None, None, local))
            else:
                kinds.append(None)
        return None if None in kinds else "owns" if "owns" in kinds else "plain"

    @staticmethod
    def _library_kind(qualified: str, call: cst.Call | None, element, local: "_Locals") -> str | None:
        if qualified in PARAMETER:
            return "owns"
        if qualified.startswith("math."):
            return "plain"
        if qualified not in TORCH_NN or qualified.startswith((TORCH_NN_PARALLEL.name, TORCH_NN_UTILS.name)):
            return None
        last = qualified.rpartition(".")[2]
        if last in ("Sequential", "ModuleList"):
            if call is None or any(arg.keyword is not None for arg in call.args):
                return None
            kinds = [kind for arg in call.args for kind in local.members(arg, element, whole=last == "ModuleList")]
            return None if None in kinds else "owns" if last == "Sequential" else "listed"
        if last.startswith(SELECTING_CONTAINERS):
            return None
        return "owns" if last.startswith(PARAMETERISED_LAYERS) else "plain"


class _Locals:
    """The locals of an __init__: the kind each name holds, and the kinds of the modules each
    local list holds (`layers = []`, `layers.append(Block(c))` in a loop, `layers += [...]`)."""

    def __init__(self) -> None:
        self.names: dict[str, str | None] = {}
        self.lists: dict[str, list[str | None]] = {}

    def bind(self, target: cst.BaseExpression, kind: str | None, value: cst.BaseExpression | None = None) -> None:
        for name in _target_names(target):
            self.names[name] = kind
            self.lists.pop(name, None)
        if isinstance(target, cst.Name) and isinstance(value, cst.List) and not value.elements:
            self.lists[target.value] = []

    def fill(self, expr: cst.BaseExpression, element) -> bool:
        """`layers.append(x)`, `layers.extend([...])`; any other mention of a list leaves it
        unknown. False for a call the walk cannot judge harmless."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, cst.Name):
            name, method = expr.func.value.value, expr.func.attr.value
            if name in self.lists and method in ("append", "extend") and len(expr.args) == 1:
                if method == "append":
                    self.lists[name].append(element(expr.args[0].value))
                    return True
                return self.fill_from(name, expr.args[0].value, element)
        self._spoil(expr)
        return True

    def fill_from(self, name: str, value: cst.BaseExpression, element) -> bool:
        self.lists[name] += self.members(cst.Arg(value=value, star="*"), element, whole=False)
        return True

    def members(self, arg: cst.Arg, element, whole: bool) -> list[str | None]:
        """The kinds of the modules an argument puts in a container: `*layers`, `[a, b]`,
        `*[Block(c) for c in channels]` (starred, or whole for a ModuleList), one module."""
        value = arg.value
        if arg.star == "*" or whole:
            if isinstance(value, cst.Name):
                return list(self.lists.get(value.value, [None]))
            if isinstance(value, (cst.List, cst.Tuple)):
                return [element(e.value) if not isinstance(e, cst.StarredElement) else None for e in value.elements]
            if isinstance(value, cst.ListComp) and isinstance(value.elt, cst.Call):
                return [element(value.elt)]
            return [None]
        return [None] if arg.star else [element(value)]

    def _spoil(self, expr: cst.BaseExpression) -> None:
        for node in descendants(expr):
            if isinstance(node, cst.Name) and node.value in self.lists:
                self.lists[node.value].append(None)


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


def _contributing(forward: cst.FunctionDef, self_name: str | None, assigned: set[str], listed: set[str]) -> set[str] | None:
    """The attributes of `self` that flow into the value a straight-line forward returns;
    None when the forward is not straight-line or returns several values. The one loop allowed
    runs a ModuleList of `listed` whole, each layer on what the last gave (`for layer in
    self.layers: x = layer(x)`); a ModuleList used any other way is unknown."""
    if self_name is None:
        return None
    steps: list[tuple[set[str], cst.BaseExpression, set[str]]] = []  # (assigned names, value, attributes run whole)
    returned: cst.BaseExpression | None = None
    looped: set[int] = set()  # the `self.layers` of the loops above
    for index, statement in enumerate(_body(forward)):
        loop = _full_loop(statement, self_name, listed)
        if loop is not None:
            looped.add(id(statement.iter))  # type: ignore[attr-defined]
            steps.append(loop)
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            return None
        for small in statement.body:
            if returned is not None:
                return None
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)) and index == 0:
                continue
            if isinstance(small, cst.Assign) and all(_plain_target(t.target) for t in small.targets):
                steps.append(({n for t in small.targets for n in _target_names(t.target)}, small.value, set()))
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                steps.append(({small.target.value}, cst.BinaryOperation(small.target, cst.Add(), small.value), set()))
            elif isinstance(small, cst.Return) and small.value is not None:
                returned = small.value
            else:
                return None
    if returned is None or isinstance(returned, (cst.Tuple, cst.List, cst.Dict, cst.Set)):
        return None
    for node in descendants(forward):
        if isinstance(node, cst.Attribute) and dotted_name(node.value) == self_name and node.attr.value in listed:
            if id(node) not in looped:
                return None  # `self.layers[0](x)`: which layers run cannot be read off
    for _, value, _ in steps + [(set(), returned, set())]:
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

    def absorb(value: cst.BaseExpression, whole: set[str]) -> None:
        contributing.update(whole)
        for node in descendants(value):
            if isinstance(node, cst.Name):
                live.add(node.value)
            if isinstance(node, cst.Attribute) and dotted_name(node.value) == self_name:
                contributing.add(node.attr.value)

    absorb(returned, set())
    for targets, value, whole in reversed(steps):
        if targets & live:
            absorb(value, whole)
    return contributing


def _full_loop(statement: cst.BaseStatement, self_name: str, listed: set[str]) -> tuple | None:
    """({x}, the body's value, {"layers"}) for `for layer in self.layers: x = layer(x)`: a loop
    over a ModuleList whose one statement calls the layer on what the previous one gave, so that
    every layer flows into `x`; None for any other statement."""
    if not isinstance(statement, cst.For) or statement.orelse is not None or statement.asynchronous is not None:
        return None
    attribute = statement.iter
    if not (isinstance(attribute, cst.Attribute) and dotted_name(attribute.value) == self_name and attribute.attr.value in listed):
        return None
    if not isinstance(statement.target, cst.Name) or not isinstance(statement.body, cst.IndentedBlock):
        return None
    smalls = list(_smalls(statement.body.body))
    step = smalls[0] if len(smalls) == 1 else None
    if not (isinstance(step, cst.Assign) and len(step.targets) == 1 and isinstance(step.targets[0].target, cst.Name)):
        return None
    carried, layer = step.targets[0].target.value, statement.target.value
    calls_layer = any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == layer for n in descendants(step.value))
    names = {n.value for n in descendants(step.value) if isinstance(n, cst.Name)}
    if not calls_layer or carried not in names or carried == layer:
        return None
    return {carried}, step.value, {attribute.attr.value}


def _smalls(body):
    """The small statements of a block's lines; a compound statement stands for itself."""
    for statement in body:
        yield from statement.body if isinstance(statement, cst.SimpleStatementLine) else (statement,)


def _calls_attribute(function: cst.FunctionDef, self_name: str | None, name: str) -> bool:
    """Whether `function` calls `self.<name>(...)` or a method of it."""
    target = f"{self_name}.{name}"
    for node in descendants(function):
        if isinstance(node, cst.Call):
            func = node.func
            if dotted_name(func) == target or (isinstance(func, cst.Attribute) and dotted_name(func.value) == target):
                return True
    return False


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


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

# -- questions only this rule asks of the program model -------------------------------------

MAX_GIVES, MAX_GIVES_DEPTH = 8, 3  # classes one call may give, and helpers followed for them


@dataclass(frozen=True)
class Made:
    """What a call gives, by class (`Program.gives`): an object of the project class `cls` of
    `module` (`kind` "object"), the class itself handed back ("class"), or the result of a
    call of no project function or class, `callee` as written in `module` ("call")."""

    kind: str
    module: str
    name: str


class Gives:
    """What calling a name gives, by class, through the project's functions (`gives`)."""

    def __init__(self, program) -> None:
        self.program = program
        self._given: dict[tuple[str, str], list | None] = {}

    def _returns(self, module: str, key: str) -> list | None:
        """What each return of a function gives (ddplint.model.summary.gives); None when it cannot
        be read. Worked out on demand (few questions need it), from the module's text."""
        if (module, key) not in self._given:
            tree = self.program.tree(module)
            node = _function_node(tree, key) if tree is not None else None
            self._given[(module, key)] = gives(node) if node is not None else None
        return self._given[(module, key)]

    def gives(self, module: str, callee: str, cls: str | None = None, depth: int = 0) -> list[Made] | None:
        """What calling `callee` in `module` (inside class `cls`) gives, by class, every way it
        may go (`Made`); None when some return of a function on the way is unknown (ddplint.model.
        summary.gives), past MAX_GIVES alternatives or MAX_GIVES_DEPTH helpers, or where a
        summary cannot be read."""
        made = self.program.class_of(module, callee)
        if made is not None:
            return [Made("object", *made)]
        target = self.program.resolve(module, callee, cls) if depth <= MAX_GIVES_DEPTH else None
        if target is None:
            qualified = self.program.qualify(module, callee)
            local = self.program.summary(module) is None or callee.partition(".")[0] in self.program.summary(module).functions  # type: ignore[union-attr]
            project = local or (qualified is not None and self.program.split(qualified, module) is not None)
            return None if project or depth > MAX_GIVES_DEPTH else [Made("call", module, callee)]
        record = self.program.summary(target.module).functions[target.key]  # type: ignore[union-attr]
        returns = None if target.bound else self._returns(target.module, target.key)
        if returns is None or None in returns:
            return None  # a method (its object may hand back anything), or a return unknown
        found: list[Made] = []
        for given in (given for returned in returns for given in returned):
            if given.class_object:
                made = self.program.class_of(target.module, given.name)
                more = [Made("class", *made)] if made is not None else None
            else:
                more = self.gives(target.module, given.name, record.cls, depth + 1)
            if more is None:
                return None
            found += [item for item in more if item not in found]
        return found if len(found) <= MAX_GIVES else None


def _function_node(tree, key: str):
    """The definition of the function a summary keys `key` (`name`, `Class.name`), or None."""
    return next((node for node, cls in definitions(tree.body) if not isinstance(node, ast.ClassDef)
                 and (f"{cls}.{node.name}" if cls else node.name) == key), None)


# Calls that add a module or parameter to an object after it was built.
_REGISTERS = frozenset(("add_module", "register_module", "register_parameter", "register_buffer", "setattr"))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Given:
    """What a `return` gives: the class object a dotted `name` names (`return SRv1`), or what
    calling `name` gives (`return Net(cfg)`, moves such as `.to(device)` aside)."""

    name: str
    class_object: bool


def gives(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[list[Given] | None]:
    """What each `return` of a function gives, by class (the Givens it may give), or None where unknown. A local
    returned gives whatever every binding of it in the function gives, whichever path runs
    (`Network = SRv1` in each branch; `model = model.cuda()` keeps it); it is unknown when it
    is also bound otherwise (a parameter, a loop, an unpacking, an import, a nested def), when its attributes
    are set or a module is registered on it, or when it names a class called through another
    local. A generator, a bare `return` and an end reached without one give None."""
    inside = list(walk(node))
    bound: dict[str, list] = {a.arg: [None] for a in walk(node.args) if isinstance(a, ast.arg)}
    plain: set[int] = set()
    for n in inside:
        if isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) for t in n.targets):
            for target in n.targets:
                plain.add(id(target))
                given = _given(n.value, target.id)
                if given != "same":
                    bound.setdefault(target.id, []).append(given)
    for n in inside:
        changed: list[str] = []
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in plain:
            changed = [n.id]
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            changed = [(alias.asname or alias.name).partition(".")[0] for alias in n.names]
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            changed = list(n.names)
        elif isinstance(n, (*_FUNCTIONS, ast.ClassDef)) and n is not node:
            changed = [n.name]
        elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load):
            changed = [dotted(n.value) or ""]
        elif isinstance(n, ast.Call) and (dotted(n.func) or "").rpartition(".")[2] in _REGISTERS:
            receiver = n.args[0] if isinstance(n.func, ast.Name) and n.args else getattr(n.func, "value", None)
            changed = [dotted(receiver) or ""] if receiver is not None else []
        for name in changed:
            bound.setdefault(name.partition(".")[0], []).append(None)

    def returned(expr: ast.expr | None) -> list[Given] | None:
        given = _given(expr, None) if expr is not None else None
        if not isinstance(given, Given):
            return None
        head = given.name.partition(".")[0]
        if head not in bound:
            return [given]
        held = bound[head]
        if given.name != head or None in held or any(h.name.partition(".")[0] in bound for h in held):
            return None
        if given.class_object:
            return held
        # `Network(...)` where the local names classes: objects of them
        return [Given(h.name, False) for h in held] if all(h.class_object for h in held) else None

    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in inside):
        return [None]
    found = [returned(n.value) for n in inside if isinstance(n, ast.Return)]
    return found if isinstance(node.body[-1], (ast.Return, ast.Raise)) else [*found, None]


def _given(expr: ast.expr, target: str | None) -> Given | str | None:
    """What a dotted name, or a call of one (moves such as `.to(device)` aside), gives; "same"
    for `target` moved (`model = model.cuda()`); None otherwise."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in SAME_VALUE_METHODS:
        expr = expr.func.value
    if isinstance(expr, ast.Name) and expr.id == target:
        return "same"
    if isinstance(expr, ast.Call):
        callee = dotted(expr.func)
        return Given(callee, False) if callee else None
    name = dotted(expr)
    return Given(name, True) if name else None
