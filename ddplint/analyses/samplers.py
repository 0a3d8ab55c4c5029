"""Where samplers and DataLoaders are built, stored, passed and iterated in one module.

DDP003, DDP006 and DDP007 need data flow, not patterns: a `DistributedSampler` built in one
place reaches a DataLoader somewhere else, which is iterated in a function that an epoch loop
calls. `LoaderFlow` records the few facts this needs while the engine walks the tree once
(constructions, assignments, returns, `for` and `while` loops, calls of same-module functions,
`set_epoch` calls), each with the scope its names resolve in, and answers the questions in
`leave_Module`.
`SamplerClasses` records what the methods of each class read, write and call, for DDP006.

A value is named by a `Ref`: (the scope that binds the head name, the dotted path), so
`sampler` in `main` and `sampler` in `build` are different values; `self.x` is keyed by its
class; an inline call by its node; a function's return value by the function.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from ddplint.semantic.edits import argument_for, has_star_arguments
from ddplint.core.fixpoint import fixed_point, reachable
from ddplint.semantic.model import Analysis, SemanticModel, Scope, dotted_name
from ddplint.semantic.walk import descendants
from ddplint.core.torch_api import (
    BATCH_SAMPLER, DATALOADER, DEEPSPEED_INITIALIZE, DISTRIBUTED_SAMPLER, GET_RANK, GET_WORLD_SIZE, LIBRARY_LOADERS, LOADER_PLUGINS,
    GRAPH_LOADERS, PLUGIN_LOADER, PLUGIN_LOADER_SHUFFLE, is_dataset_set_epoch,
)

Ref = tuple[object, str]

# Attributes that carry a rank or world size; `rank`/`num_replicas` are DistributedSampler's own.
RANK_ATTRIBUTES = frozenset({"rank", "num_replicas", "world_size", "global_rank", "replicas"})
_MAX_CALL_DEPTH = 3
_LOADER_ARGUMENTS = ("dataset", "sampler", "batch_sampler")  # what a DataLoader draws from


@dataclass(eq=False)
class Function:
    """A `def` (or the module's own top-level code, when `node` is None), with `key` the name the
    project model gives it (`name`, `Class.name`)."""

    node: cst.FunctionDef | None
    scope: Scope
    self_class: cst.ClassDef | None
    params: list[str]
    key: str | None = None
    loops: list[Loop] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    set_epochs: list[SetEpoch] = field(default_factory=list)


@dataclass(eq=False)
class Loop:
    """A loop, a comprehension, or a call `iter(x)` (`pull`): each starts a pass over what it iterates."""

    node: cst.For | cst.While | cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp | cst.Call
    function: Function
    outer: tuple[Loop, ...]  # enclosing loops of the same function, outermost first
    iterated: set[Ref]
    pull: bool = False


@dataclass(frozen=True)
class Pass:
    """A pass over a loader inside an epoch loop: the loop (or `iter()` call) that makes it in
    this module, or the function of another module the epoch loop hands the loader to, which
    makes one (`elsewhere`, a ddplint.model.loaders.OnePass)."""

    loop: Loop | None
    elsewhere: object = None


@dataclass(eq=False)
class EpochLoop:
    """A loop around passes over a loader: `names`, the loader's names there; `passes`, the
    passes it makes (ddplint.analyses.samplers.Pass)."""

    loop: Loop
    names: set[Ref]
    passes: list[Pass]


@dataclass(eq=False)
class CallSite:
    """A call of a same-module function or `self` method, with the refs it passes (a loader
    handed to a helper that iterates it)."""

    callee: tuple
    function: Function
    loops: tuple[Loop, ...]
    positional: list[Ref | None]
    keywords: dict[str, Ref | None]
    node: cst.Call | None = None  # the call itself: what it returns may be combined after it


@dataclass(eq=False)
class Foreign:
    """A call of another project module's function, given names (`positional` stops at a star)."""

    function: Function
    loops: tuple[Loop, ...]
    qualified: str
    positional: list[Ref | None]
    keywords: dict[str, Ref | None]


@dataclass(eq=False)
class SetEpoch:
    receiver: Ref | None
    function: Function
    loops: tuple[Loop, ...]
    node: cst.Call | None = None


@dataclass(eq=False)
class Construction:
    # "sampler", "batch_sampler", "loader", or "padding_sampler": a project class (a sampler or a
    # batch sampler) whose `__iter__` pads its indices with its own start as DistributedSampler
    # does; its arguments are read by keyword only (its positions are its own)
    kind: str
    node: cst.Call
    function: Function
    order: int
    bound: list[Ref]
    dataset: Ref | None = None
    shuffle: cst.Arg | None = None
    sampler: Ref | None = None  # a loader's `sampler=`, a batch sampler's own sampler
    batch_sampler: Ref | None = None
    star_kwargs: bool = False
    draws: bool = False  # a loader given `sampler=` or `batch_sampler=` other than the literal None
    loops: tuple[Loop, ...] = ()  # the loops open where it is made
    # A sampler made by a function of another project module: where it is built there.
    elsewhere: object = None  # the ddplint.model.records.Place of a sampler built in another module
    # Built inside a library object's loader maker (`plugin.prepare_dataloader(...)`,
    # `deepspeed.initialize(training_data=...)`), whose arguments are not the sampler's own (its
    # `drop_last` is the DataLoader's).
    by_plugin: bool = False
    # A loader's attribute that holds the sampler it draws from: a DataLoader's `sampler`, a
    # DeepSpeedDataLoader's `data_sampler` (it has no `sampler` nor `batch_sampler`)
    sampler_attribute: str = ".sampler"
    drops_last: bool = False  # made by another module's builder with drop_last=True: it pads nothing
    # Made by another module's builder only on some paths (ddplint.model.loaders.Built.optional):
    # what names it here (its loader's `sampler`) may be None or another sampler in other runs.
    optional: bool = False
    # The parameters of its function whose truth the `if`s around it test: (name, True) under
    # `if name:`, (name, False) under `if not name:` (`if distributed: return DistributedSampler(...)`)
    guards: tuple[tuple[str, bool], ...] = ()
    # Made by another module's builder that hands its constructor the epoch its order is seeded
    # from (ddplint.model.loaders.Built.epoch_given): made anew, it starts at that epoch.
    epoch_given: bool = False

    def _shuffle_is(self, literal: str) -> bool:
        value = self.shuffle.value if self.shuffle is not None else None
        return isinstance(value, cst.Name) and value.value == literal

    @property
    def shuffle_is_false(self) -> bool:
        return self._shuffle_is("False")

    @property
    def shuffle_is_true(self) -> bool:
        return self._shuffle_is("True")

    @property
    def dataset_built_inline(self) -> bool:
        """The dataset is constructed in the call itself: no other code can share it."""
        return self.dataset is not None and _is_call_ref(self.dataset) and self.dataset[0][0] == "call"


@dataclass(eq=False)
class Endless:
    """A call of another project module's generator that re-iterates its argument forever
    (`cycle(loader)`)."""

    node: cst.Call
    function: Function
    argument: Ref | None
    name: str  # the generator's
    where: object  # its endless loop (a ddplint.model.records.Place: "utils.py:2")


def _is_builtin(model: SemanticModel, func: cst.BaseExpression, name: str) -> bool:
    return isinstance(func, cst.Name) and func.value == name and model.binding_scope(name) is None


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _call_ref(node: cst.Call) -> Ref:
    return (("call", id(node)), "")


def _is_call_ref(ref: Ref) -> bool:
    return isinstance(ref[0], tuple) and ref[0][0] in ("call", "ret")


class LoaderFlow(Analysis):
    """Facts about samplers and loaders in one module, gathered during the walk."""

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self.module = Function(None, model.module_scope, None, [])
        self.functions: dict[tuple, Function] = {}
        self.constructions: list[Construction] = []
        self.aliases: list[tuple[Ref, Ref]] = []  # (target, source)
        self.assignments: Counter[Ref] = Counter()  # how often each name is assigned
        self.returns: list[tuple[tuple, str, Ref]] = []  # (function key, tuple index or "", value)
        # What a call of a same-module function returns is bound to: (the name, or the inline
        # call's own ref, the callee's key, the call), kept apart from `aliases` because a call
        # that turns off the path a value is made on (`distributed=False`, `shuffle=False`) does
        # not get that value (`_rules_out`).
        self.results: list[tuple[Ref, tuple, cst.Call]] = []
        self.endless: list[Endless] = []
        # Calls of another module's function given a name (a pass over a loader there:
        # `train_one_epoch(model, loader)`; a set_epoch there: `shuffle_dataset(loader, epoch)`).
        self._elsewhere: list[Foreign] = []
        self.passes: dict[int, str] = {}  # by id of an epoch loop: the other module's function iterating the loader
        self._records: dict[int, Function] = {}  # by id of the `def` node
        self._loops: dict[int, Loop] = {}  # by id of the loop node
        self._bound: dict[int, list[Ref]] = {}
        self._made: dict[tuple[int | None, str], str | None] = {}  # (function, local) -> the call that made it
        self.bound_in: dict[Ref, list[tuple[Loop, ...]]] = {}  # the loops open at each binding of a name
        # (function, local) of a library's loader-making object (torch_api.LOADER_PLUGINS): bound
        # to a call of one of its classes, or a parameter annotated with one
        self._plugins: set[tuple[int | None, str]] = set()
        self._wrapping: dict[Ref, set[Ref]] = {}  # `with tqdm(loader) as bar`: bar -> what it iterates

    # -- resolving expressions at the current point of the traversal -----------------------

    @property
    def function(self) -> Function:
        frame = self.model.function
        return self.module if frame is None else self._records[id(frame.node)]

    @property
    def open_loops(self) -> tuple[Loop, ...]:
        return tuple(self._loops[id(node)] for node in self.model.loops)

    def ref(self, expr: cst.BaseExpression | None) -> Ref | None:
        if expr is None:
            return None
        kind = type(expr)  # asked of most expressions: `type(...) is`, not ABCMeta's isinstance
        if kind is cst.Call:
            return _call_ref(expr)  # type: ignore[arg-type]
        if kind is cst.IfExp and _is_none(expr.orelse) != _is_none(expr.body):  # type: ignore[attr-defined]
            return self.ref(expr.orelse if _is_none(expr.body) else expr.body)  # `DistributedSampler(ds) if dist else None`
        path = dotted_name(expr)
        if path is None:
            return None
        head = path.partition(".")[0]
        self_class = self.function.self_class
        if head == "self" and self_class is not None:
            return (("class", id(self_class)), path)
        # A name bound nowhere in this file is a global (a star import, a builtin).
        return (self.model.binding_scope(head) or self.model.module_scope, path)

    def _callee(self, func: cst.BaseExpression) -> tuple | None:
        if isinstance(func, cst.Name):
            if self.model.binding_scope(func.value) is self.model.module_scope:
                return ("func", func.value)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            self_class = self.function.self_class
            if func.value.value == "self" and self_class is not None:
                return ("method", id(self_class), func.attr.value)
        return None

    @staticmethod
    def _key(frame) -> tuple | None:
        """How same-module calls name the function of `frame`; None for a nested function."""
        container = frame.parent
        if container.parent is None:
            return ("func", frame.node.name.value)
        if container.is_class:
            return ("method", id(container.node), frame.node.name.value)
        return None

    # -- traversal hooks --------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frame = self.model.frame
        params = node.params
        names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
        function = self._records[id(node)] = Function(node, frame.scope, frame.self_class, names, frame.key)
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.annotation is not None and self.model.qualified(param.annotation.annotation) in LOADER_PLUGINS:
                self._plugins.add((id(node), param.name.value))
        key = self._key(frame)
        if key is not None:
            self.functions[key] = function

    def visit_For(self, node: cst.For) -> None:
        outer = tuple(self._loops[id(open_node)] for open_node in self.model.loops[:-1])
        self._open_loop(node, outer, self._iterated(node.iter))
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for target in targets:  # what the loop binds is bound in it
            ref = self.ref(target.value if isinstance(target, cst.Element) else target)
            if ref is not None:
                self.bound_in.setdefault(ref, []).append((*outer, self._loops[id(node)]))

    def visit_While(self, node: cst.While) -> None:
        outer = tuple(self._loops[id(open_node)] for open_node in self.model.loops[:-1])
        self._open_loop(node, outer, set())

    def visit_ListComp(self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> None:
        """`preds = [model(x) for x, _ in loader]`: a loop over the loader inside the loops open here."""
        self._open_loop(node, self.open_loops, self._iterated(node.for_in.iter))

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def _iterated(self, expr: cst.BaseExpression) -> set[Ref]:
        iterated: set[Ref] = set()
        pending = [expr]
        while pending:  # `loader`, `enumerate(loader)`, `tqdm(enumerate(loader), ...)`
            expr = pending.pop()
            ref = self.ref(expr)
            if ref is not None:
                iterated.add(ref)
                iterated |= self._wrapping.get(ref, set())
            if isinstance(expr, cst.Call):
                pending.extend(arg.value for arg in expr.args if arg.keyword is None and not arg.star)
        return iterated

    def _open_loop(self, node: cst.CSTNode, outer: tuple[Loop, ...], iterated: set[Ref]) -> None:
        function = self.function
        loop = self._loops[id(node)] = Loop(node, function, outer, iterated)
        function.loops.append(loop)

    def visit_Assign(self, node: cst.Assign) -> None:
        # `logger = utils.MetricLogger()`: its methods are found through the class it made
        value = node.value
        maker = dotted_name(value.func) if isinstance(value, cst.Call) else None
        frame = self.model.function
        branches = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        plugin = any(isinstance(b, cst.Call) and self.model.qualified(b.func) in LOADER_PLUGINS for b in branches)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._made[(id(frame.node) if frame else None, target.target.value)] = maker
                if plugin:
                    self._plugins.add((id(frame.node) if frame else None, target.target.value))
        self.assign([t.target for t in node.targets], node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.assign([node.target], node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        """`with tqdm(loader, desc=...) as bar:` binds a library's wrapper over the loader, and a
        pass over `bar` is one over `loader` (as `for x in tqdm(loader)` is)."""
        item, target = node.item, node.asname.name if node.asname is not None else None
        if not isinstance(item, cst.Call) or not isinstance(target, cst.Name) or self.model.qualified(item.func) is None:
            return  # not an imported wrapper (a function of this module may do anything with its argument)
        target_ref = self.ref(target)
        if target_ref is not None:
            self._wrapping[target_ref] = self._iterated(item)

    def visit_Return(self, node: cst.Return) -> None:
        self.returned(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        self.call(node)

    def assign(self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None) -> None:
        if value is None:
            return
        for target in targets:
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call):
                # The elements of the call's value (a helper of another module may return a
                # loader and its sampler), and of what a same-module function returns.
                callee = self._callee(value.func)
                results = [("call", id(value))] + ([("ret", callee)] if callee is not None else [])
                for index, element in enumerate(target.elements):
                    element_ref = self.ref(element.value)
                    self.assignments[element_ref] += 1
                    if element_ref is not None:
                        self.aliases += [(element_ref, (result, str(index))) for result in results]
                continue
            target_ref = self.ref(target)
            if target_ref is None or isinstance(target, cst.Call):
                continue
            self.bound_in.setdefault(target_ref, []).append(self.open_loops)
            self.assignments[target_ref] += 2 if isinstance(value, cst.IfExp) else 1
            branches = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
            for branch in branches:
                if isinstance(branch, cst.Call):
                    self._bound.setdefault(id(branch), []).append(target_ref)
                    callee = self._callee(branch.func)
                    if callee is not None:
                        self.results.append((target_ref, callee, branch))
                    else:
                        handed = self._handed_back(branch)
                        if handed is not None:
                            self.aliases.append((target_ref, handed))
                else:
                    source = self.ref(branch)
                    if source is not None:
                        self.aliases.append((target_ref, source))

    def place(self) -> tuple[str | None, str | None]:
        """(the current function's key, its class's name), as the project model names them."""
        frame, self_class = self.model.function, self.model.frame.self_class
        return (frame.key if frame else None), (self_class.name.value if self_class else None)

    def project_callee(self, func: cst.BaseExpression) -> str | None:
        """The dotted name a call of `func` has for the project model; `Maker().method` where the
        receiver is a local bound to a call (`logger = utils.MetricLogger()` ... `logger.sync()`)."""
        callee = dotted_name(func)
        if callee is None or "." not in callee:
            return callee
        head, _, rest = callee.partition(".")
        frame = self.model.function
        maker = self._made.get((id(frame.node) if frame else None, head))
        return f"{maker}().{rest}" if maker else callee

    def _handed_back(self, call: cst.Call) -> Ref | None:
        """The argument a call of a project function or method gets back unchanged
        (`loader = backend.wrap(loader)`, `def wrap(self, loader): return loader`)."""
        project = self.model.project
        callee = self.project_callee(call.func) if project is not None else None
        if callee is None or any(a.star for a in call.args):
            return None
        index = project.hands_back(*self.place(), callee)  # type: ignore[union-attr]
        positional = [a for a in call.args if a.keyword is None]
        return self.ref(positional[index].value) if index is not None and index < len(positional) else None

    def returned(self, value: cst.BaseExpression | None) -> None:
        frame = self.model.function
        if value is None or frame is None:
            return
        key = self._key(frame)
        if key is None:
            return
        elements = list(enumerate(e.value for e in value.elements)) if isinstance(value, cst.Tuple) else [(None, value)]
        for index, element in elements:
            ref = self.ref(element)
            if ref is not None:
                self.returns.append((key, "" if index is None else str(index), ref))

    def call(self, node: cst.Call) -> None:
        function = self.function
        loops = self.open_loops
        qualified = self.model.qualified(node.func)
        if any(qualified in made for made in (DISTRIBUTED_SAMPLER, BATCH_SAMPLER, DATALOADER, GRAPH_LOADERS)):
            self._construction(node, qualified)
        elif qualified in LIBRARY_LOADERS:
            self._library_loader(node)
        elif qualified in DEEPSPEED_INITIALIZE:
            self._deepspeed_loader(node)
        elif self._plugin_loader(node):
            pass
        elif self.model.project is not None and self.model.project.padding_sampler(qualified or self._own_class(node.func)):
            self._padding_class(node)
        elif qualified is not None and self.model.project is not None:
            self._built_elsewhere(node, qualified)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "set_epoch":
            if not is_dataset_set_epoch(dotted_name(node.func) or ""):
                function.set_epochs.append(SetEpoch(self.ref(node.func.value), function, loops, node))
            return
        if _is_builtin(self.model, node.func, "iter") and len(node.args) == 1 and node.args[0].keyword is None and not self._looped(node):
            # `next(iter(loader))`: a new pass over the loader starts here
            pulled = Loop(node, function, loops, self._iterated(node.args[0].value), pull=True)
            function.loops.append(pulled)
        callee = self._callee(node.func)
        if callee is not None:
            # an inline call (`sampler=data_sampler(ds, shuffle=True, distributed=...)`) holds what the function returns
            self.results.append((_call_ref(node), callee, node))
            positional = [self.ref(a.value) for a in node.args if a.keyword is None and not a.star]
            keywords = {a.keyword.value: self.ref(a.value) for a in node.args if a.keyword is not None}
            function.calls.append(CallSite(callee, function, loops, positional, keywords, node))

    def _looped(self, node: cst.Call) -> bool:
        """Whether the `for` loop open here iterates `node` (`for batch in iter(loader):`): it
        runs once, when the loop starts, and the loop's pass is the one it makes."""
        loops = self.model.loops
        return bool(loops) and isinstance(loops[-1], cst.For) and any(inner is node for inner in descendants(loops[-1].iter))

    def _built_elsewhere(self, node: cst.Call, qualified: str) -> None:
        """A helper of another project module that returns a DistributedSampler, a DataLoader
        drawing from one, or both in a tuple: its call stands for what it builds. A generator
        there that re-iterates its argument forever is recorded with that argument."""
        project, function, order = self.model.project, self.function, len(self.constructions)
        built = project.built_data(qualified, _literals(node))  # type: ignore[union-attr]
        if built:  # what this call hands the builder's parameters (`samplers = [None]`): asked at its line
            built = project.built_data(qualified, _literals(node), self.model.spans([node])[id(node)][0][0])  # type: ignore[union-attr]
        sampler_at, loader_at = built.get("sampler"), built.get("loader")
        if sampler_at is None and loader_at is None:
            if self._batched(node):
                return
            wrapper = project.endless_wrapper(qualified)  # type: ignore[union-attr]
            positional = [a for a in node.args if a.keyword is None]
            if wrapper is not None and wrapper.index < len(positional) and not any(a.star for a in positional):
                self.endless.append(Endless(node, function, self.ref(positional[wrapper.index].value), wrapper.name, wrapper.loop))
            elif node.args:
                star = next((i for i, a in enumerate(node.args) if a.star), len(node.args))
                given = [self.ref(a.value) for a in node.args[:star] if a.keyword is None]
                keywords = {a.keyword.value: self.ref(a.value) for a in node.args if a.keyword is not None}
                self._elsewhere.append(Foreign(function, self.open_loops, qualified, given, keywords))
            return
        # A sampler returned alone is bound where the call is assigned; one inside a tuple
        # where that element is unpacked; one inside a DataLoader is reached as `loader.sampler`.
        sampler = Construction("sampler", node, function, order, self._element(node, sampler_at))
        sampler.elsewhere = (sampler_at or loader_at).made_at  # type: ignore[union-attr]
        sampler.drops_last = (sampler_at or loader_at).drops_last  # type: ignore[union-attr]
        sampler.optional = any(built.optional for built in (sampler_at, loader_at) if built is not None)
        sampler.epoch_given = (sampler_at or loader_at).epoch_given  # type: ignore[union-attr]
        dataset = sampler_at.dataset if sampler_at is not None else None  # the argument it shards
        positional = [a for a in node.args if a.keyword is None]
        if dataset is not None and dataset < len(positional) and not any(a.star for a in positional[: dataset + 1]):
            sampler.dataset = self.ref(positional[dataset].value)
        self.constructions.append(sampler)
        if loader_at is not None:
            drawn = sampler
            if sampler_at is not None and sampler_at.made_at != loader_at.made_at:  # the loader draws from another one
                drawn = Construction("sampler", node, function, order + 1, [(("call", id(node)), "drawn")])
                drawn.elsewhere, drawn.optional = loader_at.made_at, loader_at.optional
                self.constructions.append(drawn)
            loader = Construction("loader", node, function, order + 3, self._element(node, loader_at))
            drawn_ref = drawn.bound[0] if drawn is not sampler else _call_ref(node)
            if loader_at.batched:  # through a BatchSampler: `loader.batch_sampler.sampler`, as for one made here
                batch = Construction("batch_sampler", node, function, order + 2, [(("call", id(node)), "batched")])
                batch.sampler, loader.batch_sampler = drawn_ref, batch.bound[0]
                self.constructions.append(batch)
            else:
                loader.sampler = drawn_ref
            self.constructions.append(loader)

    def _batched(self, node: cst.Call) -> bool:
        """A call of a project helper that returns a BatchSampler over one of its arguments
        (`make_batch_data_sampler(val_sampler, 1)`): a batch sampler of that argument, as
        `BatchSampler(val_sampler, 1)` is."""
        index = self.model.project.batches(*self.place(), self.project_callee(node.func))  # type: ignore[union-attr]
        positional = [a for a in node.args if a.keyword is None]
        if index is None or index >= len(positional) or any(a.star for a in node.args):
            return False
        bound = self._bound.get(id(node), [])
        made = Construction("batch_sampler", node, self.function, len(self.constructions), bound, loops=self.open_loops)
        made.sampler = self.ref(positional[index].value)
        self.constructions.append(made)
        return True

    def _library_loader(self, node: cst.Call) -> None:
        """timm's `create_loader(..., distributed=...)` (torch_api.LIBRARY_LOADERS): the DataLoader
        and the DistributedSampler it builds inside, reached as `loader.sampler`, shuffling as
        `is_training` says (by default not: an evaluation sampler that pads). A literal
        `distributed=False`, or none, builds no sampler."""
        distributed = argument_for(node, LIBRARY_LOADERS, "distributed")
        if distributed is None or (isinstance(distributed.value, cst.Name) and distributed.value.value == "False"):
            return
        order = len(self.constructions)
        sampler = Construction("sampler", node, self.function, order, [(("call", id(node)), "drawn")])
        sampler.shuffle = argument_for(node, LIBRARY_LOADERS, "is_training") or cst.Arg(cst.Name("False"))
        dataset = argument_for(node, LIBRARY_LOADERS, "dataset")
        sampler.dataset = self.ref(dataset.value) if dataset is not None else None
        loader = Construction("loader", node, self.function, order + 1, self._bound.get(id(node), []))
        loader.sampler = sampler.bound[0]
        self.constructions += [sampler, loader]

    def _deepspeed_loader(self, node: cst.Call) -> None:
        """`engine, optimizer, loader, scheduler = deepspeed.initialize(..., training_data=ds)`:
        given a dataset, DeepSpeed returns third a DeepSpeedDataLoader that, under its launcher
        (a local rank), draws from a DistributedSampler it builds over the dataset with torch's
        defaults (shuffling, seed 0), kept as `loader.data_sampler`; DeepSpeed never calls its
        set_epoch (deepspeed/runtime/dataloader.py, engine.py)."""
        dataset = argument_for(node, DEEPSPEED_INITIALIZE, "training_data")
        if dataset is None or _is_none(dataset.value):
            return
        order = len(self.constructions)
        sampler = Construction("sampler", node, self.function, order, [(("call", id(node)), "drawn")])
        sampler.dataset, sampler.by_plugin = self.ref(dataset.value), True
        loader = Construction("loader", node, self.function, order + 1, [(("call", id(node)), "2")])
        loader.sampler, loader.sampler_attribute = sampler.bound[0], ".data_sampler"
        self.constructions += [sampler, loader]

    def _plugin_loader(self, node: cst.Call) -> bool:
        """A library object's loader maker (`plugin.prepare_dataloader(dataset, ..., shuffle=True)`,
        torch_api.PLUGIN_LOADER) on a name this function binds to one of the library's objects:
        the DataLoader and the DistributedSampler it builds inside, reached as `loader.sampler`,
        shuffling as `shuffle` says (by default not)."""
        func = node.func
        if not (
            isinstance(func, cst.Attribute) and func.attr.value in PLUGIN_LOADER.last_names
            and isinstance(func.value, cst.Name)
        ):
            return False
        frame = self.model.function
        if (id(frame.node) if frame else None, func.value.value) not in self._plugins:
            return False
        order = len(self.constructions)
        sampler = Construction("sampler", node, self.function, order, [(("call", id(node)), "drawn")])
        sampler.shuffle = argument_for(node, PLUGIN_LOADER, PLUGIN_LOADER_SHUFFLE) or cst.Arg(cst.Name("False"))
        sampler.by_plugin = True
        dataset = argument_for(node, PLUGIN_LOADER, "dataset")
        sampler.dataset = self.ref(dataset.value) if dataset is not None else None
        loader = Construction("loader", node, self.function, order + 1, self._bound.get(id(node), []))
        loader.sampler = sampler.bound[0]
        self.constructions += [sampler, loader]
        return True

    def _element(self, node: cst.Call, built) -> list[Ref]:
        """Where the call's value is bound (`built`, a ddplint.model.loaders.Built, returned
        alone), or the element of it."""
        if built is None:
            return []
        return self._bound.get(id(node), []) if built.index is None else [(("call", id(node)), str(built.index))]

    def _own_class(self, func: cst.BaseExpression) -> str | None:
        """The qualified name of the class of this module that `func` names (`ShardSampler(...)`
        below `class ShardSampler(Sampler)` of the same file), which the file's imports do not
        qualify; None for any other callee."""
        if not isinstance(func, cst.Name):
            return None
        found, origin = self.model.scope.lookup(func.value)
        if not found or origin is not None:
            return None
        view = self.model.project
        own = f"{view.module}.{func.value}"  # type: ignore[union-attr]
        resolved = view.resolve(own)  # type: ignore[union-attr]
        return own if resolved is not None and resolved[0] == view.module and resolved[1] == "class" else None  # type: ignore[union-attr]

    def _padding_class(self, node: cst.Call) -> None:
        """`DistributedARBatchSampler(val_db, 4, world_size, rank, False)`: a project class that
        pads its indices (ddplint.model.project.ProjectView.padding_sampler); its dataset is its
        first argument, its shuffle a keyword."""
        made = Construction("padding_sampler", node, self.function, len(self.constructions), self._bound.get(id(node), []), loops=self.open_loops)
        first = node.args[0] if node.args and node.args[0].keyword is None and not node.args[0].star else None
        made.dataset = self.ref(first.value) if first is not None else None
        made.shuffle = next((arg for arg in node.args if arg.keyword is not None and arg.keyword.value == "shuffle"), None)
        self.constructions.append(made)

    def _construction(self, node: cst.Call, qualified: str) -> None:
        bound = self._bound.get(id(node), [])
        made = Construction("", node, self.function, len(self.constructions), bound, loops=self.open_loops)
        if qualified in DISTRIBUTED_SAMPLER:
            dataset = argument_for(node, DISTRIBUTED_SAMPLER, "dataset")
            made.kind, made.shuffle = "sampler", argument_for(node, DISTRIBUTED_SAMPLER, "shuffle")
            made.dataset = self.ref(dataset.value) if dataset is not None else None
            made.guards = self._guards(node)
        elif qualified in BATCH_SAMPLER:
            inner = argument_for(node, BATCH_SAMPLER, "sampler")
            made.kind, made.sampler = "batch_sampler", self.ref(inner.value) if inner is not None else None
        else:
            signature = GRAPH_LOADERS if qualified in GRAPH_LOADERS else DATALOADER
            dataset, sampler, batch = (argument_for(node, signature, n) for n in _LOADER_ARGUMENTS)
            made.kind, made.shuffle = "loader", argument_for(node, signature, "shuffle")
            made.dataset = self.ref(dataset.value) if dataset is not None else None
            made.sampler = self.ref(sampler.value) if sampler is not None else None
            made.batch_sampler = self.ref(batch.value) if batch is not None else None
            made.draws = any(arg is not None and not _is_none(arg.value) for arg in (sampler, batch))
            made.star_kwargs = has_star_arguments(node, ("**",))
        self.constructions.append(made)

    def _guards(self, node: cst.Call) -> tuple[tuple[str, bool], ...]:
        """The tests `if name:` / `if not name:` of a parameter of the current function around
        `node`, in whose body it is (not its `else`)."""
        params = set(self.function.params)
        guards = []
        for test_node in self.model.ifs:
            test, truth = test_node.test, True
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, truth = test.expression, False
            if isinstance(test, cst.Name) and test.value in params and any(n is node for n in descendants(test_node.body)):
                guards.append((test.value, truth))
        return tuple(guards)

    def _rules_out(self, call: cst.Call, callee: tuple, construction: Construction) -> bool:
        """Whether `call` of the same-module function `callee` passes a literal that turns off
        the path `construction` is made on there: False (or None, 0) for a parameter an `if`
        around it tests true, True for one tested false, or False for the parameter a sampler's
        `shuffle=` is (a sampler that keeps one order by design)."""
        function = self.functions.get(callee)
        if function is None or construction.function is not function or any(a.star for a in call.args):
            return False
        params = function.params[1:] if callee[0] == "method" else function.params
        bound = dict(zip(params, (a.value for a in call.args if a.keyword is None)))
        bound.update({a.keyword.value: a.value for a in call.args if a.keyword is not None})

        def literal(name: str) -> str | None:
            value = bound.get(name)
            if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
                return value.value
            return value.value if isinstance(value, cst.Integer) else None

        shuffle = construction.shuffle.value if construction.kind == "sampler" and construction.shuffle is not None else None
        if isinstance(shuffle, cst.Name) and shuffle.value in params and literal(shuffle.value) in ("False", "None", "0"):
            return True
        for name, truth in construction.guards:
            given = literal(name)
            if given is not None and (given in ("False", "None", "0")) == truth:
                return True
        return False

    # -- questions asked in leave_Module -----------------------------------------------------

    def all_functions(self) -> list[Function]:
        """Every function of the module, nested ones too."""
        return list(self._records.values())

    def of_kind(self, kind: str) -> list[Construction]:
        return [c for c in self.constructions if c.kind == kind]

    def refs(self, construction: Construction) -> set[Ref]:
        """Every name the constructed object is reachable under: where it was stored, names it
        was copied to, and results of same-module functions that return it."""

        def and_copies(found: set[Ref]) -> set[Ref]:
            returned = {(("ret", key), index) for key, index, value in self.returns if value in found}
            results = {
                target for target, callee, call in self.results
                if (("ret", callee), "") in found and not self._rules_out(call, callee, construction)
            }
            return found | returned | results | {target for target, source in self.aliases if source in found}

        return fixed_point(and_copies, {_call_ref(construction.node), *construction.bound})

    def returned_with_others(self, construction: Construction) -> bool:
        """Whether a same-module function returns the constructed object on some paths and
        something else on others (`if distributed: return DistributedSampler(ds)` then `return
        RandomSampler(ds)`): what its call binds may then be another object."""
        names = self.refs(construction)
        keys = {key[1] for key, _ in names if isinstance(key, tuple) and key[0] == "ret"}
        return any(key in keys and value not in names for key, _, value in self.returns)

    def loaders_of(self, sampler: Construction) -> list[tuple[Construction, str]]:
        """DataLoaders that draw from `sampler`, with the attribute path from loader to sampler."""
        sampler_refs = self.refs(sampler)
        batch_refs: set[Ref] = set()
        for batch in self.of_kind("batch_sampler"):
            if batch.sampler in sampler_refs:
                batch_refs |= self.refs(batch)
        found = []
        for loader in self.of_kind("loader"):
            if loader.sampler in sampler_refs:
                found.append((loader, loader.sampler_attribute))
            elif loader.batch_sampler in sampler_refs or loader.batch_sampler in batch_refs:
                through_batch_sampler = loader.batch_sampler in batch_refs
                found.append((loader, ".batch_sampler.sampler" if through_batch_sampler else ".batch_sampler"))
        return found

    def epoch_loops(self, loader: Construction) -> list[EpochLoop]:
        """Loops that iterate `loader` in their body (around a `for` over it or an `iter()` of
        it, around a call of a same-module function that iterates it, or of another module's
        function that makes one pass over it), each with the names of the loader there and the
        passes it makes."""
        found: dict[int, EpochLoop] = {}
        targets = self.refs(loader)
        for function in (self.module, *self.functions.values()):
            self._epoch_loops_in(function, targets, found, 1)
        for foreign in self._elsewhere:
            loops, positional, keywords = foreign.loops, foreign.positional, foreign.keywords
            if not loops or id(loops[-1]) in found or not targets & {*positional, *keywords.values()}:
                continue
            passes = self.model.project.one_pass(foreign.qualified)  # type: ignore[union-attr]
            if passes is None:
                continue
            given = keywords.get(passes.name, positional[passes.index] if passes.index < len(positional) else None)
            if given in targets:
                found[id(loops[-1])] = EpochLoop(loops[-1], targets, [Pass(None, passes)])
                self.passes[id(loops[-1])] = f"{passes.function}() in {passes.loop}"
        return list(found.values())

    def passes_over(self, loader: Construction) -> list[Loop]:
        """The loops of this module that iterate `loader`: a `for` or an `iter()` over one of its
        names, or the loop of a same-module function a call hands it to."""
        targets = self.refs(loader)
        found: list[Loop] = []
        for function in (self.module, *self.all_functions()):
            found += [loop for loop in function.loops if loop.iterated & targets]
            found += [inner for call in function.calls if (inner := self._pass_in(call, targets, 1)) is not None]
        return found

    def loops_calling(self, function: Function) -> list[Loop]:
        """The loops of this module around a call of `function` (`for epoch in ...:
        self.run_epoch(epoch)`): each of its passes runs the function anew."""
        return [
            call.loops[-1] for caller in (self.module, *self.functions.values()) for call in caller.calls
            if call.loops and self.functions.get(call.callee) is function
        ]

    def _epoch_loops_in(self, function: Function, targets: set[Ref], found: dict, depth: int) -> None:
        for loop in function.loops:
            if loop.outer and loop.iterated & targets:
                found.setdefault(id(loop.outer[-1]), EpochLoop(loop.outer[-1], targets, [])).passes.append(Pass(loop))
        for call in function.calls:
            inner = self._pass_in(call, targets, 1) if call.loops else None
            if inner is not None:
                found.setdefault(id(call.loops[-1]), EpochLoop(call.loops[-1], targets, [])).passes.append(Pass(inner))
            elif depth < _MAX_CALL_DEPTH:
                resolved = self.callee_targets(call, targets)
                if resolved is not None and any(key is resolved[0].scope for key, _ in resolved[1]):
                    self._epoch_loops_in(resolved[0], resolved[1], found, depth + 1)

    def callee_targets(self, call: CallSite, targets: set[Ref]) -> tuple[Function, set[Ref]] | None:
        callee = self.functions.get(call.callee)
        if callee is None:
            return None
        params = callee.params[1:] if call.callee[0] == "method" else callee.params
        mapped = {ref for ref in targets if not isinstance(ref[0], Scope) or ref[0] is self.model.module_scope}
        mapped = {ref for ref in mapped if not _is_call_ref(ref)}
        for param, value in (*zip(params, call.positional), *call.keywords.items()):
            if value in targets:
                mapped.add((callee.scope, param))
        return callee, mapped

    def _pass_in(self, call: CallSite, targets: set[Ref], depth: int) -> Loop | None:
        """The loop in which the same-module function a call reaches (or one it calls) iterates
        what the call hands it of `targets`; None if none does."""
        resolved = self.callee_targets(call, targets)
        if resolved is None or depth > _MAX_CALL_DEPTH:
            return None
        callee, mapped = resolved
        found = next((loop for loop in callee.loops if loop.iterated & mapped), None)
        for inner in callee.calls if found is None else ():
            found = self._pass_in(inner, mapped, depth + 1)
            if found is not None:
                break
        return found

    @staticmethod
    def _derived(refs: set[Ref], suffixes: tuple[str, ...]) -> set[Ref]:
        return {(key, path + suffix) for key, path in refs for suffix in suffixes if not _is_call_ref((key, path))} | (
            refs if "" in suffixes else set()
        )

    def sampler_names(self, sampler: Construction) -> set[Ref]:
        """Every expression that denotes `sampler`: its own names, `loader.sampler` (not of a
        loader drawing from it through its batch_sampler), `loader.batch_sampler.sampler`,
        `batch_sampler.sampler`."""
        names = set(self.refs(sampler))
        for loader, path in self.loaders_of(sampler):
            batched = (".batch_sampler.sampler",) if loader.sampler_attribute == ".sampler" else ()
            names |= self._derived(self.refs(loader), (path, *batched))
        for batch in self.of_kind("batch_sampler"):
            if batch.sampler in names:
                names |= self._derived(self.refs(batch), (".sampler",))
        return names

    def sets_epoch(self, loop: Loop, sampler: Construction, loader_names: set[Ref]) -> bool:
        """Whether `set_epoch` reaches `sampler` inside `loop`: called on it there, in a function
        of this module the loop calls, or in one of another module the loop hands the sampler or
        its loader (`loader_names`) to, which may call it (`shuffle_dataset(loader, epoch)`). A
        receiver this module cannot tell apart from it counts: better silent than a false report."""
        calls = [c for c in loop.function.calls if loop in c.loops]
        epochs = [s for s in loop.function.set_epochs if loop in s.loops]
        own, others = self._names_apart(sampler)
        if self._sets_epoch(epochs, calls, own, others, 1):
            return True
        return self._foreign_sets_epoch(loop.function, (loop,), own | loader_names, 1)

    def _foreign_sets_epoch(self, function: Function, loops: tuple[Loop, ...], names: set[Ref], depth: int) -> bool:
        """Whether a call in `loops` of `function` (anywhere in it, with none) hands one of
        `names` to another module's function that may call set_epoch, or to a function of this
        module that does so (three calls deep)."""
        project = self.model.project
        for foreign in self._elsewhere if project is not None else ():
            inside = foreign.function is function and all(loop in foreign.loops for loop in loops)
            if inside and names & {*foreign.positional, *foreign.keywords.values()} and project.sets_epoch(foreign.qualified):
                return True
        for call in function.calls if depth <= _MAX_CALL_DEPTH else ():
            resolved = self.callee_targets(call, names) if all(loop in call.loops for loop in loops) else None
            if resolved is not None:
                inside = self._derived(resolved[1], ("", ".sampler", ".batch_sampler.sampler"))
                if self._foreign_sets_epoch(resolved[0], (), inside, depth + 1):
                    return True
        return False

    def misdirected_set_epochs(self, loop: Loop, sampler: Construction) -> list[SetEpoch]:
        """The set_epoch calls in `loop` on `loader.sampler` of a loader that draws from `sampler`
        through its batch_sampler: they reach the SequentialSampler DataLoader makes beside it."""
        defaults: set[Ref] = set()
        for loader, path in self.loaders_of(sampler):
            if path.startswith(".batch_sampler"):
                defaults |= self._derived(self.refs(loader), (".sampler",))
        return [call for call in loop.function.set_epochs if loop in call.loops and call.receiver in defaults]

    def sets_epoch_anywhere(self, sampler: Construction) -> bool:
        """Whether some `set_epoch` of this module may reach `sampler` (as `sets_epoch`)."""
        epochs = [s for function in (self.module, *self._records.values()) for s in function.set_epochs]
        return self._sets_epoch(epochs, [], *self._names_apart(sampler), 1)

    def _names_apart(self, sampler: Construction) -> tuple[set[Ref], set[Ref]]:
        """The names of `sampler`, and those that are not its names: the other samplers', and
        `loader.sampler` of a loader given a `batch_sampler` (the SequentialSampler DataLoader
        makes then, which has no set_epoch: `hasattr(loader.sampler, "set_epoch")` is false)."""
        own = self.sampler_names(sampler)
        others: set[Ref] = set()
        for other in self.of_kind("sampler"):
            if other is not sampler:
                others |= self.sampler_names(other) - own
        for loader in self.of_kind("loader"):
            if loader.sampler is None and loader.batch_sampler is not None:
                others |= self._derived(self.refs(loader), (".sampler",)) - own
            elif loader.sampler_attribute != ".sampler":  # a loader with neither: the call never runs
                others |= self._derived(self.refs(loader), (".sampler", ".batch_sampler.sampler")) - own
        return own, others

    def endless_calls(self, loader: Construction) -> list[Endless]:
        """Calls of another module's endless generator that are given `loader`."""
        names = self.refs(loader)
        return [call for call in self.endless if call.argument in names]

    def _sets_epoch(self, epochs, calls, own: set[Ref], others: set[Ref], depth: int) -> bool:
        if any(s.receiver in own or s.receiver not in others for s in epochs):
            return True
        if depth > _MAX_CALL_DEPTH:
            return False
        for call in calls:
            resolved = self.callee_targets(call, own)
            if resolved is not None:
                callee, mapped = resolved
                inside = self._derived(mapped, ("", ".sampler", ".batch_sampler.sampler"))
                if self._sets_epoch(callee.set_epochs, callee.calls, inside, others, depth + 1):
                    return True
        return False

    def visible_path(self, refs: set[Ref], function: Function) -> str | None:
        """A dotted path among `refs` that means the same value inside `function` and is
        assigned only once (`sampler = ... if distributed else None` may hold something else),
        and not named `_` (`loader, _ = build(dataset)` discards it)."""
        for key, path in sorted(refs, key=lambda ref: ref[1]):
            head = path.partition(".")[0]
            if _is_call_ref((key, path)) or self.assignments[(key, path)] > 1 or head == "_":
                continue
            if isinstance(key, tuple):
                if function.self_class is not None and key == ("class", id(function.self_class)):
                    return path
            elif (self.model.binding_scope(head, function.scope) or self.model.module_scope) is key:
                return path
        return None


@dataclass(eq=False)
class Method:
    node: cst.FunctionDef
    uses_rank: bool = False  # reads self.rank/self.num_replicas or calls dist.get_rank()
    delegates: bool = False  # calls super().__iter__() or DistributedSampler.__iter__(self)
    calls_super_init: bool = False
    reads: set[str] = field(default_factory=set)  # self.<attribute> it reads
    self_calls: set[str] = field(default_factory=set)  # self.<method>() it calls
    ranked: set[str] = field(default_factory=set)  # local names holding a rank-derived value


@dataclass(eq=False)
class _Assignment:
    """An assignment the walk is inside: its targets, and what its value was seen to use."""

    attributes: set[str]  # self.<attribute> targets
    names: set[str]  # plain-name targets
    ranked: bool = False  # the value uses the rank or the world size
    calls: set[str] = field(default_factory=set)  # self.<method>() calls in the value


@dataclass(eq=False)
class SamplerClass:
    node: cst.ClassDef
    from_distributed_sampler: bool  # a base is torch's DistributedSampler itself
    base_names: list[str]  # bases that are plain names, maybe classes of this module
    methods: dict[str, Method] = field(default_factory=dict)
    sharded: set[str] = field(default_factory=set)  # attributes assigned from rank-using values
    # attribute -> the self methods whose results it was assigned from (`self.shard = self._split(n)`)
    assigned_calls: dict[str, set[str]] = field(default_factory=dict)


class SamplerClasses(Analysis):
    """What each class's methods read, write and call: enough to tell whether a
    DistributedSampler subclass gives each rank its own share."""

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self.classes: dict[str, SamplerClass] = {}  # module-level classes by name
        self._records: dict[int, SamplerClass] = {}  # every class, by id of its node
        self._open_assignments: list[_Assignment] = []

    @property
    def _current(self) -> tuple[SamplerClass | None, Method | None]:
        """The class whose body or method the walk is in, and that method (nested functions
        belong to the method around them)."""
        frame = self.model.frame
        if frame.is_class:
            return self._records[id(frame.node)], None
        method = frame.method
        if method is None:
            return None, None
        known = self._records[id(method.parent.node)]  # type: ignore[union-attr]
        return known, known.methods.get(method.node.name.value)  # type: ignore[union-attr]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qualified = [self.model.qualified(base.value) for base in node.bases]
        known = self._records[id(node)] = SamplerClass(
            node,
            any(name in DISTRIBUTED_SAMPLER for name in qualified),
            [base.value.value for base in node.bases if isinstance(base.value, cst.Name)],
        )
        if self.model.frame.parent.parent is None:  # type: ignore[union-attr]
            self.classes[node.name.value] = known

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        container = self.model.frame.parent
        if container is not None and container.is_class:
            # `def __init__(self, dataset, num_replicas, rank)`: values computed from these
            # parameters are the rank's share as much as ones computed from self.rank.
            ranked = {p.name.value for p in node.params.params if p.name.value in RANK_ATTRIBUTES}
            self._records[id(container.node)].methods[node.name.value] = Method(node, ranked=ranked)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._enter_assignment([t.target for t in node.targets])

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._enter_assignment([node.target])

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._leave_assignment()

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._leave_assignment()

    def _enter_assignment(self, targets: list[cst.BaseExpression]) -> None:
        attributes = {t.attr.value for t in targets if isinstance(t, cst.Attribute) and _is_self_attribute(t)}
        names = {t.value for t in targets if isinstance(t, cst.Name)}
        self._open_assignments.append(_Assignment(attributes, names))

    def _leave_assignment(self) -> None:
        assignment = self._open_assignments.pop()
        known, method = self._current
        if method is not None and assignment.ranked:
            method.ranked |= assignment.names
        if known is not None and assignment.calls:
            for attribute in assignment.attributes:
                known.assigned_calls.setdefault(attribute, set()).update(assignment.calls)

    def visit_Name(self, node: cst.Name) -> None:
        if self._open_assignments:
            known, method = self._current
            if method is not None and node.value in method.ranked:
                self._carries_rank(known)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        known, method = self._current
        if method is None or not _is_self_attribute(node):
            return
        method.reads.add(node.attr.value)
        if node.attr.value in RANK_ATTRIBUTES:
            self._uses_rank(known, method)
        elif known is not None and node.attr.value in known.sharded:
            self._carries_rank(known)  # `self.end = self.start + per`, start being the rank's

    def visit_Call(self, node: cst.Call) -> None:
        known, method = self._current
        if method is None:
            return
        func = node.func
        qualified = self.model.qualified(func)
        if qualified in GET_RANK or qualified in GET_WORLD_SIZE:
            self._uses_rank(known, method)
        if not isinstance(func, cst.Attribute):
            return
        target = func.value
        is_super = isinstance(target, cst.Call) and isinstance(target.func, cst.Name) and target.func.value == "super"
        is_base = self.model.qualified(target) in DISTRIBUTED_SAMPLER or (
            isinstance(target, cst.Name) and known is not None and target.value in known.base_names
        )
        if func.attr.value == "__iter__" and (is_super or is_base):
            method.delegates = True
        elif func.attr.value == "__init__" and (is_super or is_base):
            method.calls_super_init = True
        elif _is_self_attribute(func):
            method.self_calls.add(func.attr.value)
            for assignment in self._open_assignments:
                assignment.calls.add(func.attr.value)

    def _uses_rank(self, known: SamplerClass | None, method: Method) -> None:
        method.uses_rank = True
        self._carries_rank(known)

    def _carries_rank(self, known: SamplerClass | None) -> None:
        """The assignments being walked get a value derived from the rank or world size."""
        for assignment in self._open_assignments:
            assignment.ranked = True
            if known is not None:
                known.sharded |= assignment.attributes

    # -- questions asked in leave_Module -----------------------------------------------------

    def lineage(self, known: SamplerClass) -> list[SamplerClass]:
        """The class and its same-module bases, nearest first."""
        found, pending = [], [known]
        while pending:
            current = pending.pop(0)
            if current not in found:
                found.append(current)
                pending.extend(self.classes[n] for n in current.base_names if n in self.classes)
        return found

    def is_distributed_sampler(self, known: SamplerClass) -> bool:
        return any(c.from_distributed_sampler for c in self.lineage(known))

    def shards_per_rank(self, known: SamplerClass) -> bool:
        """Whether `__iter__`, or a method it calls on self, selects by rank, delegates to
        DistributedSampler, or yields an attribute that was assigned from the rank."""
        lineage = self.lineage(known)
        sharded = set().union(*(c.sharded for c in lineage))
        for current in lineage:  # `self.shard = self._split(n)`, where _split uses the rank
            for attribute, calls in current.assigned_calls.items():
                if any(c.methods[name].uses_rank for c in lineage for name in calls if name in c.methods):
                    sharded.add(attribute)
        return any(
            method.uses_rank or method.delegates or method.reads & sharded
            for _, method in called_on_self(self.methods(known), ["__iter__"])
        )

    def methods(self, known: SamplerClass) -> dict[str, Method]:
        """The methods `self.name()` runs in the class: its own, else its nearest base's."""
        found: dict[str, Method] = {}
        for current in reversed(self.lineage(known)):
            found.update(current.methods)
        return found


def called_on_self(methods: dict[str, Method], names: list[str]) -> Iterator[tuple[str, Method]]:
    """The methods (by name) that calling `names` on self runs, directly or through one another."""
    for name in reachable(names, lambda name: methods[name].self_calls if name in methods else ()):
        if name in methods:
            yield name, methods[name]


def _is_self_attribute(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _literals(node: cst.Call) -> list:
    """[position or keyword, value] of each literal string, number, bool or None a call passes."""
    found = []
    for index, arg in enumerate(node.args):
        value = arg.value
        if arg.star:
            break  # what lands where is unknown
        if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
            known = {"True": True, "False": False, "None": None}[value.value]
        elif isinstance(value, (cst.SimpleString, cst.Integer, cst.Float)):
            known = value.evaluated_value if isinstance(value, cst.SimpleString) else value.value
        else:
            continue
        found.append([arg.keyword.value if arg.keyword is not None else index, known])
    return found
