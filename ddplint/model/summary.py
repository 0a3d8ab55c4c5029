"""A module's summary: what the program model (ddplint.model.program) needs of each function,
read once from CPython's `ast` and kept in the cache (ddplint.model.records).

Per function (`FunctionSummary`) its parameters, and in statement order the calls that pass a
value the program can follow, its returns, what it stores on `self`, its loops, backward
calls, forward passes, device moves and process groups, and what it saves (ddplint.model.files);
per module its classes, who runs its code (the guards around calls, for ddplint.model.context)
and the imports its top-level `if` and `try` blocks bind. A summary reads no imports: names are
as written, and the program qualifies them.

An expression's value is written as a source (ddplint.model.records: `Param`, `CallResult`,
`Item`, ...), followed through local assignments in statement order (the last assignment
before a call decides, whatever branch it is in), tuples, dict literals, lists filled in loops,
conditional expressions (`Either`) and the inner module of a DDP model (`InnerOf`), and into
a function from the module's globals that its own code binds once to a sampler or loader it
makes (`_data_globals`). Anything else (containers, other globals, `*args`) is not followed, so
the program errs toward saying nothing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import fields, replace

from ddplint.core.torch_api import (
    ACCELERATOR, ACCELERATOR_SHARDING_PLUGINS, BATCH_SAMPLER, DATALOADER, DISTRIBUTED_SAMPLER, FRAMEWORK_METHODS, NO_GRAD,
    GRAPH_LOADERS, SAME_VALUE_METHODS,
)
from ddplint.model import files, keyed
from ddplint.model.records import (
    Attr, CallResult, Carried, ClassSummary, Called, DataCall, Each, Either, Escapes, Element, ForwardPass, FunctionContext,
    FunctionSummary, Group, GroupCall, Guard, Handed, InnerHanded, InnerOf, Item, Literal, LiteralCall, Loop, MethodCall,
    ModuleSummary, Param, ParameterLoop, ParameterTest, PassingCall, Pull, SelfAttr, Source, Through, UNNAMED_BASE, Unknown,
)
from ddplint.prefilter.screens import dotted, walk

_CONTROL_FIELDS = frozenset(("body", "orelse", "finalbody", "handlers", "cases"))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Python 3.12 gave functions `type_params`, and a node built without it lacks the attribute
# (3.13 fills it in); 3.10 and 3.11 would keep an unknown keyword as a stray attribute.
_NO_TYPE_PARAMS = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})
MAX_PREDICATE_LINES = 25  # longer functions are not read as predicates (ddplint.model.context)


def super_method(func: ast.AST) -> str | None:
    """`super().__init__` (also `super(Trainer, self).__init__`): the method of the class's
    bases that the call reaches, written as `Program.resolve` reads it; None for any other
    callee that is not a dotted name."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name):
        return f"super().{func.attr}" if func.value.func.id == "super" else None
    return None


def _named_method(call: ast.Call, name: str) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == name


def _keys_by_zip(call: ast.Call) -> bool:
    """`results.update(zip(ids, preds))`: a dict keyed by the first sequence."""
    return (
        _named_method(call, "update") and len(call.args) == 1 and not call.keywords
        and isinstance(call.args[0], ast.Call) and dotted(call.args[0].func) == "zip"
    )


def _moves(call: ast.Call) -> bool:
    """`Net().cuda(rank)`, `model.to(device).train()`: the value (the same object, see `source`)
    is placed on a device."""
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in SAME_VALUE_METHODS:
        if call.func.attr in ("cuda", "to"):
            return True
        call = call.func.value  # type: ignore[assignment]
    return False


def _places_on_cuda(call: ast.Call) -> bool:
    """`x.cuda()`, `x.to(0)`, `x.to("cuda:1")`, `x.to(device=torch.device("cuda"))`, a call
    given `device="cuda..."`, `torch.cuda.FloatTensor(...)`: the call puts a tensor or module
    on a CUDA device (`cuda` of a function's summary). By the names as written: a summary
    reads no imports."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "cuda":
        return True
    if isinstance(func, ast.Attribute) and func.attr == "to" and any(_is_cuda_device(arg) for arg in call.args[:1]):
        return True
    if any(k.arg == "device" and _is_cuda_device(k.value) for k in call.keywords):
        return True
    return isinstance(func, ast.Attribute) and func.attr.endswith("Tensor") and (dotted(func.value) or "").endswith("cuda")


def _bare_cuda(call: ast.Call) -> bool | None:
    """True for a move to the current CUDA device, whichever it is (`x.cuda()`, `x.to("cuda")`,
    `x.to(torch.device("cuda"))`, `device="cuda"`); False for a move that names its device
    some other way (`x.cuda(rank)`, `x.to(device)`: possibly this rank's); None for no move."""
    func = call.func
    device = next((k.value for k in call.keywords if k.arg == "device"), None)
    if isinstance(func, ast.Attribute) and func.attr in ("cuda", "to") and call.args:
        device = call.args[0]
    elif isinstance(func, ast.Attribute) and func.attr == "cuda" and device is None:
        return True
    if device is None:
        return None
    if isinstance(device, ast.Call) and (dotted(device.func) or "").rpartition(".")[2] == "device" and len(device.args) == 1:
        device = device.args[0]
    return isinstance(device, ast.Constant) and device.value == "cuda"


def _abstract(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method only stands for its subclasses' overrides: it is decorated
    `@abstractmethod`, or its body (past a docstring) only raises NotImplementedError (or
    NotImplemented, a common slip that raises a TypeError just the same)."""
    if any((dotted(d) or "").rpartition(".")[2] == _ABSTRACT for d in node.decorator_list):
        return True
    documented = isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    body = node.body[1:] if documented else node.body
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id in _NOT_IMPLEMENTED


_ABSTRACT = "abstractmethod"
_NOT_IMPLEMENTED = ("NotImplementedError", "NotImplemented")


def _is_cuda_device(expr: ast.expr) -> bool:
    """A CUDA device where a device goes: an index (`.to(0)` is cuda:0), a string starting with
    "cuda", or `torch.device("cuda...")` (not `torch.device(0)`, the current accelerator's)."""
    if isinstance(expr, ast.Constant):
        value = expr.value
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and value.startswith("cuda"))
    if isinstance(expr, ast.Call) and (dotted(expr.func) or "").rpartition(".")[2] == "device" and expr.args:
        first = expr.args[0]
        return isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("cuda")
    return False


# Parameters of the data classes the summaries keep, by position: a literal (shuffle,
# drop_last) or the source of the value passed (sampler, batch_sampler).
_DATA_PARAMETERS = {
    "DistributedSampler": DISTRIBUTED_SAMPLER, "DataLoader": DATALOADER, "BatchSampler": BATCH_SAMPLER,
    # PyTorch Geometric's other torch DataLoaders (its `DataLoader` reads as torch's: a fourth
    # positional argument, its follow_batch, is then taken for a sampler it never is: silent)
    "DenseDataLoader": GRAPH_LOADERS, "DataListLoader": GRAPH_LOADERS,
}
_LOADER_KINDS = ("DataLoader", "DenseDataLoader", "DataListLoader")
_DATA_LITERALS = ("shuffle", "drop_last")
_ESCAPES = tuple(item.name for item in fields(Escapes))
_DATA_SOURCES = ("dataset", "sampler", "batch_sampler")


# -- one module's summary ------------------------------------------------------------------


# Calls followed around what a loop iterates (`for i, x in enumerate(tqdm(loader))`: two).
_MAX_WRAPPING = 4


class _Draft:
    """A FunctionSummary being read: lists appended to in statement order, frozen at the end."""

    def __init__(self, line: int, params: tuple[str, ...], method: bool, cls: str | None) -> None:
        self.line, self.params, self.method, self.cls = line, params, method, cls
        self.calls, self.returns, self.fresh, self.made, self.invocations, self.literals = [], [], [], [], [], []
        self.loops, self.backward, self.gates, self.handed, self.process_groups = [], [], [], [], []
        self.pulls, self.carried = [], []
        self.forward_passes, self.unwrapped, self.saves, self.files, self.handed_files = [], [], [], [], []
        self.method_calls, self.grouped, self.element_calls = [], [], []
        self.plain_saves, self.writes, self.sends, self.stores, self.tolerant = [], [], [], [], []
        self.state_saves, self.handed_states = [], []
        self.sets: dict[str, Source] = {}
        self.other_returns = self.device_moves = self.sync_control = self.deduplicates = False
        self.keyed_files = self.lists_files = False
        self.input_gradient = self.abstract = False
        self.cuda: int | None = None
        self.bare_cuda: int | None = None
        self.forwards: Called | None = None
        self.cycles: ParameterLoop | None = None
        self.passes: ParameterLoop | None = None

    def freeze(self) -> FunctionSummary:
        held = {name: tuple(value) if isinstance(value, list) else value for name, value in vars(self).items()}
        escapes = Escapes(**{name: held.pop(name) for name in _ESCAPES})
        return FunctionSummary(**held, escapes=escapes)


class _FunctionReader:
    """The summary of one function: its parameters, and in statement order the calls that
    pass a followed value, its returns and what it stores on `self`."""

    def __init__(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None, paths: dict | None = None, data: dict | None = None
    ) -> None:
        """`paths`: the module's own names bound to a file (`CKPT = "ckpt/best.pt"`); `data`: its
        names bound to a sampler or loader its own code makes (`_data_globals`)."""
        arguments = node.args
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        decorators = {dotted(d) for d in node.decorator_list}
        method = cls is not None and "staticmethod" not in decorators
        self.self_name = positional[0] if method and positional and "classmethod" not in decorators else None
        self.env: dict[str, Source] = dict(data or {})  # a global until the function binds the name
        self.env.update((name, Param(name)) for name in (*positional, *(a.arg for a in arguments.kwonlyargs)))
        self.draft = _Draft(node.lineno, tuple(positional), method, cls)
        self._tests: list[ast.expr] = []  # the tests of the ifs around the walk, for `gates`
        # The ifs around the walk, as (test, which way), and the `name = True`/`False` statements
        # read so far with the ifs around each: what a flag holds where a call passes it.
        self._node, self._ways, self._flags = node, [], {}
        # Locals bound to parameters wrapped for iteration (`diter = enumerate(tqdm(loader))`).
        self._wrapping: dict[str, list[str]] = {}
        self._wrapped_sources: dict[str, tuple] = {}  # the same, by what they hold (`_iterated_sources`)
        self._lengths: set[str] = set()  # locals bound to `len(...)`, for `deduplicates`
        self._lists: set[str] = set()  # locals bound to `[]` or `{}`, for `_add_element`
        # Locals last bound, on some way of the ifs walked, to `x if test else None` (whose
        # source is x's); parameters that default to None: what may hold None (`_may_be_none`).
        self._nullable: set[str] = set()
        self._none_defaults = _none_defaults(arguments)
        # no_grad/inference_mode blocks (or a decorator) around the walk: calls there train nothing
        self._gradients_off = int(any(_turns_gradients_off(d) for d in node.decorator_list))
        self._backwards = 0  # backward calls read so far: a loop trains when its body adds one
        # Locals bound to a call's result and parameters that nothing has touched yet (no
        # method called on them, not passed anywhere): a model still as its maker left it.
        self._fresh: dict[str, Called] = {}
        self._untouched: set[str] = set(positional[1:] if self.self_name else positional)
        self._placed = False  # the statement's value is a call given a device= or device_map=
        # Who runs what (ddplint.model.context): the guards around the code and every call of a dotted name.
        self.guards: list[Guard] = []
        self.dotted_calls: list[Called] = []
        # Locals bound to a class or function a module holds under a name chosen at run time
        # (`ds_cls = getattr(datasets, cfg.name)`): their calls are recorded as `datasets.*`.
        self._chosen: dict[str, str] = {}
        # Locals bound to a name, or to one of names by a conditional expression (`make = build_a
        # if flag else build_b`): calling the local calls what it holds, recorded as each name.
        self._aliases: dict[str, tuple[str, ...]] = {}
        # Names bound to a file (ddplint.model.files.path_key): the module's, unless a parameter hides one.
        self.paths: dict[str, str] = {name: key for name, key in (paths or {}).items() if name not in self.env}
        self.moved: set[str] = set()  # modules moved to the host in place (ddplint.model.files)
        self.hosted: set[str] = set()  # local names bound to a value that holds no CUDA tensors
        self.sequences: set[str] = set()  # local names bound to a Python list or tuple
        self.keywords_name = arguments.kwarg.arg if arguments.kwarg is not None else None  # `**kwargs`
        self.offload_configs: set[str] = set()  # local names bound to a configuration that offloads state dicts
        self.offloading: list[tuple] = []  # the offloading `FSDP.state_dict_type` blocks around the walk
        self.records: dict[str, tuple] = {}  # local dicts built key by key (ddplint.model.files)
        self.held_states: dict[str, list] = {}  # local dicts holding state dicts (ddplint.model.files)
        self.folders: dict[str, str] = {}  # local names bound to a file in a folder a parameter names (ddplint.model.files)
        self.state_of: dict[str, str] = {}  # local names bound to `<object>.state_dict()`: the object as written
        self._statements(node.body)
        self._finish(node, positional, method)

    def _finish(self, node: ast.FunctionDef | ast.AsyncFunctionDef, positional: list[str], method: bool) -> None:
        """What is read of the function as a whole, once its statements are."""
        if not isinstance(node.body[-1], ast.Return):
            self.draft.other_returns = True  # may end without one: returns None
        if method and node.name == "__init__" and node.args.kwarg is not None:
            self.draft.forwards = _forwarded(node, node.args.kwarg.arg)
        self.draft.cycles = None if method else _cycled(node, positional)
        self.draft.input_gradient = bool(self.draft.backward) and _takes_input_gradient(node)
        self.draft.abstract = method and _abstract(node)
        files.settle_save(self, node)
        stored, self.draft.keyed_files, self.draft.lists_files = keyed.read_keyed(node)
        self.draft.deduplicates |= stored  # `results[qid] = ans` by the batch's ids: a repeat overwrites its entry
        looped = {name for loop in self.draft.loops for name in loop.iterated}  # parameters a loop iterates
        if not method and self.draft.cycles is None and looped:
            self.draft.passes = _passed_once(node, positional)

    def summary(self) -> FunctionSummary:
        return self.draft.freeze()

    def unlike(self, expr: ast.AST) -> tuple[str, ...]:
        """The classes (as written) that the `if`s around the statement found `expr` no
        instance of: `C` in the `else:` of `if isinstance(expr, C):` (each of a tuple `(A, C)`),
        and in the body of `if not isinstance(expr, C):`."""
        written, found = ast.dump(expr), []
        for test, way in self._ways:
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, way = test.operand, not way
            if (
                way or not isinstance(test, ast.Call) or dotted(test.func) != "isinstance" or len(test.args) != 2
                or ast.dump(test.args[0]) != written
            ):
                continue
            classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
            found += [name for name in map(dotted, classes) if name is not None]
        return tuple(found)

    def source(self, expr: ast.AST | None) -> Source | None:
        """What `expr` holds here, as far as the program follows it; None otherwise."""
        if isinstance(expr, ast.Name):
            return self.env.get(expr.id)
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == self.self_name and self.self_name:
                return SelfAttr(expr.attr)
            if expr.attr == "module":
                return self._inner(expr)
            return self._attribute(expr)
        if isinstance(expr, ast.Call):
            return self._call_source(expr)
        if isinstance(expr, ast.IfExp) and _is_none(expr.orelse):  # `DataLoader(...) if ds is not None else None`
            return self.source(expr.body)
        if isinstance(expr, ast.IfExp):  # `DDP(m) if distributed else m`: see Program.evaluate
            branches = (self.source(expr.body), self.source(expr.orelse))
            return self._inner(expr) or (Either(branches) if any(branches) else None)
        if isinstance(expr, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in expr.elts):
            items = tuple(self.source(element) for element in expr.elts)
            return Group(items) if any(items) else None
        if isinstance(expr, ast.Dict) and all(_literal_key(key, str) for key in expr.keys):
            items = tuple(self.source(value) for value in expr.values)
            return Group(items, tuple(key.value for key in expr.keys)) if any(items) else None  # type: ignore[union-attr]
        if isinstance(expr, ast.Subscript) and (_literal_key(expr.slice, str) or _literal_key(expr.slice, int)):
            held = self.source(expr.value)  # `loaders["val"]`, `loaders[1]`
            return Item(held, expr.slice.value) if held is not None else None  # type: ignore[attr-defined]
        if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice):
            held = self.source(expr.value)  # `loaders[task]`: any element, known where every element is one value
            return Element(held) if held is not None else None
        if isinstance(expr, ast.ListComp) and len(expr.generators) == 1:
            return self._listed(expr.elt, expr.generators[0])
        return None

    def _call_source(self, expr: ast.Call) -> Source | None:
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in SAME_VALUE_METHODS:
            return self.source(expr.func.value)
        if isinstance(expr.func, ast.Name) and expr.func.id == "getattr":
            return self._inner(expr)
        named = self._aliases.get(expr.func.id, ()) if isinstance(expr.func, ast.Name) else ()
        if len(named) > 1:  # `build = build_a if flag else build_b; build(args)`: either one's result
            return Either(tuple(CallResult(name, expr.lineno, self._data_call(expr, name), ()) for name in named))
        callee = self._callee(expr.func)  # `backend.wrap(loader)`, `accelerator.prepare(model)`: `Backend().wrap`
        if not callee:
            return None
        return CallResult(callee, expr.lineno, self._data_call(expr, callee), self._plugins(expr, callee))

    def _plugins(self, call: ast.Call, callee: str) -> tuple[str, ...]:
        """The sharding plugins an Accelerator is given here (`Accelerator(fsdp_plugin=plugin)`),
        or the Accelerator a method is called on was (`accelerator.prepare(model)`)."""
        if callee.rpartition(".")[2] == _ACCELERATOR_NAME:
            return tuple(k.arg for k in call.keywords if k.arg in ACCELERATOR_SHARDING_PLUGINS and not _is_none(k.value))
        written = dotted(call.func) if "()." in callee else None
        receiver = self.env.get(written.partition(".")[0]) if written else None
        return receiver.plugins if isinstance(receiver, CallResult) else ()

    def _attribute(self, expr: ast.Attribute) -> Attr | None:
        """`held.name` where `held` is a parameter, what a call returned or an attribute of
        `self` (`args.train_loader`, `Loaders(cfg).train`, `self.data.loader`)."""
        if not isinstance(expr.value, (ast.Name, ast.Call, ast.Attribute)):
            return None
        held = self.source(expr.value)
        return Attr(held, expr.attr) if isinstance(held, (Param, CallResult, SelfAttr)) else None

    def _iterated_sources(self, expr: ast.expr) -> tuple:
        """What a loop over `expr` iterates: the sources of the names and attributes it names,
        also through the positional arguments of calls (`enumerate(tqdm(loader))`, a Through;
        `len(...)` aside), either way of a conditional (`tqdm(loader) if main else loader`),
        and what a local wrapping one holds (`pbar = tqdm(self.loader)`). At most
        _MAX_WRAPPING calls deep: a chain of locals each made from the two before it
        (`x2 = cell(x1, x0)`, NASNet's forward) would otherwise give exponentially many paths."""
        found: list = []
        pending: list[tuple[ast.expr, tuple]] = [(expr, ())]
        while pending:
            expr, calls = pending.pop()
            if len(calls) > _MAX_WRAPPING:
                continue
            if isinstance(expr, ast.IfExp):
                pending += [(expr.body, calls), (expr.orelse, calls)]
            elif isinstance(expr, ast.Call):
                callee = self._callee(expr.func)
                if callee is not None and callee != "len":
                    for index, arg in enumerate(expr.args):
                        if isinstance(arg, ast.Starred):
                            break
                        pending.append((arg, (*calls, (callee, index))))
            elif isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
                wrapped = self._wrapped_sources.get(expr.id, ()) if isinstance(expr, ast.Name) else ()
                held = [self.source(expr)] + [
                    Through(item.held, (*calls, *item.calls)) if isinstance(item, Through) else Through(item, calls)
                    for item in wrapped
                ]
                for source in held:
                    source = Through(source, calls) if calls and source is not None and not isinstance(source, Through) else source
                    if isinstance(source, Through) and len(source.calls) > _MAX_WRAPPING:
                        continue
                    if source is not None and source not in found:
                        found.append(source)
        return tuple(found)

    def _listed(self, element: ast.expr, generator: ast.comprehension) -> Each | None:
        """`[DataLoader(ds, sampler=s) for ds, s in zip(datasets, samplers)]`: a list of such values."""
        outer = self.env
        self.env = {**outer, **_loop_names(generator.target, self._elements(generator.iter))}
        try:
            item = self.source(element)
        finally:
            self.env = outer
        return Each(item) if item is not None else None

    def _elements(self, iterable: ast.expr) -> Source | None:
        """What the target of a loop over `iterable` takes: an element of a list built here by
        `append` (`for sampler in samplers`), or of each sequence `zip` pairs (`for dataset,
        sampler in zip(datasets, samplers)`)."""
        if isinstance(iterable, ast.Call) and dotted(iterable.func) == "zip" and not iterable.keywords:
            if any(isinstance(arg, ast.Starred) for arg in iterable.args):
                return None
            sources = [self.source(arg) for arg in iterable.args]
            items = tuple(Element(source) if source is not None else None for source in sources)
            return Group(items) if any(items) else None
        source = self.source(iterable)
        return Element(source) if isinstance(source, Each) else None

    def _append(self, call: ast.Call) -> None:
        """`samplers.append(sampler)` to a local list (`samplers = []`): it holds such values."""
        listed = call.func.value  # type: ignore[attr-defined]
        if not isinstance(listed, ast.Name) or len(call.args) != 1 or call.keywords:
            return
        self._add_element(listed, self.source(call.args[0]))

    def _add_element(self, listed: ast.Name, source: Source | None) -> None:
        """`source` added to the local list or dict `listed` (bound to `[]` or `{}` here, or
        holding such values already): every element it holds is one of them."""
        held = self.env.get(listed.id)
        if source is None or (held is None and listed.id not in self._lists) or (held is not None and not isinstance(held, Each)):
            return
        if held is not None and held.item != source:
            source = Either((held.item, source))
        self.env[listed.id] = Each(source)

    def _inner(self, expr: ast.expr) -> InnerOf | None:
        """Where `expr` takes a followed value's inner module: that value's InnerOf."""
        wrapper = _unwrapped(expr)
        inner = self.source(wrapper) if wrapper is not None else None
        return InnerOf(inner) if inner is not None else None

    def _data_call(self, call: ast.Call, callee: str) -> DataCall | None:
        """What a call that may build a DistributedSampler or DataLoader passes for the
        parameters the program follows; None for any other call."""
        signature = _DATA_PARAMETERS.get(callee.rpartition(".")[2])
        if signature is None:
            return None
        params, named = signature.params, (*signature.params, *signature.keyword_only)
        given = {}
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                return DataCall(starred=True)  # what lands where is unknown
            if index < len(params):
                given[params[index]] = arg
        given.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
        facts: dict = {}
        if any(k.arg is None for k in call.keywords):
            # `**kwargs` cannot repeat a keyword given by name (Python refuses the call): only
            # what is not given by name may come from it; from a local dict literal, its entries
            spread = self._spread(call)
            facts = {
                name: spread.get(name) or Unknown() if name in _DATA_SOURCES and spread is not None else Unknown()
                for name in (*_DATA_LITERALS, *_DATA_SOURCES) if name in named and name not in given
            }
        for name, value in given.items():
            if name in _DATA_LITERALS:
                known = value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else self._flag(value)
                facts[name] = Literal(known) if known is not None else Unknown()
                if known is None and name == "drop_last" and isinstance(self.source(value), Param):
                    facts[name] = self.source(value)  # `drop_last=is_train`: each call of the builder decides
            elif name in _DATA_SOURCES:
                facts[name] = self.source(value) or Unknown()
        kind = callee.rpartition(".")[2]
        if kind == "DistributedSampler":
            when = self._parameter_tests(self._ways)
        elif kind in _LOADER_KINDS:  # `sampler=sampler if train else None`: drawn from only when the test holds
            when = self._parameter_tests(_none_way(given.get("sampler")))
            facts["optional"] = self._may_be_none(given.get("sampler"))
        else:
            when = ()
        return DataCall(**facts, when=when)

    def _spread(self, call: ast.Call) -> dict[str, Source] | None:
        """The sources of the entries a call's one `**name` spreads, where `name` is a local bound
        to dict literals with string keys (`params = {"sampler": DistributedSampler(ds)}` in one
        way of an `if`, `{"shuffle": False}` in the other): per key, what each way holds (an
        Either with None where a way lacks the key); None where `**` spreads anything else."""
        spread = [k.value for k in call.keywords if k.arg is None]
        if len(spread) != 1 or not isinstance(spread[0], ast.Name):
            return None
        ways, pending = [], [self.env.get(spread[0].id)]
        while pending:
            held = pending.pop(0)
            if isinstance(held, Either):
                pending[:0] = list(held.branches)
            elif isinstance(held, Group) and held.keys:
                ways.append(dict(zip(held.keys, held.items)))
            elif held is not None:
                return None
            else:
                ways.append({})  # a dict literal of nothing followed (`{"shuffle": False}`), or unbound that way
        if not ways:
            return None
        keys = {key for way in ways for key, item in way.items() if item is not None}
        return {key: ways[0][key] if len(ways) == 1 else Either(tuple(way.get(key) for way in ways)) for key in keys}

    def _may_be_none(self, expr: ast.expr | None) -> bool:
        """Whether `expr` may hold None on some path to here where its source says otherwise:
        `x if test else None`, a local last bound so on some way of the ifs walked, a parameter
        that defaults to None and is not rebound. (A name an `if` binds on one way only, or to
        None on the other, is an Either with no source that way: Program reads its ways.)"""
        if _none_way(expr):
            return True
        if not isinstance(expr, ast.Name):
            return False
        held = self.env.get(expr.id)
        return expr.id in self._nullable or (held == Param(expr.id) and expr.id in self._none_defaults)

    def _parameter_tests(self, ways: list) -> tuple[ParameterTest, ...]:
        """Of the tests `ways` ((test, which way) pairs: the ifs around the walk), those that test
        a parameter the function never rebinds against literals (`if split == "train":`,
        `if is_train:`, `if mode in ("val", "test"):`)."""
        rebound = _rebound(self._node)
        found = []
        for test, way in ways:
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, way = test.operand, not way
            name, values = None, None
            if isinstance(test, ast.Name):
                name = test.id
            elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name):
                op, right = test.ops[0], test.comparators[0]
                items = right.elts if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
                if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) and all(_literal(item) for item in items):
                    name, values = test.left.id, tuple(item.value for item in items)
                    way = way if isinstance(op, (ast.Eq, ast.In)) else not way
            if name is not None and self.env.get(name) == Param(name) and name not in rebound:
                found.append(ParameterTest(name, values, way))
        return tuple(found)

    def _length(self, expr: ast.expr) -> bool:
        """`len(...)`, or a local bound to one (`n = len(data_loader.dataset)`)."""
        if isinstance(expr, ast.Name):
            return expr.id in self._lengths
        return isinstance(expr, ast.Call) and dotted(expr.func) == "len"

    def _wrapped(self, expr: ast.expr) -> list[str]:
        """The parameters a loop's iterable names, also through a local bound to one (`_wraps`),
        and the attributes of `self` it names, as "self.loader"."""
        nodes = list(walk(expr))
        names = {n.id for n in nodes if isinstance(n, ast.Name)}
        held = {n for n in names if self.env.get(n) == Param(n)}
        held |= {f"self.{n.attr}" for n in nodes if self.self_name and isinstance(n, ast.Attribute) and _named(n.value, self.self_name)}
        return sorted(held.union(*(self._wrapping.get(n, ()) for n in names)))

    def _wraps(self, value: ast.expr) -> list[str]:
        """The parameters a call wraps for iteration through its positional arguments, at any
        depth (`enumerate(tqdm(loader))`), `len(...)` aside: what a loop over its result iterates."""
        found: set[str] = set()
        pending = [value] if isinstance(value, ast.Call) else []
        while pending:
            expr = pending.pop()
            if isinstance(expr, ast.Name):
                found |= {expr.id} if self.env.get(expr.id) == Param(expr.id) else set(self._wrapping.get(expr.id, ()))
            elif isinstance(expr, ast.Call) and dotted(expr.func) != "len":
                pending.extend(arg for arg in expr.args if not isinstance(arg, ast.Starred))
        return sorted(found)

    def _flag(self, value: ast.expr) -> bool | None:
        """What a local flag passed here holds, where the function sets it only to literals and
        every `name = True`/`False` statement that may reach here says the same: `shuffle = False`
        in the `'val'` branch of `if mode == 'train': ... elif mode == 'val': ...`, passed in the
        `else` of another `if mode == 'train'`. A statement in a way of an `if` is out of reach
        where this call is in the other way of an `if` with the same test (one without calls,
        whose names the function never rebinds). None when unknown."""
        if not isinstance(value, ast.Name) or value.id not in self._flags:
            return None
        rebound = _rebound(self._node)
        if value.id in rebound or value.id in {a.arg for a in ast.walk(self._node.args) if isinstance(a, ast.arg)}:
            return None
        fixed = [(ast.dump(test), way) for test, way in self._ways if _steady(test, rebound)]
        reaching = {
            held for held, ways in self._flags[value.id]
            if not any((ast.dump(test), not way) in fixed for test, way in ways)
        }
        return reaching.pop() if len(reaching) == 1 else None

    def _element_call(self, node: ast.Call) -> None:
        """`metric_logger.meters["acc"].update(...)`: a call on an element of a value, kept by
        the dotted name of what is indexed (`utils.MetricLogger().meters`, as `_callee` writes it)."""
        expr = node.func
        while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(expr, ast.Subscript):
                held = self._callee(expr.value)
                if held is not None:
                    self.draft.element_calls.append(Called(held, node.lineno))
                return
            expr = expr.func if isinstance(expr, ast.Call) else expr.value

    def _callee(self, func: ast.AST) -> str | None:
        """The dotted name called; `Maker().method` where the receiver is a local bound to a
        call (`logger = utils.MetricLogger()` ... `logger.sync()`: `utils.MetricLogger().sync`),
        and `Maker().__call__` where the local is an object of a class, called itself
        (`evaluator = MscEval(...)` ... `evaluator(net, loader)`)."""
        callee = dotted(func)
        if callee is None:
            return super_method(func) or self._made_method(func)
        head, _, rest = callee.partition(".")
        source = self.env.get(head)
        if isinstance(source, Either):  # `saver = None` one way, `saver = Saver(...)` the other: a call on it is on the Saver
            made = {branch for branch in source.branches if branch is not None}
            source = made.pop() if len(made) == 1 else source
        if not isinstance(source, CallResult) or not (rest or source.callee.rpartition(".")[2][:1].isupper()):
            return callee
        return f"{source.callee}().{rest or '__call__'}"

    def _made_method(self, func: ast.AST) -> str | None:
        """`Maker(...).method`, a method called on the object a class call makes then and there
        (`Loaders(args, ds).get_eval_dataloader()`): `Maker().method`, as on a local bound to it."""
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Call):
            return None
        maker = dotted(func.value.func)
        return f"{maker}().{func.attr}" if maker is not None and maker.rpartition(".")[2][:1].isupper() else None

    def _bind(self, target: ast.AST, source: Source | None) -> None:
        if isinstance(target, ast.Name):
            self._lists.discard(target.id)
            self._nullable.discard(target.id)
            self._untouched.discard(target.id)
            self._fresh.pop(target.id, None)
            if isinstance(source, CallResult) and not self._placed:
                self._fresh[target.id] = Called(source.callee, source.line)
            # the callee that made the value, also of a tuple it returns (`model, device = setup(net)`)
            made = source.held if isinstance(source, Item) else source
            if isinstance(made, CallResult) and made.callee not in self.draft.made:
                self.draft.made.append(made.callee)
            self._wrapping.pop(target.id, None)
            self._wrapped_sources.pop(target.id, None)
            if source is None:
                self.env.pop(target.id, None)
            else:
                self.env[target.id] = source
        elif isinstance(target, ast.Attribute):
            if source is not None and isinstance(target.value, ast.Name) and target.value.id == self.self_name:
                self.draft.sets[target.attr] = source
            elif source is not None and isinstance(target.value, ast.Name):
                holder = self.env.get(target.value.id)  # `args.train_loader = loader`
                if isinstance(holder, (Param, CallResult)):
                    self.draft.carried.append(Carried(holder, target.attr, source))
        elif isinstance(target, (ast.Tuple, ast.List)):
            # `loader, sampler = build(ds)`: each name holds its element of what the call returns
            starred = any(isinstance(element, ast.Starred) for element in target.elts)
            for index, element in enumerate(target.elts):
                item = Item(source, index, len(target.elts)) if source is not None and not starred else None
                self._bind(element.value if isinstance(element, ast.Starred) else element, item)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and not isinstance(target.slice, ast.Slice):
            # `loaders[task] = DataLoader(...)` under a key the program does not read (a loop's):
            # a dict filled so holds such values, as a list filled by `append` does
            if not (_literal_key(target.slice, str) or _literal_key(target.slice, int)):
                self._add_element(target.value, source)

    def _calls(self, statement: ast.stmt) -> None:
        # `for batch in iter(loader):` makes one pass, the loop's own (its sources): no pull
        iterated = _iterated_calls(statement.iter) if isinstance(statement, (ast.For, ast.AsyncFor)) else set()
        for name, value in ast.iter_fields(statement):
            if name in _CONTROL_FIELDS:
                continue
            for root in value if isinstance(value, list) else (value,):
                if not isinstance(root, ast.AST):
                    continue
                for node in walk(root):
                    if isinstance(node, ast.Call):
                        self._call(node, pulls=id(node) not in iterated)
                    elif isinstance(node, ast.Slice) and node.lower is None and node.upper is not None and self._length(node.upper):
                        self.draft.deduplicates = True  # `preds[: len(dataset)]`: padded duplicates cut off
                    elif isinstance(node, _COMPREHENSIONS):
                        # `preds = [model(x) for x, _ in loader]`: a loop over the loader, as a `for` statement
                        trains = any(isinstance(n, ast.Call) and _named_method(n, "backward") for n in ast.walk(node))
                        self.draft.loops.append(Loop(node.lineno, node.end_lineno, tuple(self._wrapped(node.generators[0].iter)), trains))

    def _touch(self, node: ast.Call) -> None:
        """`fresh` and `handed`: the first argument of a call that is a parameter nothing touched
        before (`DDP(model, device_ids=...)` in `wrap(model, rank)`), then every name the call
        passes or calls a method on is touched."""
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Name) and first.id in self._untouched and (callee := dotted(node.func)):
            self.draft.handed.append(Handed(callee, first.id, node.lineno, tuple(sorted(k.arg for k in node.keywords if k.arg))))
        if dotted(node.func) and dotted(node.func).endswith("init_process_group"):  # type: ignore[union-attr]
            backend = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "backend"), None)
            literal = backend.value if isinstance(backend, ast.Constant) and isinstance(backend.value, str) else None
            bound = any(k.arg == "device_id" for k in node.keywords) or len(node.args) > 8
            self.draft.process_groups.append(GroupCall(dotted(node.func), node.lineno, literal, bound))
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        for expr in (receiver, *node.args, *(k.value for k in node.keywords)):
            for name in walk(expr) if expr is not None else ():
                if isinstance(name, ast.Name):
                    self._fresh.pop(name.id, None)
                    self._untouched.discard(name.id)

    def _call(self, node: ast.Call, pulls: bool = True) -> None:
        plain = dotted(node.func)
        chosen = _chosen_from(node.func) or self._chosen.get(plain or "")
        if chosen is not None:  # `getattr(datasets, name)(...)`: some member of `datasets`
            self.dotted_calls.append(Called(f"{chosen}.*", node.lineno))
        elif (plain or super_method(node.func)) is not None:  # `super().__init__(...)` calls the base's
            self.dotted_calls.append(Called(plain or super_method(node.func), node.lineno))  # type: ignore[arg-type]
            self.dotted_calls += [Called(name, node.lineno) for name in self._aliases.get(plain or "", ())]
        self._touch(node)
        if _keys_by_zip(node):
            self.draft.deduplicates = True  # `results.update(zip(ids, preds))`: a padded duplicate overwrites its id's entry
        if _named_method(node, "append"):
            self._append(node)
        if pulls and plain == "iter" and len(node.args) == 1 and not node.keywords:
            pulled = self._iterated_sources(node.args[0])  # `next(iter(loader))`: a new pass starts here
            if pulled:
                self.draft.pulls.append(Pull(node.lineno, pulled))
        if _named_method(node, "backward"):
            self.draft.backward.append(node.lineno)
            self._backwards += 1
        if isinstance(node.func, ast.Attribute) and node.func.attr == "no_sync":
            self.draft.sync_control = True
        if any(k.arg == "group" for k in node.keywords):
            self.draft.grouped.append(node.lineno)  # only that process group's ranks take part
        if isinstance(node.func, ast.Attribute) and node.func.attr in FRAMEWORK_METHODS and plain is not None:
            receiver = self.source(node.func.value)
            if receiver is not None:
                self.draft.method_calls.append(MethodCall(node.func.attr, receiver, plain, node.lineno))
        if isinstance(node.func, ast.Attribute) and node.func.attr == "step":
            params = self.draft.params
            for test in self._tests:  # `if update_grad: scaler.step(optimizer)`: the step waits for that argument
                for name in walk(test):
                    if isinstance(name, ast.Name) and name.id in params and name.id not in self.draft.gates:
                        self.draft.gates.append(name.id)
        self._forward_pass(node)
        if self.draft.cuda is None and _places_on_cuda(node):
            self.draft.cuda = node.lineno
        bare = _bare_cuda(node)
        if bare and self.draft.bare_cuda is None:
            self.draft.bare_cuda = node.lineno
        elif bare is False:
            self.draft.device_moves = True
        callee = self._callee(node.func)
        if callee is None:
            self._element_call(node)
            return
        self.draft.invocations.append(Called(callee, node.lineno))
        files.read_call(self, node, callee)
        args: list = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                break  # positions after a *args are unknown
            args.append(self.source(arg))
        keywords = {k.arg: self.source(k.value) for k in node.keywords if k.arg is not None}
        keywords = {k: v for k, v in keywords.items() if v is not None}
        if any(args) or keywords:
            self.draft.calls.append(PassingCall(callee, tuple(args), keywords, node.lineno))
        literals = [(i, a.value) for i, a in enumerate(node.args) if _literal(a)]
        literals += [(k.arg, k.value.value) for k in node.keywords if k.arg is not None and _literal(k.value)]
        if literals:
            self.draft.literals.append(LiteralCall(callee, node.lineno, tuple(literals)))
        # Where a model's inner module is handed on, with the call and the argument as written (a rule
        # finds the call by them).
        if any(isinstance(source, InnerOf) for source in (*args, *keywords.values())):
            given = {**dict(enumerate(node.args)), **{k.arg: k.value for k in node.keywords}}
            for position, source in [*enumerate(args), *keywords.items()]:
                arg = given[position]
                if isinstance(source, InnerOf) and dotted(arg):
                    self.draft.unwrapped.append(InnerHanded(plain, callee, position, dotted(arg), source, node.lineno))

    def _forward_pass(self, node: ast.Call) -> None:
        """`forward_passes`: each call of a followed value, `model(x)` or `model.forward(x)`,
        where gradients are on."""
        called = node.func.value if isinstance(node.func, ast.Attribute) and node.func.attr == "forward" else node.func
        if self._gradients_off:
            return
        if isinstance(called, ast.Name):
            source = self.env.get(called.id)
        elif isinstance(called, ast.Attribute) and isinstance(called.value, ast.Name):  # `self.model(x)`
            source = self.source(called)
        else:
            return
        if source is not None:
            self.draft.forward_passes.append(ForwardPass(source, node.lineno))

    def _merge(self, other: dict[str, Source]) -> None:
        """After an `if`: a name bound differently by its two ways holds either value (see Program's `_either`)."""
        for name in {*other, *self.env}:
            branches = (other.get(name), self.env.get(name))
            if branches[0] != branches[1]:
                self.env[name] = Either(branches)

    def _returned(self, value: ast.expr | None) -> Called | None:
        """The call whose result `return` gives untouched since (`return Net()`, `model =
        Net(cfg)` ... `return model`), else None."""
        if isinstance(value, ast.Name):
            return self._fresh.get(value.id)
        source = self.source(value) if isinstance(value, ast.Call) and not self._placed else None
        return Called(source.callee, source.line) if isinstance(source, CallResult) else None

    def _statements(self, body: list[ast.stmt]) -> None:
        for index, statement in enumerate(body):
            if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
                continue
            backwards = self._backwards
            self._calls(statement)
            self.guards += guards_of(statement, body, index)
            files.read_statement(self, statement)
            value = getattr(statement, "value", None)
            self._placed = isinstance(value, ast.Call) and (
                any(k.arg in ("device", "device_map") for k in value.keywords) or _moves(value)
            )
            loop = self._statement(statement, value)
            if isinstance(statement, ast.If):
                self._ways_of(statement)
                continue
            self._blocks(statement)
            if loop is not None:  # a backward in the loop (its body, its iterable)
                self.draft.loops[loop] = replace(self.draft.loops[loop], trains=self._backwards > backwards)

    def _statement(self, statement: ast.stmt, value: ast.AST | None) -> int | None:
        """What one statement binds, returns or stores; for a `for` loop, the index of its Loop."""
        if isinstance(statement, ast.Return):
            self.draft.fresh.append(self._returned(value))
        if isinstance(statement, ast.Assign):
            self._assign(statement)
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            self._bind(statement.target, self.source(statement.value))
        elif isinstance(statement, ast.Return) and statement.value is not None:
            source = self.source(statement.value)
            if source is not None:
                self.draft.returns.append(source)
            else:
                self.draft.other_returns = True  # may return what the program does not follow
        elif isinstance(statement, ast.Return):
            self.draft.other_returns = True
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            iterated = tuple(self._wrapped(statement.iter))
            sources = self._iterated_sources(statement.iter)
            self._bind(statement.target, self._elements(statement.iter))
            self.draft.loops.append(Loop(statement.lineno, statement.end_lineno, iterated, False, sources))
            return len(self.draft.loops) - 1
        elif isinstance(statement, ast.While):
            self.draft.loops.append(Loop(statement.lineno, statement.end_lineno, (), False))
            return len(self.draft.loops) - 1
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, None)
        return None

    def _assign(self, statement: ast.Assign) -> None:
        if any(isinstance(t, ast.Attribute) and t.attr == "require_backward_grad_sync" for t in statement.targets):
            self.draft.sync_control = True
        if _sets_flag(statement):
            self._flags.setdefault(statement.targets[0].id, []).append((statement.value.value, tuple(self._ways)))
        source = self.source(statement.value)
        if self._length(statement.value):
            self._lengths.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        chosen = _chosen_from(statement.value)
        for target in statement.targets:
            self._bind(target, source)
            if isinstance(target, ast.Name) and _none_way(statement.value):
                self._nullable.add(target.id)
            if isinstance(target, ast.Name):
                (self._chosen.__setitem__(target.id, chosen) if chosen else self._chosen.pop(target.id, None))
                named = _named_alternatives(statement.value)
                (self._aliases.__setitem__(target.id, named) if named else self._aliases.pop(target.id, None))
            if isinstance(target, ast.Name) and self._wraps(statement.value):
                self._wrapping[target.id] = self._wraps(statement.value)
            if isinstance(target, ast.Name) and isinstance(statement.value, (ast.Call, ast.IfExp)):
                wrapped = self._iterated_sources(statement.value)
                if wrapped:
                    self._wrapped_sources[target.id] = wrapped
            if isinstance(target, ast.Name) and _empty_container(statement.value):
                self._lists.add(target.id)

    def _ways_of(self, statement: ast.If) -> None:
        """Both ways of an `if`, each from what held before it, merged after."""
        before, host = dict(self.env), (set(self.moved), set(self.hosted), set(self.offload_configs), set(self.sequences))
        nullable_before = set(self._nullable)
        self._tests.append(statement.test)
        self._ways.append((statement.test, True))
        self._statements(statement.body)
        self._tests.pop()
        self._ways[-1] = (statement.test, False)
        after_body, self.env = self.env, dict(before)
        nullable, self._nullable = self._nullable, set(nullable_before)
        host_after_body = (self.moved, self.hosted, self.offload_configs, self.sequences)
        self.moved, self.hosted, self.offload_configs, self.sequences = host
        self._statements(statement.orelse)
        self._ways.pop()
        self._merge(after_body)
        self._nullable |= nullable  # None on either way: None on some path
        self.moved &= host_after_body[0]  # on the host only if both ways leave it there
        self.hosted &= host_after_body[1]
        self.offload_configs &= host_after_body[2]
        self.sequences &= host_after_body[3]

    def _blocks(self, statement: ast.stmt) -> None:
        """The blocks of a compound statement other than `if`: a loop's, a `with`'s, a `try`'s, a `match`'s."""
        off = isinstance(statement, (ast.With, ast.AsyncWith)) and any(
            _turns_gradients_off(item.context_expr) for item in statement.items
        )
        self._gradients_off += off
        contexts = files.offloading(self, statement) if isinstance(statement, (ast.With, ast.AsyncWith)) else []
        self.offloading += contexts
        for name in ("body", "orelse", "finalbody"):
            self._statements(getattr(statement, name, None) or [])
        self._gradients_off -= off
        del self.offloading[len(self.offloading) - len(contexts):]
        for handler in getattr(statement, "handlers", None) or []:
            self._statements(handler.body)
        for case in getattr(statement, "cases", None) or []:
            self._statements(case.body)


def definitions(body: list[ast.stmt], cls: str | None = None):
    """Every function and class a module defines, at any depth and in source order, as (node,
    the class whose body holds it or None): how summaries key functions (`name`, `Class.name`)."""
    for node in body:
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            yield node, cls
            yield from definitions(node.body, node.name if isinstance(node, ast.ClassDef) else None)
        else:
            for name in ("body", "orelse", "finalbody"):
                yield from definitions(getattr(node, name, None) or [], cls)
            for handler in getattr(node, "handlers", None) or []:
                yield from definitions(handler.body, cls)


def replaced_definitions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions the module's own code defines at its top level (`def f` in its body, not
    under an `if` or `try`) and defines again later there: each `def` binds the name anew, so
    once the module is imported the name holds the last, and every call through it (from another
    module, or from a function that runs after import) reaches that one."""
    last: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    top = [node for node in tree.body if isinstance(node, _FUNCTIONS)]
    for node in top:
        last[node.name] = node
    return [node for node in top if last[node.name] is not node]


def _function_key(node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None) -> str:
    return f"{cls}.{node.name}" if cls else node.name


def _sets_flag(statement: ast.Assign) -> bool:
    """`name = True` or `name = False`."""
    value = statement.value
    return len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) and (
        isinstance(value, ast.Constant) and isinstance(value.value, bool)
    )


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _iterated_calls(expr: ast.expr) -> set[int]:
    """The ids of the calls a `for` loop iterates through (`iter(loader)`, `enumerate(iter(loader))`,
    either way of a conditional): each runs once, when the loop starts."""
    found: set[int] = set()
    pending = [expr]
    while pending:
        expr = pending.pop()
        if isinstance(expr, ast.IfExp):
            pending += [expr.body, expr.orelse]
        elif isinstance(expr, ast.Call):
            found.add(id(expr))
            pending += expr.args
    return found


def _loop_names(target: ast.expr, source: Source | None) -> dict:
    """The names a comprehension's target binds, each to its part of `source` (None: unknown)."""
    if isinstance(target, ast.Name):
        return {target.id: source}
    if not isinstance(target, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in target.elts):
        return {}
    parts = [Item(source, index) if source is not None else None for index in range(len(target.elts))]
    return {name: held for element, part in zip(target.elts, parts) for name, held in _loop_names(element, part).items()}


def _empty_container(node: ast.expr) -> bool:
    """`[]` or `{}`: a list or dict the function fills (`append`, `loaders[task] = ...`)."""
    return isinstance(node, ast.List) and not node.elts or isinstance(node, ast.Dict) and not node.keys


def _literal_key(node: ast.AST | None, kind: type) -> bool:
    """A literal string (`"val"`), or a non-negative int: a dict key or an index the program follows."""
    return isinstance(node, ast.Constant) and type(node.value) is kind and (kind is str or node.value >= 0)


def _literal(node: ast.AST) -> bool:
    """A string, number, bool or None written as is."""
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None)))


def _rebound(function: ast.AST) -> set[str]:
    """The names `function`'s statements bind other than by `name = True`/`False`."""
    flags = {id(node.targets[0]) for node in ast.walk(function) if isinstance(node, ast.Assign) and _sets_flag(node)}
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in flags:
            names.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _steady(test: ast.expr, rebound: set[str]) -> bool:
    """An `if` test that says the same each time the function evaluates it: no calls, and no
    name the function rebinds."""
    return not any(
        isinstance(node, ast.Call) or (isinstance(node, ast.Name) and node.id in rebound)
        for node in ast.walk(test)
    )


# The DataLoader arguments whose values are shipped to worker processes.
_SHIPPED = frozenset(("num_workers", "collate_fn", "worker_init_fn"))
_ACCELERATOR_NAME = ACCELERATOR.name.rpartition(".")[2]


def _forwarded(node: ast.FunctionDef | ast.AsyncFunctionDef, star: str) -> Called | None:
    """The `...DataLoader(...)` call an `__init__` hands its own `**kwargs`
    (`self.loader = DataLoader(**kwargs)`), where it names none of the arguments shipped to
    workers (it may set or drop them): what its caller passes reaches the DataLoader as is."""
    found = None
    for inner in walk(node):
        named = (
            inner.arg if isinstance(inner, (ast.arg, ast.keyword)) else inner.id if isinstance(inner, ast.Name)
            else inner.attr if isinstance(inner, ast.Attribute)
            else inner.value if isinstance(inner, ast.Constant) and isinstance(inner.value, str) else None
        )
        if named in _SHIPPED:
            return None
        if found is None and isinstance(inner, ast.Call):
            callee = dotted(inner.func)
            handed = any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == star for k in inner.keywords)
            if handed and callee and callee.rpartition(".")[2] == "DataLoader":
                found = Called(callee, inner.lineno)
    return found


def _is_none(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _none_defaults(arguments: ast.arguments) -> set[str]:
    """The parameters whose default is None."""
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
             *zip(arguments.kwonlyargs, arguments.kw_defaults)]
    return {arg.arg for arg, default in pairs if default is not None and _is_none(default)}


def _none_way(expr: ast.AST | None) -> list:
    """The test of `x if test else None` (or `None if test else x`), and the way it must go for
    the value to be `x`; empty for any other expression."""
    if isinstance(expr, ast.IfExp) and _is_none(expr.orelse) != _is_none(expr.body):
        return [(expr.test, _is_none(expr.orelse))]
    return []


def _unwrapped(expr: ast.AST) -> ast.expr | None:
    """`model` where `expr` takes the module a DDP model wraps: `model.module`,
    `model.module if distributed else model` (either way round: the wrapped run takes the
    inner module) and `getattr(model, "module", model)`; None otherwise."""
    if isinstance(expr, ast.Attribute) and expr.attr == "module":
        return expr.value
    if isinstance(expr, ast.IfExp):
        for inner, other in ((expr.body, expr.orelse), (expr.orelse, expr.body)):
            if isinstance(inner, ast.Attribute) and inner.attr == "module" and dotted(inner.value) is not None:
                if dotted(inner.value) == dotted(other):
                    return other
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr":
        name = expr.args[1] if len(expr.args) >= 2 else None
        if isinstance(name, ast.Constant) and name.value == "module":
            return expr.args[0]
    return None


_GRADIENTS_OFF = frozenset(spelling.rpartition(".")[2] for spelling in NO_GRAD)


def _turns_gradients_off(expr: ast.AST) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()` (as a context or a decorator), by the last
    part of the name: a summary reads no imports."""
    name = dotted(expr.func if isinstance(expr, ast.Call) else expr)
    return name is not None and name.rpartition(".")[2] in _GRADIENTS_OFF


def _takes_input_gradient(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the function's backward() is for the gradient of an input, not of parameters: it
    reads `x.grad` of a local it asked gradients of (`x = Variable(..., requires_grad=True)`,
    `x.requires_grad_()`, `x.requires_grad = True`) and steps no optimizer (no `step()` call):
    an adversarial attack or a saliency map, which trains nothing."""
    inside = list(walk(node))
    asked: set[str] = set()
    for n in inside:
        if isinstance(n, ast.Call) and _named_method(n, "step"):
            return False
        if isinstance(n, ast.Call) and _named_method(n, "requires_grad_") and isinstance(n.func.value, ast.Name):  # type: ignore[attr-defined]
            asked.add(n.func.value.id)  # type: ignore[attr-defined]
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and any(
            k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True for k in n.value.keywords
        ):
            asked.update(t.id for t in n.targets if isinstance(t, ast.Name))
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and n.value.value is True:
            asked.update(t.value.id for t in n.targets if isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                         and isinstance(t.value, ast.Name))
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.value, ast.Name) and n.value.id in asked
               for n in inside)


def _cycled(node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> ParameterLoop | None:
    """The parameter and the loop of a generator that re-iterates a parameter
    in an endless loop and never calls set_epoch (`while True: for x in dl: yield x`): each
    pass over it is a new epoch."""
    inside = list(walk(node))
    if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in inside):
        return None
    if any(isinstance(n, ast.Attribute) and n.attr == "set_epoch" for n in inside):
        return None
    for loop in inside:
        endless = isinstance(loop, ast.While) and isinstance(loop.test, ast.Constant) and loop.test.value in (True, 1)
        if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call):
            endless = dotted(loop.iter.func) in ("count", "itertools.count")
        if not endless:
            continue
        for inner in (n for statement in loop.body for n in walk(statement)):  # type: ignore[union-attr]
            if isinstance(inner, ast.For):
                for name in (n.id for n in walk(inner.iter) if isinstance(n, ast.Name)):
                    if name in params:
                        return ParameterLoop(params.index(name), loop.lineno)
    return None


def _passed_once(node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> ParameterLoop | None:
    """The parameter and the loop of a function that makes one pass over a
    parameter (`for x in loader:`, also through calls: `enumerate(loader)`,
    `enumerate(metric_logger.log_every(loader, ...))`) and never calls set_epoch, where the parameter is
    used for nothing else but `len(loader)` and attribute reads: `train_one_epoch(model,
    loader, ...)`, which a caller's epoch loop calls once per epoch."""
    inside = list(walk(node))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) or (isinstance(n, ast.Attribute) and n.attr == "set_epoch") for n in inside):
        return None
    allowed: dict[str, set[int]] = {}
    loops: dict[str, int] = {}
    for n in inside:
        if isinstance(n, (ast.Call)) and dotted(n.func) == "len":
            for arg in n.args:
                if isinstance(arg, ast.Name):
                    allowed.setdefault(arg.id, set()).add(id(arg))
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            allowed.setdefault(n.value.id, set()).add(id(n.value))
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            pending = [n.iter]
            while pending:  # `loader`, `enumerate(loader)`, `enumerate(logger.log_every(loader, 10))`
                arg = pending.pop()
                if isinstance(arg, ast.Call):
                    pending.extend(arg.args)
                elif isinstance(arg, ast.Name) and arg.id in params:
                    allowed.setdefault(arg.id, set()).add(id(arg))
                    loops.setdefault(arg.id, n.lineno)
    for name, line in loops.items():
        uses = [n for n in inside if isinstance(n, ast.Name) and n.id == name]
        if all(isinstance(n.ctx, ast.Load) and id(n) in allowed[name] for n in uses):
            return ParameterLoop(params.index(name), line)
    return None


def summarize(tree: ast.Module, text: str | None = None) -> ModuleSummary:
    """A module's summary: its functions by the key the semantic model gives them (`name`, or
    `Class.name` for a method), its classes with their bases as written, and who runs them."""
    functions: dict[str, FunctionSummary] = {}
    classes: dict[str, ClassSummary] = {}
    context: dict[str, FunctionContext] = {"": _module_context(tree)}  # who runs it: ddplint.model.context
    paths, data = files.module_paths(tree), _data_globals(tree)
    replaced = {id(node) for node in replaced_definitions(tree)}
    for node, cls in definitions(tree.body):
        if isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, ClassSummary(node.lineno, tuple(dotted(b) or UNNAMED_BASE for b in node.bases)))
            continue
        key = _function_key(node, cls)
        if key not in functions and id(node) not in replaced:
            reader = _FunctionReader(node, cls, paths, data)
            functions[key] = reader.summary()
            context[key] = _function_context(node, reader.guards, reader.dotted_calls)
    binds = _DEVICE_TEXT.search(text) is not None if text is not None else binds_device(tree)
    imports = {name: tuple(origins) for name, origins in _guarded_imports(tree.body).items()}
    return ModuleSummary(functions, classes, context, binds, imports)


def module_code(tree: ast.Module) -> FunctionSummary:
    """The summary of a module's own code (what runs when it is run or imported), read as a
    function's body is."""
    return _FunctionReader(_as_function(tree.body), None).summary()


def _as_function(body: list[ast.stmt]) -> ast.FunctionDef:
    """Module-level statements as the body of a function of no parameters, for a reader."""
    nothing = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name="", args=nothing, body=body or [ast.Pass()], decorator_list=[], lineno=1, **_NO_TYPE_PARAMS)


def _data_globals(tree: ast.Module) -> dict[str, Source]:
    """The module's names that its functions read as globals holding a DistributedSampler,
    DataLoader or BatchSampler its own top-level code makes (`train_sampler =
    DistributedSampler(train_dataset)` in a script whose `run_training()` builds the loader
    over it): each bound by one such statement of the module's top level and by nothing else
    in the module (no other binding, no `global` statement), so every read sees that value."""
    made = [
        statement for statement in tree.body
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Call) and (dotted(statement.value.func) or "").rpartition(".")[2] in _DATA_PARAMETERS
    ]
    if not made:
        return {}
    bound = _module_bindings(tree)
    declared = {name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names}
    env = _FunctionReader(_as_function(made), None).env
    return {
        name: source for name, source in env.items()
        if bound.get(name) == 1 and name not in declared and isinstance(source, CallResult) and source.data is not None
    }


def _module_bindings(tree: ast.Module) -> dict[str, int]:
    """How many times the module's own code (outside its functions and classes) binds each name."""
    bound: dict[str, int] = {}
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [(alias.asname or alias.name).partition(".")[0] for alias in node.names]
        else:
            names = [node.id] if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) else []
            pending.extend(ast.iter_child_nodes(node))
        for name in names:
            bound[name] = bound.get(name, 0) + 1
    return bound


# -- who runs what (for ddplint.model.context) -----------------------------------------------


def _leaves(body: list[ast.stmt]) -> bool:
    """The block ends by leaving its enclosing block: return, raise, continue, break, exit()."""
    last = body[-1] if body else None
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and dotted(last.value.func) in _EXITS


def guards_of(statement: ast.stmt, body: list[ast.stmt], index: int) -> list[Guard]:
    """The guards an `if` statement (`body[index]`) puts around code; none for another statement."""
    if not isinstance(statement, ast.If):
        return []
    test = ast.unparse(statement.test)
    found = [Guard(test, statement.body[0].lineno, statement.body[-1].end_lineno, True)]
    if statement.orelse:
        found.append(Guard(test, statement.orelse[0].lineno, statement.orelse[-1].end_lineno, False))
    elif _leaves(statement.body) and index + 1 < len(body):
        # `if rank != 0: return`: the rest of this block runs where the test is false.
        found.append(Guard(test, body[index + 1].lineno, body[-1].end_lineno, False))
    return found


def _chosen_from(expr: ast.AST) -> str | None:
    """`datasets` for `getattr(datasets, cfg.name)` (a name not written out): a member of that
    module or object chosen at run time; None for anything else."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr"):
        return None
    if len(expr.args) not in (2, 3) or expr.keywords or isinstance(expr.args[1], ast.Constant):
        return None
    return dotted(expr.args[0])


def _named_alternatives(expr: ast.AST) -> tuple[str, ...]:
    """The names a value is one of: `build_a if flag else build_b` (either), `build` (itself);
    () for anything else (a call's result, a literal)."""
    if isinstance(expr, ast.IfExp):
        body, orelse = _named_alternatives(expr.body), _named_alternatives(expr.orelse)
        return body + orelse if body and orelse else ()
    name = dotted(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    return (name,) if name else ()


def _read_block(body: list[ast.stmt], guards: list[Guard], calls: list[Called]) -> None:
    """Guards and calls of the statements of module code (not of the functions it defines; the
    function reader records the same of a function as it walks it)."""
    for index, statement in enumerate(body):
        if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
            continue
        for name, value in ast.iter_fields(statement):
            if name in _CONTROL_FIELDS:
                continue
            for root in value if isinstance(value, list) else (value,):
                if isinstance(root, ast.AST):
                    calls += [Called(callee, node.lineno) for node in walk(root)
                              if isinstance(node, ast.Call) and (callee := dotted(node.func)) is not None]
        guards += guards_of(statement, body, index)
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list):
                _read_block(inner, guards, calls)
        for handler in getattr(statement, "handlers", None) or []:
            _read_block(handler.body, guards, calls)
        for case in getattr(statement, "cases", None) or []:
            _read_block(case.body, guards, calls)


def _function_context(node: ast.FunctionDef | ast.AsyncFunctionDef, guards: list[Guard], calls: list[Called]) -> FunctionContext:
    """Who runs a function: its guards and calls, its decorators and, when it is short enough
    to be read as a predicate, where its lines are."""
    decorators = tuple(d for d in (dotted(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list) if d)
    short = (node.end_lineno or node.lineno) - node.lineno <= MAX_PREDICATE_LINES
    predicate = short and isinstance(node, ast.FunctionDef) and any(isinstance(n, ast.Return) and n.value is not None for n in walk(node))
    lines = (node.lineno, node.end_lineno or node.lineno) if predicate else None  # read when judged
    return FunctionContext(tuple(guards), tuple(calls), decorators, lines)


def _module_context(tree: ast.Module) -> FunctionContext:
    """Who runs the module's own code (what runs when it is imported or run)."""
    guards: list[Guard] = []
    calls: list[Called] = []
    _read_block(tree.body, guards, calls)
    return FunctionContext(tuple(guards), tuple(calls))


def _guarded_imports(body: list[ast.stmt], inside: bool = False, found: dict | None = None) -> dict[str, list[str]]:
    """The module's names that imports in its top-level `if` and `try` blocks bind, with every
    origin each is bound to, in order, as the project index writes them (relative ones keep
    their dots): `if 'cifar' in cfg.dataset: from lib.datasets.cifar import get_datasets` /
    `else: from lib.datasets.imagenet import get_datasets`. The index reads only the imports at
    the top level. The last binding qualifies the name, as for a local (see `_FunctionReader`);
    `Program.values_of` follows the others too."""
    found = {} if found is None else found

    def bind(name: str, origin: str) -> None:
        origins = found.setdefault(name, [])
        if origin in origins:
            origins.remove(origin)
        origins.append(origin)

    for node in body:
        if isinstance(node, ast.Import) and inside:
            for alias in node.names:
                bind(alias.asname or alias.name.partition(".")[0], alias.name if alias.asname else alias.name.partition(".")[0])
        elif isinstance(node, ast.ImportFrom) and inside:
            prefix = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    bind(alias.asname or alias.name, prefix + alias.name if prefix.endswith(".") else f"{prefix}.{alias.name}")
        elif isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, node.orelse, getattr(node, "finalbody", []), *(h.body for h in getattr(node, "handlers", []))):
                _guarded_imports(block, True, found)
    return found


# Ways a process picks its GPU (attributes called, or a name in a string): the module that has
# one may set the device of every rank that runs it.
_DEVICE_BINDINGS = frozenset({"set_device", "set_device_index", "cudart", "set_default_device"})
# The same, read from the text (a mention in a comment counts: "may bind" keeps a rule silent).
_DEVICE_TEXT = re.compile(r"set_device|cudart|set_default_device|cuda\.device\s*\(|\bdevice_id\s*=|CUDA_VISIBLE_DEVICES")


def binds_device(tree: ast.Module, literal_lists_bind: bool = True) -> bool:
    """Whether the module may bind its process to a device: calls `torch.cuda.set_device` or a
    kin, enters `torch.cuda.device(...)`, passes `device_id=` or names CUDA_VISIBLE_DEVICES.
    Without `literal_lists_bind`, setting that variable to one literal list
    (`os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"`) does not count: every rank sees the same GPUs."""
    literal = set() if literal_lists_bind else {
        id(target.slice) for node in walk(tree) if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets if isinstance(target, ast.Subscript) and dotted(target.value) == "os.environ"
    }
    for node in walk(tree):
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name.rpartition(".")[2] in _DEVICE_BINDINGS or name.endswith("cuda.device"):
                return True
            if any(k.arg == "device_id" for k in node.keywords):
                return True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "CUDA_VISIBLE_DEVICES" in node.value and id(node) not in literal:
            return True
    return False

