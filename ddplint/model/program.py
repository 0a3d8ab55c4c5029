"""The program model: which values are DDP models, followed across functions and modules.

A DDP program is several functions: `main()` wraps the model, `train_one_epoch(model, ...)` in
`engine.py` steps it, a `Trainer` keeps it as `self.model`, a `build_model()` returns it. A rule
that sees one function cannot know that the `model` parameter it is looking at is a DDP model.
The program answers that, with the place that makes it so, and knows no rule.

It is built on the project index (ddplint.model.project), which says which modules exist, what each
imports and which ones name DDP or another distributed marker. Only the modules a value can
reach are read with CPython's `ast`: those that name DDP or a distributed marker, the modules of
the functions they hand a value to, and the importers of a module whose function returns one. Each is summarised once
(`summarize`: per function its parameters, the calls that pass a value it can follow, what it
returns and what it stores on `self`), and the summaries are solved together to a fixed point:

- a parameter is a DDP model when some call passes one to it;
- `self.x` is a DDP model in a class when some method stores one there;
- a function returns a DDP model when some `return` gives one.

A value is followed through local assignments in statement order (the last assignment before
a call decides, whatever branch it is in), parameters, returns, `self` attributes, and classes
(`Trainer(model)` reaches `Trainer.__init__`). `model.module` is not a DDP model but a value
of its own, the Inner module of one (also `model.module if distributed else model` and
`getattr(model, "module", model)`), followed the same way (ddplint.model.inner asks who trains
it). A conditional expression holds the DDP model, sampler or loader one branch makes
(`DDP(m) if distributed else m`): the distributed run takes that branch. Anything else (containers, globals, `*args`) is not followed, so the program errs toward
saying nothing. Names are qualified by the module's imports: the index's top-level ones, and
those in top-level `if` and `try` blocks (`if 'cifar' in cfg.dataset: from data.cifar import
build` / `else: ...`), which the summary keeps. At most MAX_MODULES modules and MAX_SOURCE
bytes of their source are read for the solution (a module is read whole, and library modules of
100-300 kB make bytes, not modules, the cost); the table of evaluated samplers, asked once of
the whole solution (ddplint.model.loaders: who evaluates a loader and combines the results),
reads on up to MAX_ASKED modules more (`asking`). What lies beyond is unknown: an answer that
met a bound (`refused`) says nothing. A warm run takes the solution's digest from the cache
(ddplint.model.solution) and builds no program while no file it read has changed.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
from dataclasses import dataclass, replace

from ddplint.model import context as process_context
from ddplint.prefilter.screens import dotted, walk
from ddplint.model import values
from ddplint.core.torch_api import (
    ACCELERATOR, BATCH_SAMPLER, COMBINING_COLLECTIVES, DATALOADER, DDP, DEDUPLICATING_METHODS, DISTRIBUTED_SAMPLER,
    LOSS_SCALER_GATE, LOSS_SCALERS, NO_GRAD,
)

MAX_MODULES = 150  # modules read per run: past this, what a value would reach is unknown
# Modules the table of evaluated samplers may read beyond MAX_MODULES: a monorepo of many
# training projects spends MAX_MODULES on its starting points' first helpers (Cream: 50 starting
# points, 106 modules at one call from them), and the table reads only the evaluation helpers
# its loaders are handed to (Cream: 20).
MAX_ASKED = 100
MAX_SOURCE = 2_000_000  # bytes of source read per run, past this as past MAX_MODULES (precision corpus: 1.94 MB at most)
MAX_ROUNDS = 12  # rounds of the fixed point; a chain of helpers deeper than this is unknown
MAX_GIVES, MAX_GIVES_DEPTH = 8, 3  # classes one call may give, and helpers followed for them (`gives`)
MAX_RESULTS = 4  # distinct data values one function may return (`return a if x else b`, branches)
_CONTROL_FIELDS = frozenset(("body", "orelse", "finalbody", "handlers", "cases"))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Python 3.12 gave functions `type_params`, and a node built without it lacks the attribute
# (3.13 fills it in); 3.10 and 3.11 would keep an unknown keyword as a stray attribute.
_NO_TYPE_PARAMS = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
# `osp.join(this_dir, '..', 'lib')` in an `_init_paths` module: a folder it puts on sys.path
_PATH_JOIN = re.compile(r"""join\(\s*\w+\s*((?:,\s*['"][^'"\n]*['"]\s*)+)\)""")
# Methods that return the object they are called on: `Net().cuda(rank)` is the `Net`.
_SAME_VALUE_METHODS = frozenset(("cuda", "to", "float", "half", "bfloat16", "double", "train", "requires_grad_"))


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
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _SAME_VALUE_METHODS:
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


@dataclass(frozen=True)
class Instance:
    """An object of the project class `cls` of `module`, made at `made_at`."""

    module: str
    cls: str
    made_at: str
    passed_at: str | None = None


@dataclass(frozen=True)
class LossScaler:
    """An object of a library loss scaler (torch_api.LOSS_SCALERS: timm's NativeScaler), made at
    `made_at`: calling it runs the backward, and the optimizer step unless its gate says not to.
    What a call of it does is the catalog's `LOSS_SCALER_CALL`, as a summary of its `__call__`."""

    made_at: str
    passed_at: str | None = None


# A call of a LossScaler, as a function summary says what a call does (Program.callee_summary).
LOSS_SCALER_CALL = {"params": list(LOSS_SCALERS.params), "bound": False, "class": None, "invocations": [],
                    "backward": [0], "gates": [LOSS_SCALER_GATE]}


@dataclass(frozen=True)
class Origin:
    """Where a value became a DDP model (`wrapped_at`, "train.py:141") and, for a parameter,
    the call that hands it to the function (`passed_at`)."""

    wrapped_at: str
    passed_at: str | None = None

    def describe(self, name: str) -> str:
        text = f"`{name}` is wrapped in DDP at {self.wrapped_at}"
        return f"{text} and passed here by the call at {self.passed_at}" if self.passed_at else text


@dataclass(frozen=True)
class Prepared:
    """What Accelerate's `accelerator.prepare(...)` returns, each of its results (`prepared_at`,
    "train.py:30"): the model among them is DDP-wrapped when `accelerate launch` runs several
    processes. `passed_at`: the call that hands it to a parameter."""

    prepared_at: str
    passed_at: str | None = None


@dataclass(frozen=True)
class Inner:
    """The module inside a DDP model (`model.module`, `model_without_ddp = model.module`):
    calling it runs the model without DDP's forward. `wrapped_at`: where the DDP model was
    made; `passed_at`: the call that hands it to a parameter."""

    wrapped_at: str
    passed_at: str | None = None


@dataclass(frozen=True)
class Data:
    """A torch DistributedSampler (`kind` "sampler") or a DataLoader drawing from one ("loader",
    with that `sampler`), made at `made_at`. `shuffle` and `drop_last` are the sampler's, None
    where the code decides at run time; `passed_at`: the call that hands it to a parameter."""

    kind: str
    made_at: str
    shuffle: bool | None = True
    drop_last: bool | None = False
    sampler: Data | None = None
    passed_at: str | None = None
    # The sampler's dataset where it is a parameter of the function that makes it: (module,
    # key, parameter), so that a caller of a builder knows which argument it shards.
    dataset: tuple | None = None
    # The builder's parameter tests the sampler is made under (`if split == "train":`), as
    # (module, key, parameter, values, way): a call passing a literal the test rules out gets none.
    when: tuple = ()

    @property
    def pads(self) -> bool:
        """It repeats samples to give every rank as many: drop_last is known to be off."""
        return self.drop_last is False


def _wraps(value) -> bool:
    """Whether a function's result is a DDP model or a tuple that holds one."""
    return isinstance(value, Origin) or isinstance(value, Pack) and any(isinstance(item, Origin) for item in value.items)


@dataclass(frozen=True)
class Pack:
    """A tuple or list of values, by position (None where unknown): what `return a, b` gives;
    a dict literal's values, with their `keys`; a list built by `append` in a loop (`each`: its
    every element is the one item)."""

    items: tuple
    passed_at: str | None = None
    keys: tuple = ()
    each: bool = False

    def at(self, index: int | str):
        """The item at a position, or under a key of a dict (`loaders["val"]`); None if unknown."""
        if self.each:
            return self.items[0]
        if isinstance(index, str):
            index = self.keys.index(index) if index in self.keys else len(self.items)
        return self.items[index] if index < len(self.items) else None


# Parameters of the data classes the summaries keep, by position: a literal (shuffle,
# drop_last) or the source of the value passed (sampler, batch_sampler).
_DATA_PARAMETERS = {
    "DistributedSampler": DISTRIBUTED_SAMPLER.params, "DataLoader": DATALOADER.params, "BatchSampler": BATCH_SAMPLER.params,
}
_DATA_LITERALS = ("shuffle", "drop_last")
_DATA_SOURCES = ("dataset", "sampler", "batch_sampler")


# -- one module's summary ------------------------------------------------------------------


class _FunctionReader:
    """The summary of one function: its parameters, and in statement order the calls that
    pass a followed value, its returns and what it stores on `self`."""

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None, paths: dict | None = None) -> None:
        """`paths`: the module's own names bound to a file (`CKPT = "ckpt/best.pt"`)."""
        arguments = node.args
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        decorators = {dotted(d) for d in node.decorator_list}
        method = cls is not None and "staticmethod" not in decorators
        self.self_name = positional[0] if method and positional and "classmethod" not in decorators else None
        self.env: dict[str, list] = {name: ["param", name] for name in (*positional, *(a.arg for a in arguments.kwonlyargs))}
        self.record: dict = {"line": node.lineno, "params": positional, "method": method, "class": cls,
                             "calls": [], "returns": [], "sets": {}, "made": [], "invocations": [], "loops": [],
                             "backward": [], "gates": [], "fresh": [], "handed": [], "process_groups": [],
                             "forward_passes": [], "unwrapped": [], "cuda": None,
                             "bare_cuda": None, "device_moves": False,
                             # calls `no_sync()` or sets `require_backward_grad_sync`: controls DDP's all-reduce
                             "sync_control": False}
        self._tests: list[ast.expr] = []  # the tests of the ifs around the walk, for `gates`
        # The ifs around the walk, as (test, which way), and the `name = True`/`False` statements
        # read so far with the ifs around each: what a flag holds where a call passes it.
        self._node, self._ways, self._flags = node, [], {}
        # Locals bound to parameters wrapped for iteration (`diter = enumerate(tqdm(loader))`).
        self._wrapping: dict[str, list[str]] = {}
        self._lengths: set[str] = set()  # locals bound to `len(...)`, for `deduplicates`
        self._lists: set[str] = set()  # locals bound to `[]`, for `_append`
        # no_grad/inference_mode blocks (or a decorator) around the walk: calls there train nothing
        self._gradients_off = int(any(_turns_gradients_off(d) for d in node.decorator_list))
        self._backwards = 0  # backward calls read so far: a loop trains when its body adds one
        # Locals bound to a call's result and parameters that nothing has touched yet (no
        # method called on them, not passed anywhere): a model still as its maker left it.
        self._fresh: dict[str, list] = {}
        self._untouched: set[str] = set(positional[1:] if self.self_name else positional)
        self._placed = False  # the statement's value is a call given a device= or device_map=
        # Who runs what (ddplint.model.context.function_record): the guards around the code and
        # every call of a dotted name, as [callee, line].
        self.guards: list[list] = []
        self.dotted_calls: list[list] = []
        # Names bound to a file (ddplint.model.values.path_key): the module's, unless a parameter hides one.
        self.paths: dict[str, str] = {name: key for name, key in (paths or {}).items() if name not in self.env}
        self.moved: set[str] = set()  # modules moved to the host in place (ddplint.model.values)
        self.hosted: set[str] = set()  # local names bound to a value on the host
        self.offload_configs: set[str] = set()  # local names bound to a configuration that offloads state dicts
        self.offloading: list[tuple] = []  # the offloading `FSDP.state_dict_type` blocks around the walk
        self.records: dict[str, tuple] = {}  # local dicts built key by key (ddplint.model.values)
        self._statements(node.body)
        if not isinstance(node.body[-1], ast.Return):
            self.record["other_returns"] = True  # may end without one: returns None
        if method and node.name == "__init__" and arguments.kwarg is not None:
            forwards = _forwarded(node, arguments.kwarg.arg)
            if forwards is not None:
                self.record["forwards"] = forwards
        cycles = None if method else _cycled(node, positional)
        if cycles is not None:
            self.record["cycles"] = cycles
        values.settle_save(self, node)
        looped = {name for loop in self.record["loops"] for name in loop[2]}  # parameters a loop iterates
        passes = None if method or cycles is not None or not looped else _passed_once(node, positional)
        if passes is not None:
            self.record["passes"] = passes

    def source(self, expr: ast.AST | None) -> list | None:
        if isinstance(expr, ast.Name):
            return self.env.get(expr.id)
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == self.self_name and self.self_name:
                return ["attr", expr.attr]
            return self._inner(expr) if expr.attr == "module" else None
        if isinstance(expr, ast.Call):
            if isinstance(expr.func, ast.Attribute) and expr.func.attr in _SAME_VALUE_METHODS:
                return self.source(expr.func.value)
            if isinstance(expr.func, ast.Name) and expr.func.id == "getattr":
                return self._inner(expr)
            callee = self._callee(expr.func)  # `backend.wrap(loader)`, `accelerator.prepare(model)`: `Backend().wrap`
            if not callee:
                return None
            facts = self._data_facts(expr, callee)
            return ["call", callee, expr.lineno, facts] if facts else ["call", callee, expr.lineno]
        if isinstance(expr, ast.IfExp) and _is_none(expr.orelse):  # `DataLoader(...) if ds is not None else None`
            return self.source(expr.body)
        if isinstance(expr, ast.IfExp):  # `DDP(m) if distributed else m`: see `evaluate`
            branches = [self.source(expr.body), self.source(expr.orelse)]
            return self._inner(expr) or (["either", branches] if any(branches) else None)
        if isinstance(expr, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in expr.elts):
            items = [self.source(element) for element in expr.elts]
            return ["tuple", items] if any(items) else None
        if isinstance(expr, ast.Dict) and all(_literal_key(key, str) for key in expr.keys):
            items = [self.source(value) for value in expr.values]
            return ["tuple", items, [key.value for key in expr.keys]] if any(items) else None  # type: ignore[union-attr]
        if isinstance(expr, ast.Subscript) and (_literal_key(expr.slice, str) or _literal_key(expr.slice, int)):
            held = self.source(expr.value)  # `loaders["val"]`, `loaders[1]`
            return ["item", held, expr.slice.value] if held is not None else None  # type: ignore[attr-defined]
        if isinstance(expr, ast.ListComp) and len(expr.generators) == 1:
            return self._listed(expr.elt, expr.generators[0])
        return None

    def _listed(self, element: ast.expr, generator: ast.comprehension) -> list | None:
        """`[DataLoader(ds, sampler=s) for ds, s in zip(datasets, samplers)]`: a list of such values."""
        outer = self.env
        self.env = {**outer, **_loop_names(generator.target, self._elements(generator.iter))}
        try:
            item = self.source(element)
        finally:
            self.env = outer
        return ["each", item] if item is not None else None

    def _elements(self, iterable: ast.expr) -> list | None:
        """What the target of a loop over `iterable` takes: an element of a list built here by
        `append` (`for sampler in samplers`), or of each sequence `zip` pairs (`for dataset,
        sampler in zip(datasets, samplers)`)."""
        if isinstance(iterable, ast.Call) and dotted(iterable.func) == "zip" and not iterable.keywords:
            if any(isinstance(arg, ast.Starred) for arg in iterable.args):
                return None
            sources = [self.source(arg) for arg in iterable.args]
            items = [["elem", source] if source is not None else None for source in sources]
            return ["tuple", items] if any(items) else None
        source = self.source(iterable)
        return ["elem", source] if source is not None and source[0] == "each" else None

    def _append(self, call: ast.Call) -> None:
        """`samplers.append(sampler)` to a local list (`samplers = []`): it holds such values."""
        listed = call.func.value  # type: ignore[attr-defined]
        if not isinstance(listed, ast.Name) or len(call.args) != 1 or call.keywords:
            return
        held, source = self.env.get(listed.id), self.source(call.args[0])
        if source is None or (held is None and listed.id not in self._lists) or (held is not None and held[0] != "each"):
            return
        if held is not None and held[1] != source:
            source = ["either", [held[1], source]]
        self.env[listed.id] = ["each", source]

    def _inner(self, expr: ast.expr) -> list | None:
        """["inner", the wrapper's source] where `expr` takes a followed value's inner module."""
        wrapper = _unwrapped(expr)
        inner = self.source(wrapper) if wrapper is not None else None
        return ["inner", inner] if inner is not None else None

    def _data_facts(self, call: ast.Call, callee: str) -> dict | None:
        """What a call that may build a DistributedSampler or DataLoader passes for the
        parameters the program follows: a literal as ["const", value], ["unknown"] for any
        other expression, the source of a sampler; None for any other call."""
        params = _DATA_PARAMETERS.get(callee.rpartition(".")[2])
        if params is None:
            return None
        given = {}
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                return {"starred": True}  # what lands where is unknown
            if index < len(params):
                given[params[index]] = arg
        given.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
        if any(k.arg is None for k in call.keywords):
            return {"starred": True}
        facts: dict = {}
        for name, value in given.items():
            if name in _DATA_LITERALS:
                known = value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else self._flag(value)
                facts[name] = ["const", known] if known is not None else ["unknown"]
            elif name in _DATA_SOURCES:
                facts[name] = self.source(value) or ["unknown"]
        when = self._parameter_tests() if callee.rpartition(".")[2] == "DistributedSampler" else []
        if when:
            facts["when"] = when
        return facts or {"plain": True}

    def _parameter_tests(self) -> list:
        """The ifs around the walk that test a parameter the function never rebinds against
        literals (`if split == "train":`, `if is_train:`, `if mode in ("val", "test"):`), as
        [parameter, the literals that pass it (None: any true value), which way]."""
        rebound = _rebound(self._node)
        found = []
        for test, way in self._ways:
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, way = test.operand, not way
            name, values = None, None
            if isinstance(test, ast.Name):
                name = test.id
            elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name):
                op, right = test.ops[0], test.comparators[0]
                items = right.elts if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
                if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) and all(_literal(item) for item in items):
                    name, values = test.left.id, [item.value for item in items]
                    way = way if isinstance(op, (ast.Eq, ast.In)) else not way
            if name is not None and self.env.get(name) == ["param", name] and name not in rebound:
                found.append([name, values, way])
        return found

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
        held = {n for n in names if self.env.get(n) == ["param", n]}
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
                found |= {expr.id} if self.env.get(expr.id) == ["param", expr.id] else set(self._wrapping.get(expr.id, ()))
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

    def _callee(self, func: ast.AST) -> str | None:
        """The dotted name called; `Maker().method` where the receiver is a local bound to a
        call (`logger = utils.MetricLogger()` ... `logger.sync()`: `utils.MetricLogger().sync`),
        and `Maker().__call__` where the local is an object of a class, called itself
        (`evaluator = MscEval(...)` ... `evaluator(net, loader)`)."""
        callee = dotted(func)
        if callee is None:
            return callee
        head, _, rest = callee.partition(".")
        source = self.env.get(head)
        if not source or source[0] != "call" or not (rest or source[1].rpartition(".")[2][:1].isupper()):
            return callee
        return f"{source[1]}().{rest or '__call__'}"

    def _bind(self, target: ast.AST, source: list | None) -> None:
        if isinstance(target, ast.Name):
            self._lists.discard(target.id)
            self._untouched.discard(target.id)
            self._fresh.pop(target.id, None)
            if source is not None and source[0] == "call" and not self._placed:
                self._fresh[target.id] = source[1:3]  # callee, line (not a data call's facts)
            # the callee that made the value, also of a tuple it returns (`model, device = setup(net)`)
            made = source[1] if source and source[0] == "item" else source
            if made is not None and made[0] == "call" and made[1] not in self.record["made"]:
                self.record["made"].append(made[1])
            self._wrapping.pop(target.id, None)
            if source is None:
                self.env.pop(target.id, None)
            else:
                self.env[target.id] = source
        elif isinstance(target, ast.Attribute):
            if source is not None and isinstance(target.value, ast.Name) and target.value.id == self.self_name:
                self.record["sets"][target.attr] = source
        elif isinstance(target, (ast.Tuple, ast.List)):
            # `loader, sampler = build(ds)`: each name holds its element of what the call returns
            starred = any(isinstance(element, ast.Starred) for element in target.elts)
            for index, element in enumerate(target.elts):
                item = ["item", source, index] if source is not None and not starred else None
                self._bind(element.value if isinstance(element, ast.Starred) else element, item)

    def _calls(self, statement: ast.stmt) -> None:
        for name, value in ast.iter_fields(statement):
            if name in _CONTROL_FIELDS:
                continue
            for root in value if isinstance(value, list) else (value,):
                if not isinstance(root, ast.AST):
                    continue
                for node in walk(root):
                    if isinstance(node, ast.Call):
                        self._call(node)
                    elif isinstance(node, ast.Slice) and node.lower is None and node.upper is not None and self._length(node.upper):
                        self.record["deduplicates"] = True  # `preds[: len(dataset)]`: padded duplicates cut off
                    elif isinstance(node, _COMPREHENSIONS):
                        # `preds = [model(x) for x, _ in loader]`: a loop over the loader, as a `for` statement
                        trains = any(isinstance(n, ast.Call) and _named_method(n, "backward") for n in ast.walk(node))
                        self.record["loops"].append([node.lineno, node.end_lineno, self._wrapped(node.generators[0].iter), trains])

    def _touch(self, node: ast.Call) -> None:
        """`fresh` and `handed`: the first argument of a call that is a parameter nothing touched
        before (`DDP(model, device_ids=...)` in `wrap(model, rank)`), then every name the call
        passes or calls a method on is touched."""
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Name) and first.id in self._untouched and (callee := dotted(node.func)):
            self.record["handed"].append([callee, first.id, node.lineno, sorted(k.arg for k in node.keywords if k.arg)])
        if dotted(node.func) and dotted(node.func).endswith("init_process_group"):  # type: ignore[union-attr]
            backend = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "backend"), None)
            literal = backend.value if isinstance(backend, ast.Constant) and isinstance(backend.value, str) else None
            bound = any(k.arg == "device_id" for k in node.keywords) or len(node.args) > 8
            self.record["process_groups"].append([dotted(node.func), node.lineno, literal, bound])
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        for expr in (receiver, *node.args, *(k.value for k in node.keywords)):
            for name in walk(expr) if expr is not None else ():
                if isinstance(name, ast.Name):
                    self._fresh.pop(name.id, None)
                    self._untouched.discard(name.id)

    def _call(self, node: ast.Call) -> None:
        plain = dotted(node.func)
        if plain is not None:
            self.dotted_calls.append([plain, node.lineno])
        self._touch(node)
        if _keys_by_zip(node):
            self.record["deduplicates"] = True  # `results.update(zip(ids, preds))`: a padded duplicate overwrites its id's entry
        if _named_method(node, "append"):
            self._append(node)
        if _named_method(node, "backward"):
            self.record["backward"].append(node.lineno)
            self._backwards += 1
        if isinstance(node.func, ast.Attribute) and node.func.attr == "no_sync":
            self.record["sync_control"] = True
        if isinstance(node.func, ast.Attribute) and node.func.attr == "step":
            params = self.record["params"]
            for test in self._tests:  # `if update_grad: scaler.step(optimizer)`: the step waits for that argument
                for name in walk(test):
                    if isinstance(name, ast.Name) and name.id in params and name.id not in self.record["gates"]:
                        self.record["gates"].append(name.id)
        self._forward_pass(node)
        if self.record["cuda"] is None and _places_on_cuda(node):
            self.record["cuda"] = node.lineno
        bare = _bare_cuda(node)
        if bare and self.record["bare_cuda"] is None:
            self.record["bare_cuda"] = node.lineno
        elif bare is False:
            self.record["device_moves"] = True
        callee = self._callee(node.func)
        if callee is None:
            return
        self.record["invocations"].append([callee, node.lineno])
        values.read_call(self, node, callee)
        args: list = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                break  # positions after a *args are unknown
            args.append(self.source(arg))
        keywords = {k.arg: self.source(k.value) for k in node.keywords if k.arg is not None}
        keywords = {k: v for k, v in keywords.items() if v is not None}
        if any(args) or keywords:
            self.record["calls"].append([callee, args, keywords, node.lineno])
        literals = [[i, a.value] for i, a in enumerate(node.args) if _literal(a)]
        literals += [[k.arg, k.value.value] for k in node.keywords if k.arg is not None and _literal(k.value)]
        if literals:
            self.record.setdefault("literals", []).append([callee, node.lineno, literals])
        # Where a model's inner module is handed on, with the call and the argument as written (a rule
        # finds the call by them): [written callee, callee, position or keyword, argument, source, line].
        if any(source and source[0] == "inner" for source in (*args, *keywords.values())):
            given = {**dict(enumerate(node.args)), **{k.arg: k.value for k in node.keywords}}
            for position, source in [*enumerate(args), *keywords.items()]:
                arg = given[position]
                if source is not None and source[0] == "inner" and dotted(arg):
                    self.record["unwrapped"].append([plain, callee, position, dotted(arg), source, node.lineno])

    def _forward_pass(self, node: ast.Call) -> None:
        """`forward_passes`: [source, line] of each call of a followed value, `model(x)` or
        `model.forward(x)`, where gradients are on."""
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
            self.record["forward_passes"].append([source, node.lineno])

    def _merge(self, other: dict[str, list]) -> None:
        """After an `if`: a name bound differently by its two ways holds either value (see `_either`)."""
        for name in {*other, *self.env}:
            branches = [other.get(name), self.env.get(name)]
            if branches[0] != branches[1]:
                self.env[name] = ["either", branches]

    def _returned(self, value: ast.expr | None) -> list | None:
        """[callee, line] when `return` gives a call's result untouched since (`return Net()`,
        `model = Net(cfg)` ... `return model`), else None."""
        if isinstance(value, ast.Name):
            return self._fresh.get(value.id)
        source = self.source(value) if isinstance(value, ast.Call) and not self._placed else None
        return source[1:3] if source is not None else None

    def _statements(self, body: list[ast.stmt]) -> None:
        for index, statement in enumerate(body):
            if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
                continue
            loop, backwards = None, self._backwards
            self._calls(statement)
            self.guards += process_context.guards_of(statement, body, index)
            values.read_statement(self, statement)
            value = getattr(statement, "value", None)
            self._placed = isinstance(value, ast.Call) and (
                any(k.arg in ("device", "device_map") for k in value.keywords) or _moves(value)
            )
            if isinstance(statement, ast.Return):
                self.record["fresh"].append(self._returned(value))
            if isinstance(statement, ast.Assign):
                if any(isinstance(t, ast.Attribute) and t.attr == "require_backward_grad_sync" for t in statement.targets):
                    self.record["sync_control"] = True
                if _sets_flag(statement):
                    self._flags.setdefault(statement.targets[0].id, []).append((statement.value.value, tuple(self._ways)))
                source = self.source(statement.value)
                if self._length(statement.value):
                    self._lengths.update(t.id for t in statement.targets if isinstance(t, ast.Name))
                for target in statement.targets:
                    self._bind(target, source)
                    if isinstance(target, ast.Name) and self._wraps(statement.value):
                        self._wrapping[target.id] = self._wraps(statement.value)
                    if isinstance(target, ast.Name) and isinstance(statement.value, ast.List) and not statement.value.elts:
                        self._lists.add(target.id)
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                self._bind(statement.target, self.source(statement.value))
            elif isinstance(statement, ast.Return) and statement.value is not None:
                source = self.source(statement.value)
                if source is not None:
                    self.record["returns"].append(source)
                else:
                    self.record["other_returns"] = True  # may return what the program does not follow
            elif isinstance(statement, ast.Return):
                self.record["other_returns"] = True
            elif isinstance(statement, (ast.For, ast.AsyncFor)):
                self._bind(statement.target, self._elements(statement.iter))
                iterated = self._wrapped(statement.iter)
                loop = [statement.lineno, statement.end_lineno, iterated, False]  # trains: set below
                self.record["loops"].append(loop)
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                for item in statement.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, None)
            if isinstance(statement, ast.If):
                before, host = dict(self.env), (set(self.moved), set(self.hosted), set(self.offload_configs))
                self._tests.append(statement.test)
                self._ways.append((statement.test, True))
                self._statements(statement.body)
                self._tests.pop()
                self._ways[-1] = (statement.test, False)
                after_body, self.env = self.env, dict(before)
                host_after_body = (self.moved, self.hosted, self.offload_configs)
                self.moved, self.hosted, self.offload_configs = host
                self._statements(statement.orelse)
                self._ways.pop()
                self._merge(after_body)
                self.moved &= host_after_body[0]  # on the host only if both ways leave it there
                self.hosted &= host_after_body[1]
                self.offload_configs &= host_after_body[2]
                continue
            off = isinstance(statement, (ast.With, ast.AsyncWith)) and any(
                _turns_gradients_off(item.context_expr) for item in statement.items
            )
            self._gradients_off += off
            contexts = values.offloading(self, statement) if isinstance(statement, (ast.With, ast.AsyncWith)) else []
            self.offloading += contexts
            for name in ("body", "orelse", "finalbody"):
                self._statements(getattr(statement, name, None) or [])
            self._gradients_off -= off
            del self.offloading[len(self.offloading) - len(contexts):]
            for handler in getattr(statement, "handlers", None) or []:
                self._statements(handler.body)
            for case in getattr(statement, "cases", None) or []:
                self._statements(case.body)
            if loop is not None:
                loop[3] = self._backwards > backwards  # a backward in the loop (its body, its iterable)


# Calls that add a module or parameter to an object after it was built.
_REGISTERS = frozenset(("add_module", "register_module", "register_parameter", "register_buffer", "setattr"))


def _definitions(body: list[ast.stmt], cls: str | None = None):
    """Every function and class a module defines, at any depth and in source order, as (node,
    the class whose body holds it or None): how summaries key functions (`name`, `Class.name`)."""
    for node in body:
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            yield node, cls
            yield from _definitions(node.body, node.name if isinstance(node, ast.ClassDef) else None)
        else:
            for name in ("body", "orelse", "finalbody"):
                yield from _definitions(getattr(node, name, None) or [], cls)
            for handler in getattr(node, "handlers", None) or []:
                yield from _definitions(handler.body, cls)


def _function_key(node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None) -> str:
    return f"{cls}.{node.name}" if cls else node.name


def _gives(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list:
    """What each `return` of a function gives, by class: a list of ["class", dotted] (a class
    object named by a dotted name: `return SRv1`) and ["call", callee] (what a call gives:
    `return Net(cfg)`, moves such as `.to(device)` aside), or None where unknown. A local
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

    def gives(expr: ast.expr | None) -> list | None:
        given = _given(expr, None) if expr is not None else None
        if not isinstance(given, list):
            return None
        kind, name = given
        head = name.partition(".")[0]
        if head not in bound:
            return [given]
        held = bound[head]
        if name != head or None in held or any(h[1].partition(".")[0] in bound for h in held):
            return None
        if kind == "class":
            return held
        # `Network(...)` where the local names classes: objects of them
        return [["call", h[1]] for h in held] if all(h[0] == "class" for h in held) else None

    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in inside):
        return [None]
    found = [gives(n.value) for n in inside if isinstance(n, ast.Return)]
    return found if isinstance(node.body[-1], (ast.Return, ast.Raise)) else [*found, None]


def _given(expr: ast.expr, target: str | None) -> list | str | None:
    """["class", dotted] for a dotted name, ["call", callee] for a call of one, moves such as
    `.to(device)` aside; "same" for `target` moved (`model = model.cuda()`); None otherwise."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _SAME_VALUE_METHODS:
        expr = expr.func.value
    if isinstance(expr, ast.Name) and expr.id == target:
        return "same"
    if isinstance(expr, ast.Call):
        callee = dotted(expr.func)
        return ["call", callee] if callee else None
    name = dotted(expr)
    return ["class", name] if name else None


def _sets_flag(statement: ast.Assign) -> bool:
    """`name = True` or `name = False`."""
    value = statement.value
    return len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) and (
        isinstance(value, ast.Constant) and isinstance(value.value, bool)
    )


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _loop_names(target: ast.expr, source: list | None) -> dict:
    """The names a comprehension's target binds, each to its part of `source` (None: unknown)."""
    if isinstance(target, ast.Name):
        return {target.id: source}
    if not isinstance(target, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in target.elts):
        return {}
    parts = [["item", source, index] if source is not None else None for index in range(len(target.elts))]
    return {name: held for element, part in zip(target.elts, parts) for name, held in _loop_names(element, part).items()}


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


def _forwarded(node: ast.FunctionDef | ast.AsyncFunctionDef, star: str) -> list | None:
    """[callee, line] of the `...DataLoader(...)` call an `__init__` hands its own `**kwargs`
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
                found = [callee, inner.lineno]
    return found


def _is_none(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


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


def _cycled(node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> list | None:
    """[index of the parameter, line of the loop] of a generator that re-iterates a parameter
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
                        return [params.index(name), loop.lineno]
    return None


def _passed_once(node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> list | None:
    """[index of the parameter, line of the loop] of a function that makes one pass over a
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
            return [params.index(name), line]
    return None


def summarize(tree: ast.Module, text: str | None = None) -> dict:
    """A module's summary (JSON-able): `functions` by the key the semantic model gives them
    (`name`, or `Class.name` for a method) and `classes` with their bases as written."""
    functions: dict[str, dict] = {}
    classes: dict[str, dict] = {}

    def definitions(body: list[ast.stmt]) -> None:
        for node, cls in _definitions(body):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, {"line": node.lineno, "bases": [b for b in map(dotted, node.bases) if b]})
                continue
            key = _function_key(node, cls)
            if key not in functions:
                reader = _FunctionReader(node, cls, paths)
                functions[key] = reader.record
                context[key] = process_context.function_record(node, reader.guards, reader.dotted_calls)

    context: dict[str, dict] = {"": process_context.read_module(tree)}  # who runs it: ddplint.model.context
    paths = values.module_paths(tree)
    definitions(tree.body)
    binds = _DEVICE_TEXT.search(text) is not None if text is not None else _binds_device(tree)
    found = {"functions": functions, "classes": classes, "binds_device": binds, "context": context}
    guarded = _guarded_imports(tree.body)
    if guarded:
        found["imports"] = guarded
    return found


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


def _binds_device(tree: ast.Module) -> bool:
    """Whether the module may bind its process to a device: calls `torch.cuda.set_device` or a
    kin, enters `torch.cuda.device(...)`, passes `device_id=` or names CUDA_VISIBLE_DEVICES."""
    for node in walk(tree):
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name.rpartition(".")[2] in _DEVICE_BINDINGS or name.endswith("cuda.device"):
                return True
            if any(k.arg == "device_id" for k in node.keywords):
                return True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "CUDA_VISIBLE_DEVICES" in node.value:
            return True
    return False


# -- the whole program ---------------------------------------------------------------------


class Program:
    """DDP models across the project's functions, solved once per run (see the module doc).
    `parameters[(module, key)]`, `attributes[(module, class)]`: name -> Origin;
    `results[(module, key)]`: the Origin of the DDP model the function returns."""

    def __init__(self, project, read=None) -> None:
        self.project = project
        reader = read or self._read_file
        # Every module whose text or summary the program used: what its solution depends on.
        self.looked: set[str] = set()
        self._reader = reader
        # Every module a question read after the solution was found (None until then): the
        # solution's digest does not cover what such answers say, so a file's cached result
        # depends on these modules too (ddplint.engine.cache).
        self.consulted: set[str] | None = None
        self._summaries: dict[str, dict | None] = {}
        self._module_code: dict[str, dict | None] = {}
        self._gives: dict[tuple[str, str], list | None] = {}  # (module, function) -> what its returns give
        self._attribute_uses: dict[tuple[str, str], tuple[int | None, bool]] = {}  # answered once per model
        self._order: list[str] = []
        self._importers: dict[str, list[str]] | None = None
        self._import_parts: dict[str, list[tuple[str, str]]] | None = None
        self._splits: dict[tuple[str, str], tuple[str, str] | None] = {}
        self._source = 0  # bytes of the modules read so far (MAX_SOURCE)
        self.refused = 0  # reads refused by the bounds: an answer that met one is unknown
        self.asking = False  # while a question that may read past MAX_MODULES is answered
        self._folders: dict[str, str] = {}
        self._receivers: set[str] | None = None
        self._combines: dict[tuple, str | None] = {}
        self.parameters: dict[tuple[str, str], dict[str, Origin]] = {}
        self.attributes: dict[tuple[str, str], dict[str, Origin]] = {}
        self.results: dict[tuple[str, str], Origin] = {}
        # The samplers, loaders and tuples of them each function returns (all of its returns'
        # values: `build_loader()` may return either of two builders' tuples).
        self.returned_data: dict[tuple[str, str], list] = {}
        # While set, no new module is read: objects of project classes are followed only
        # into modules a DDP model or sampler already led to (it bounds the reading).
        self._reading_closed = False
        self._evaluations: dict[tuple, tuple[str, str, str] | None] = {}
        self._deduplicating: dict[tuple[str, str], bool] = {}
        self._trainings: dict[tuple, tuple[str, str] | None] = {}  # ddplint.model.inner
        self._handed_inner: dict[str, dict] = {}
        self._function_names: dict[str, set[str]] = {}  # function_names
        self._context = None
        self._cached, self._fresh = self._load_cache()
        for name, facts in project.modules.items():
            if facts.get("ddp") or facts.get("samplers"):  # where DDP models and samplers start
                self.summary(name)
        self._solve()
        self.solved = len(self._order)  # the modules the solution read (later queries read on)
        self.consulted = set()
        self._save_cache()

    # -- the summaries' cache, beside the index's: a warm run reads no module's ast ------

    def _cache_file(self) -> str | None:
        path = self.project.cache_path
        return path[: -len(".json")] + "-program.json" if path and path.endswith(".json") else None

    def _load_cache(self) -> tuple[dict, dict]:
        path = self._cache_file()
        if path is None:
            return {}, {}
        try:
            with open(path, encoding="utf-8") as handle:
                loaded = json.load(handle)
        except (OSError, ValueError):
            return {}, {}
        return (loaded if isinstance(loaded, dict) else {}), {}

    def _save_cache(self) -> None:
        path = self._cache_file()
        if path is not None and self._fresh:
            from ddplint.model.project import _save

            _save(os.path.dirname(path), path, {**self._cached, **self._fresh})

    # -- reading -------------------------------------------------------------------------

    def _stamp(self, module: str) -> list | None:
        """The file's size and mtime, which a cached summary must match; None for a text."""
        if module in self.project.texts or self.project.cache_path is None:
            return None
        try:
            info = os.stat(os.path.join(self.project.root, self.project.relpaths[module]))
        except OSError:
            return None
        return [info.st_size, info.st_mtime_ns]

    def _size(self, module: str) -> int:
        """The module's size in bytes, as its stamp has it (for MAX_SOURCE)."""
        if module in self.project.texts:
            return len(self.project.texts[module].encode("utf-8", "replace"))
        try:
            return os.stat(os.path.join(self.project.root, self.project.relpaths[module])).st_size
        except OSError:
            return 0

    def _read_file(self, module: str) -> str | None:
        if module in self.project.texts:
            return self.project.texts[module]
        try:
            with open(os.path.join(self.project.root, self.project.relpaths[module]), "rb") as handle:
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return None

    def _read(self, module: str) -> str | None:
        self.looked.add(module)
        if self.consulted is not None:
            self.consulted.add(module)
        return self._reader(module)

    def tree(self, module: str) -> ast.Module | None:
        """CPython's `ast` of `module`, read afresh for a question the summaries do not answer;
        None when it cannot be read or does not parse."""
        text = self._read(module)
        try:
            return ast.parse(text) if text is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def _returns(self, module: str, function: str) -> list | None:
        """What each return of a function of `module` gives (`_gives`); None when it cannot be
        read. Worked out on demand (few questions need it), from the module's text."""
        key = (module, function)
        if key not in self._gives:
            tree = self.tree(module)
            node = next((n for n, cls in _definitions(tree.body) if not isinstance(n, ast.ClassDef)
                         and _function_key(n, cls) == function), None) if tree is not None else None
            self._gives[key] = _gives(node) if node is not None else None
        return self._gives[key]

    def module_code(self, module: str) -> dict | None:
        """The record of `module`'s own code (what runs when it is run or imported), read as a
        function's body is; on demand and not cached, for the few questions that need it
        (ddplint.model.values.Values.saved_on_host). None when it does not parse."""
        if module not in self._module_code:
            tree, found = self.tree(module), None
            if tree is not None:
                nothing = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
                code = ast.FunctionDef(name="", args=nothing, body=tree.body or [ast.Pass()], decorator_list=[], lineno=1,
                                       **_NO_TYPE_PARAMS)
                found = _FunctionReader(code, None).record
            self._module_code[module] = found
        return self._module_code[module]

    def summary(self, module: str) -> dict | None:
        if module in self._summaries:
            if self.consulted is not None and self._summaries[module] is not None:
                self.consulted.add(module)
            return self._summaries[module]
        if self._reading_closed:
            return None
        limit = MAX_MODULES + (MAX_ASKED if self.asking else 0)
        if len(self._summaries) >= limit or self._source >= MAX_SOURCE:
            self.refused += 1
            return None
        found, stamp = None, self._stamp(module)
        self.looked.add(module)
        self._source += stamp[0] if stamp is not None else self._size(module)
        entry = self._cached.get(self.project.relpaths[module]) if stamp is not None else None
        if entry is not None and entry.get("stamp") == stamp:
            found = entry["summary"]
        else:
            text = self._read(module)
            if text is not None:
                try:
                    found = summarize(ast.parse(text), text)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    found = None  # a module that does not parse hides what it does: unknown
            if stamp is not None:
                self._fresh[self.project.relpaths[module]] = {"stamp": stamp, "summary": found}
        self._summaries[module] = found
        self._order.append(module)
        if self.consulted is not None and found is not None:
            self.consulted.add(module)
        return found

    @functools.cached_property
    def _first_names(self) -> dict[str, set[str]]:
        """Folder -> the first names a qualified name resolved from a module there can start
        with (see `_split`): "" holds those of module and package names and of the root's files
        and folders, any other folder the files and folders inside it."""
        found: dict[str, set[str]] = {"": {name.partition(".")[0] for name in (*self.project.modules, *self.project.shared)}}
        for relative in self.project.names:
            parts = relative.removesuffix(".py").split("/")
            for index in range(len(parts)):
                found.setdefault("/".join(parts[:index]), set()).add(parts[index])
        return found

    def importers_of(self, module: str) -> list[str]:
        """The project modules that import `module` or a name from it, once per name they
        import (in the order of `project.modules`)."""
        if self._importers is None:
            self._importers = {}
        found = self._importers.get(module)
        if found is None:
            found = self._importers[module] = [
                name
                for name, origin in self._imports_by_part().get(module.rpartition(".")[2], ())
                if (place := self.split(origin, name)) is not None and place[0] == module != name
            ]
        return found

    def _imports_by_part(self) -> dict[str, list[tuple[str, str]]]:
        """(importer, absolute origin) of every import of the project, under each dotted part
        of the origin. A module is named by its folders and file, and an import reaches it
        through a prefix of the origin (see `split`), so the module's last part is in the
        origin: looking up only those imports is much cheaper than splitting every one."""
        if self._import_parts is None:
            self._import_parts = {}
            for name, facts in self.project.modules.items():
                for origin in sorted(set(facts["imports"].values())):  # sorted: the same solution every run
                    if origin.startswith("."):
                        origin = self.project.module_view(name).absolute(origin)
                    for part in set(origin.split(".")):
                        self._import_parts.setdefault(part, []).append((name, origin))
        return self._import_parts

    def attribute_uses(self, module: str, attribute: str) -> tuple[int | None, bool]:
        """The first line where `module` reads `<x>.<attribute>`, and whether it assigns it from the
        environment variable of the same name in capitals. Read on demand (a rule asks this of
        few modules), not summarised; a module that does not parse reads and assigns nothing.
        Remembered: the language server asks again on every keystroke, of modules as saved."""
        if (module, attribute) not in self._attribute_uses:
            self._attribute_uses[module, attribute] = self._attribute_uses_now(module, attribute)
        return self._attribute_uses[module, attribute]

    def _attribute_uses_now(self, module: str, attribute: str) -> tuple[int | None, bool]:
        tree = self.tree(module)
        if tree is None:
            return None, False
        variable, read, from_environment = attribute.upper(), None, False
        for node in walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Load):
                read = node.lineno if read is None else min(read, node.lineno)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(target, ast.Attribute) and target.attr == attribute for target in targets):
                    from_environment |= any(
                        isinstance(part, ast.Constant) and part.value == variable for part in walk(node.value)
                    )
        return read, from_environment

    # -- names ---------------------------------------------------------------------------

    def _qualify(self, module: str, dotted: str) -> str | None:
        head, _, rest = dotted.partition(".")
        origin = self.project.modules[module]["imports"].get(head)
        if origin is None:  # an import in a top-level `if` or `try` block, where the summary has one
            origin = ((self._summaries.get(module) or {}).get("imports", {}).get(head) or [None])[-1]
        if origin is None:
            return None
        absolute = self.project.module_view(module).absolute(origin)
        return f"{absolute}.{rest}" if rest else absolute

    def split(self, qualified: str, importer: str) -> tuple[str, str] | None:
        """(project module, the rest) of a qualified name that `importer` imports, at the
        longest module prefix. Remembered by the importer's folder, all that it depends on:
        the solver asks the same of every call, every round."""
        folder = self._folders.get(importer)
        if folder is None:
            folder = self._folders[importer] = os.path.dirname(self.project.relpaths[importer])
        key = (qualified, folder, self._added_folders(importer))
        if key not in self._splits:
            self._splits[key] = self._split(qualified, importer)
        return self._splits[key]

    @functools.cached_property
    def _sys_path_folders(self) -> dict[str, tuple[str, ...]]:
        """Folder -> the project folders that the `_init_paths` module there puts on sys.path (the
        convention of research code since py-faster-rcnn: a script imports it first thing, and it
        runs `sys.path.insert(0, osp.join(this_dir, '..', 'lib'))`)."""
        found: dict[str, tuple[str, ...]] = {}
        for relative, module in self.project.names.items():
            if os.path.basename(relative) != "_init_paths.py":
                continue
            folder, added = os.path.dirname(relative), []
            for parts in _PATH_JOIN.findall(self._read(module) or ""):
                path = os.path.normpath(os.path.join(folder, *re.findall(r"""['"]([^'"]*)['"]""", parts)))
                if not path.startswith("..") and path not in added:
                    added.append("" if path == "." else path)
            found[folder] = tuple(added)
        return found

    def _added_folders(self, importer: str) -> tuple[str, ...]:
        """Where else an import of `importer` may be found: the folders its `_init_paths` puts
        on sys.path if it imports one, and any such folder of the project that holds it (the
        package a script imports that way imports its siblings the same way)."""
        if not self._sys_path_folders:
            return ()  # no _init_paths in the project: the solver asks this of every call
        folder = os.path.dirname(self.project.relpaths[importer])
        own = self._sys_path_folders.get(folder, ()) if "_init_paths" in self.project.modules[importer]["imports"] else ()
        held = [f for added in self._sys_path_folders.values() for f in added if f and f"{folder}/".startswith(f"{f}/")]
        return tuple(dict.fromkeys((*own, *held)))

    def _split(self, qualified: str, importer: str) -> tuple[str, str] | None:
        head, rest = qualified, ""
        folder = os.path.dirname(self.project.relpaths[importer])
        folders = (folder, *self._added_folders(importer))
        first = qualified.partition(".")[0]
        if first not in self._first_names.get("", ()) and not any(first in self._first_names.get(f, ()) for f in folders):
            return None  # no module, package or file of the project starts so (most imports: torch, os, ...)
        while head:
            if self.project.module(head) is not None:
                return head, rest
            for candidate in self.project.shared.get(head, ()):  # the one beside the importer
                if os.path.dirname(self.project.relpaths[candidate]) == folder:
                    return candidate, rest
            # `import evaluation.engine` from the root, where `evaluation` has no __init__.py
            # (a namespace package): the index names that module by its package alone.
            path = head.replace(".", "/")
            by_path = self.project.names.get(f"{path}.py") or self.project.names.get(f"{path}/__init__.py")
            for base in [f for f in folders if f] if by_path is None else ():  # `from lib import utils` beside lib/
                by_path = self.project.names.get(f"{base}/{path}.py") or self.project.names.get(f"{base}/{path}/__init__.py")
                if by_path is not None:
                    break
            if by_path is not None and self.project.module(by_path) is not None:
                return by_path, rest
            head, _, last = head.rpartition(".")
            rest = f"{last}.{rest}" if rest else last
        return None

    def resolve(self, module: str, dotted: str, cls: str | None, depth: int = 0) -> tuple[str, str, bool] | None:
        """(module, key, whether `self` is bound) of the project function a call of `dotted`
        in `module` (inside class `cls`) reaches; a class reaches its `__init__`."""
        summary = self.summary(module)
        if summary is None or depth > 8:
            return None
        functions, classes = summary["functions"], summary["classes"]
        if "()." in dotted:  # `utils.MetricLogger().sync`: a method of the object a call made
            maker, _, method = dotted.partition("().")
            made = self.class_of(module, maker) if "." not in method else None
            return self._method(Instance(*made, ""), method) if made is not None else None
        parts = dotted.split(".")
        if len(parts) == 2 and cls is not None and parts[0] in ("self", "cls"):
            return self._method(Instance(module, cls, ""), parts[1])
        if len(parts) == 1 and parts[0] in functions and not functions[parts[0]]["method"]:
            return module, parts[0], False
        if len(parts) == 1 and parts[0] in classes:
            key = f"{parts[0]}.__init__"
            return (module, key, True) if key in functions else None
        qualified = self._qualify(module, dotted)
        found = self.split(qualified, module) if qualified else None
        if found is None or not found[1] or "." in found[1]:
            return None
        target, symbol = found
        return self.resolve(target, symbol, None, depth + 1) if target != module else None

    def _method(self, value: Instance, method: str, depth: int = 0) -> tuple[str, str, bool] | None:
        """The method a call on an object of `value.cls` reaches: the class's own, else the
        first project base class's that defines it (`self.model_to_device(net)` from BaseModel)."""
        summary = self.summary(value.module)
        if summary is None or depth > 8:
            return None
        key = f"{value.cls}.{method}"
        if key in summary["functions"]:
            return value.module, key, True
        for base in summary["classes"].get(value.cls, {}).get("bases", ()):
            made = self.class_of(value.module, base)
            found = self._method(Instance(*made, ""), method, depth + 1) if made is not None else None
            if found is not None:
                return found
        return None

    def _makes_ddp(self, module: str, dotted: str, depth: int = 0) -> bool:
        """Whether calling `dotted` in `module` builds a DDP model: DDP itself, or a project
        class derived from it."""
        qualified = self._qualify(module, dotted)
        if qualified in DDP:
            return True
        summary = self.summary(module)
        if summary is None or depth > 8:
            return False
        if "." not in dotted and dotted in summary["classes"]:
            return any(self._makes_ddp(module, base, depth + 1) for base in summary["classes"][dotted]["bases"])
        found = self.split(qualified, module) if qualified else None
        if found is None or not found[1] or "." in found[1] or found[0] == module:
            return False
        return self._makes_ddp(found[0], found[1], depth + 1)

    # -- solving -------------------------------------------------------------------------

    def location(self, module: str, line: int) -> str:
        return self.project.location(module, line)

    def evaluate(self, module: str, key: str, source: list | None) -> Origin | Inner | Instance | LossScaler | None:
        """What a summary's `source` holds in function `key`: the Origin of a DDP model, the
        Inner module of one, an Instance of a project class, a library LossScaler, or None
        (unknown, or anything else)."""
        if not source:
            return None
        function = self._summaries[module]["functions"][key]  # type: ignore[index]
        kind = source[0]
        if kind in ("unknown", "const"):
            return None
        if kind == "tuple":
            items = tuple(self.evaluate(module, key, item) for item in source[1])
            keys = tuple(source[2]) if len(source) > 2 else ()
            return Pack(items, keys=keys) if any(items) else None  # type: ignore[return-value]
        if kind == "each":
            item = self.evaluate(module, key, source[1])
            return Pack((item,), each=True) if item is not None else None  # type: ignore[return-value]
        if kind == "elem":
            listed = self.evaluate(module, key, source[1])
            return listed.items[0] if isinstance(listed, Pack) and listed.each else None
        if kind == "item":
            for value in self._alternatives(module, key, source[1]):
                if isinstance(value, Prepared):
                    return value  # type: ignore[return-value]
                if isinstance(value, Pack) and value.at(source[2]) is not None:
                    return value.at(source[2])
            return None
        if kind == "either":
            return _either([self.evaluate(module, key, branch) for branch in source[1]])
        if kind == "inner":
            wrapper = self.evaluate(module, key, source[1])
            return Inner(wrapper.wrapped_at) if isinstance(wrapper, Origin) else None  # type: ignore[return-value]
        if kind == "param":
            return self.parameters.get((module, key), {}).get(source[1])
        if kind == "attr":
            cls = function["class"]
            return self.attributes.get((module, cls), {}).get(source[1]) if cls else None
        callee, line = source[1], source[2]
        if len(source) > 3:
            made = self._makes_data(module, key, callee, line, source[3])
            if made is not None:
                return made  # type: ignore[return-value]
        if self._makes_ddp(module, callee):
            return Origin(self.location(module, line))
        if callee.endswith("().prepare") and self._qualify(module, callee[: -len("().prepare")]) in ACCELERATOR:
            return Prepared(self.location(module, line))  # type: ignore[return-value]
        if self._qualify(module, callee) in LOSS_SCALERS:
            return LossScaler(self.location(module, line))  # type: ignore[return-value]
        made = self.class_of(module, callee)
        if made is not None:
            return Instance(made[0], made[1], self.location(module, line))
        target = self.resolve(module, callee, function["class"])
        if target is not None and self.unwrapped_parameter(target) is not None:
            # `unwrap_model(model)`: the inner module of the DDP model this call passes, if it passes one
            wrapper = self.evaluate(module, key, self._passed(function, source, target))
            return Inner(wrapper.wrapped_at) if isinstance(wrapper, Origin) else None  # type: ignore[return-value]
        value = self.results.get(target[:2]) if target is not None else None
        if value is None and target is not None and self.returned_data.get(target[:2]):
            value = self.returned_data[target[:2]][0]
        return _unpassed(value)

    def unwrapped_parameter(self, target: tuple[str, str, bool]) -> str | None:
        """The parameter of the project function `target` whose inner module it returns: each
        return gives `p.module`, `p.module if ... else p`, `getattr(p, "module", p)` or `p`
        itself (`return m.module if hasattr(m, "module") else m`), one at least the inner
        module; None otherwise."""
        record = self._summaries[target[0]]["functions"][target[1]]  # type: ignore[index]
        returns = record["returns"]
        if record.get("other_returns") or not any(source[0] == "inner" for source in returns):
            return None
        names = set()
        for source in returns:
            held = source[1] if source[0] == "inner" else source
            if held[0] != "param":
                return None
            names.add(held[1])
        return names.pop() if len(names) == 1 else None

    def unwrapped_argument(self, module: str, key: str | None, cls: str | None, callee: str) -> tuple[int | None, str] | None:
        """(position, name) of the parameter whose inner module the project function that calling
        `callee` in function `key` reaches returns (`unwrapped_parameter`), or None."""
        if not self._named(module, callee, self._unwrapper_names()):
            return None
        target = self.target(module, key, cls, callee)
        name = self.unwrapped_parameter(target) if target is not None else None
        if name is None:
            return None
        record = self._summaries[target[0]]["functions"][target[1]]  # type: ignore[index]
        params = record["params"][1:] if target[2] else record["params"]
        return (params.index(name) if name in params else None), name

    def function_names(self, kind: str, holds) -> set[str]:
        """The names of the functions for which `holds(module, record)` holds, among those the
        solution read (it read every function a DDP model reaches), kept by `kind`."""
        if kind not in self._function_names:
            self._function_names[kind] = {
                key.rpartition(".")[2] for name in self._order[: self.solved] if self._summaries[name]
                for key, record in self._summaries[name]["functions"].items()  # type: ignore[index]
                if holds(name, record)
            }
        return self._function_names[kind]

    def calls_any(self, module: str, names: set[str], reaches) -> bool:
        """Whether a function of `module` calls one named in `names` for which `reaches(module,
        key, cls, callee)` holds: only a module the solution read can hold a DDP model."""
        if not names or module not in self._order[: self.solved]:
            return False
        return any(
            reaches(module, key, function["class"], callee)
            for key, function in self._summaries[module]["functions"].items()  # type: ignore[index]
            for callee, _ in function["invocations"] if self._named(module, callee, names)
        )

    def _named(self, module: str, callee: str, names: set[str]) -> bool:
        """Whether `callee` may call a function named in `names`: by its last name, or as an
        import of `module` under another name (`from utils import unwrap_model as unwrap`)."""
        imported = self.project.modules.get(module, {}).get("imports", {}).get(callee) if names else None
        return callee.rpartition(".")[2] in names or imported is not None and imported.rpartition(".")[2] in names

    def _unwrapper_names(self) -> set[str]:
        return self.function_names("unwraps", lambda module, record: any(source[0] == "inner" for source in record["returns"]))

    def calls_unwrapper(self, module: str) -> bool:
        """Whether a function of `module` calls a project function that returns the inner module
        of what it is handed (`unwrapped_argument`)."""
        return self.calls_any(module, self._unwrapper_names(), lambda *call: self.unwrapped_argument(*call) is not None)

    def _passed(self, function: dict, source: list, target: tuple[str, str, bool]) -> list | None:
        """The source of what the call `source` of `function` passes for the parameter of
        `target` that it unwraps."""
        record = self._summaries[target[0]]["functions"][target[1]]  # type: ignore[index]
        params = record["params"][1:] if target[2] else record["params"]
        name = self.unwrapped_parameter(target)
        for callee, args, keywords, line in function["calls"]:
            if callee == source[1] and line == source[2]:
                index = params.index(name) if name in params else len(args)
                return keywords.get(name) or (args[index] if index < len(args) else None)
        return None

    def _alternatives(self, module: str, key: str, source: list) -> list:
        """The values `source` may hold: every value a called project function returns, and
        where imports in `if` blocks bind its name to functions of two modules, each one's."""
        if source[0] == "call" and len(source) == 3:
            function = self._summaries[module]["functions"][key]  # type: ignore[index]
            returned = [
                (value, target) for target in self._targets(module, source[1], function["class"])
                for value in self.returned_data.get(target[:2], ())
            ]
            if returned:
                return [value for value, target in returned if not self._ruled_out(value, target, function, source)] or [None]
        return [self.evaluate(module, key, source)]

    def _ruled_out(self, value, target: tuple, function: dict, source: list) -> bool:
        """Whether the call `source` of `function` rules out the sampler of `value` (`rules_out`)."""
        for callee, line, literals in function.get("literals", ()):
            if callee == source[1] and line == source[2]:
                return self.rules_out(value, target, literals)
        return False

    def rules_out(self, value, target: tuple, literals: list) -> bool:
        """Whether a call of the builder `target` passing `literals` ([position or keyword,
        value]) passes one that a test the sampler of `value` is made under rules out:
        `build_loader(cfg, "val")` gets no sampler made under `if split == "train":`."""
        tests = [test for test in value.when if test[:2] == target[:2]] if isinstance(value, Data) else []
        if not tests:
            return False
        record = self._summaries[target[0]]["functions"][target[1]]  # type: ignore[index]
        params = record["params"][1:] if target[2] else record["params"]
        passed = {params[at] if isinstance(at, int) and at < len(params) else at: given for at, given in literals}
        for _, _, name, values, way in tests:
            if name in passed and (bool(passed[name]) if values is None else passed[name] in values) != way:
                return True
        return False

    def _targets(self, module: str, callee: str, cls: str | None) -> list[tuple[str, str, bool]]:
        """What a call of `callee` reaches (`resolve`), and the functions the other imports of
        its name in top-level `if` blocks bind (`_guarded_imports`)."""
        found = [self.resolve(module, callee, cls)]
        head, _, rest = callee.partition(".")
        others = (self._summaries.get(module) or {}).get("imports", {}).get(head, [])[:-1]
        for origin in others if head not in self.project.modules[module]["imports"] else ():
            qualified = self.project.module_view(module).absolute(origin)
            place = self.split(f"{qualified}.{rest}" if rest else qualified, module)
            if place is not None and place[1] and "." not in place[1] and place[0] != module:
                found.append(self.resolve(place[0], place[1], None, 1))
        return [target for target in dict.fromkeys(found) if target is not None]

    def values_of(self, module: str, key: str, source: list) -> list:
        """Every value `source` may hold in function `key` where it takes an element of what
        a call returns (`loaders, _ = build()`; `train, val = loaders`), one per value the
        called functions return (`_alternatives`); else what `evaluate` says."""
        if source[0] == "item":
            return [
                value.at(source[2]) for value in self.values_of(module, key, source[1])
                if isinstance(value, Pack) and value.at(source[2]) is not None
            ]
        if source[0] == "call" and len(source) == 3:
            return self._alternatives(module, key, source)
        return [self.evaluate(module, key, source)]

    def _makes_data(self, module: str, key: str, callee: str, line: int, facts: dict) -> Data | None:
        """The DistributedSampler, or the DataLoader drawing from one, that a call builds."""
        qualified = self._qualify(module, callee)
        if "starred" in facts or (qualified not in DISTRIBUTED_SAMPLER and qualified not in DATALOADER):
            return None
        at = self.location(module, line)
        if qualified in DISTRIBUTED_SAMPLER:
            flags = {name: facts.get(name, ["const", default]) for name, default in (("shuffle", True), ("drop_last", False))}
            shuffle, drop_last = (value[1] if value[0] == "const" else None for value in flags.values())
            dataset = facts.get("dataset")
            held = (module, key, dataset[1]) if dataset and dataset[0] == "param" else None
            when = tuple((module, key, name, tuple(values) if values is not None else None, way) for name, values, way in facts.get("when", ()))
            return Data("sampler", at, shuffle, drop_last, dataset=held, when=when)
        drawn = self.evaluate(module, key, self._drawn_from(module, facts))
        if not isinstance(drawn, Data) or drawn.kind != "sampler":
            return None  # a loader that is not known to draw from a DistributedSampler is not followed
        return Data("loader", at, drawn.shuffle, drawn.drop_last, replace(drawn, passed_at=None), when=drawn.when)

    def _drawn_from(self, module: str, facts: dict) -> list | None:
        """The source of the sampler a DataLoader draws from: its `sampler`, or the sampler a
        `BatchSampler(sampler, ...)` given as its `batch_sampler` batches (the batches hold the
        sampler's indices, padding included: its drop_last only drops a short last batch)."""
        batched = facts.get("batch_sampler")
        if "sampler" not in facts and batched and batched[0] == "call" and len(batched) > 3:
            return batched[3].get("sampler") if self._qualify(module, batched[1]) in BATCH_SAMPLER else None
        return facts.get("sampler")

    def class_of(self, module: str, dotted: str, depth: int = 0) -> tuple[str, str] | None:
        """(module, class) of the project class that `dotted` names in `module`, or None."""
        summary = self.summary(module)
        if summary is None or depth > 8:
            return None
        if "." not in dotted and dotted in summary["classes"]:
            return module, dotted
        qualified = self._qualify(module, dotted)
        found = self.split(qualified, module) if qualified else None
        if found is None or not found[1] or "." in found[1] or found[0] == module:
            return None
        return self.class_of(found[0], found[1], depth + 1)

    def gives(self, module: str, callee: str, cls: str | None = None, depth: int = 0) -> list[tuple[str, str, str]] | None:
        """What calling `callee` in `module` (inside class `cls`) gives, by class, every way it
        may go: ("object", module, class) for an object of a project class (the class called,
        or a project function that returns one), ("class", module, class) for a project class
        handed back (`Network = build_network(name)`), ("call", module, callee) for the result
        of a call of no project function or class (`nn.SiLU()`: the caller judges it); None
        when some return of a function on the way is unknown (`_gives`), past MAX_GIVES
        alternatives or MAX_GIVES_DEPTH helpers, or where a summary cannot be read."""
        made = self.class_of(module, callee)
        if made is not None:
            return [("object", *made)]
        target = self.resolve(module, callee, cls) if depth <= MAX_GIVES_DEPTH else None
        if target is None:
            qualified = self._qualify(module, callee)
            local = self.summary(module) is None or callee.partition(".")[0] in self.summary(module)["functions"]  # type: ignore[index]
            project = local or (qualified is not None and self.split(qualified, module) is not None)
            return None if project or depth > MAX_GIVES_DEPTH else [("call", module, callee)]
        record = self.summary(target[0])["functions"][target[1]]  # type: ignore[index]
        returns = None if target[2] else self._returns(target[0], target[1])
        if returns is None or None in returns:
            return None  # a method (its object may hand back anything), or a return unknown
        found: list[tuple[str, str, str]] = []
        for kind, name in (given for returned in returns for given in returned):
            if kind == "class":
                made = self.class_of(target[0], name)
                more = [("class", *made)] if made is not None else None
            else:
                more = self.gives(target[0], name, record["class"], depth + 1)
            if more is None:
                return None
            found += [item for item in more if item not in found]
        return found if len(found) <= MAX_GIVES else None

    @staticmethod
    def _note(table: dict, key, name: str, origin: Origin) -> bool:
        known = table.setdefault(key, {})
        if name in known:
            return False
        known[name] = origin
        return True

    def _solve(self) -> None:
        for _ in range(MAX_ROUNDS):
            changed = False
            for module in list(self._order):
                summary = self._summaries[module]
                if summary is None:
                    continue
                for key, function in summary["functions"].items():
                    changed |= self._step(module, key, function)
            if not changed:
                return

    def _step(self, module: str, key: str, function: dict) -> bool:
        changed = False
        builds_samplers = bool(self.project.modules[module].get("samplers"))
        for callee, args, keywords, line in function["calls"]:
            passed = [(i, self.evaluate(module, key, s)) for i, s in enumerate(args)]
            named = [(k, self.evaluate(module, key, s)) for k, s in keywords.items()]
            if not any(v for _, v in passed) and not any(v for _, v in named):
                continue
            # Read on where a DDP model or its inner module goes, or from a module that builds a sampler (its loaders).
            followed = any(isinstance(v, (Origin, Inner, Prepared)) or _holds_data(v) for _, v in (*passed, *named))
            self._reading_closed = not followed and not builds_samplers
            target = self.resolve(module, callee, function["class"])
            self._reading_closed = False
            if target is None:
                continue
            target_module, target_key, bound = target
            params = self._summaries[target_module]["functions"][target_key]["params"]  # type: ignore[index]
            params = params[1:] if bound else params
            at = self.location(module, line)
            for index, value in passed:
                if value is not None and index < len(params):
                    changed |= self._note(self.parameters, target[:2], params[index], replace(value, passed_at=at))
            for name, value in named:
                if value is not None and name in params:
                    changed |= self._note(self.parameters, target[:2], name, replace(value, passed_at=at))
        cls = function["class"]
        for attribute, source in function["sets"].items():
            value = self.evaluate(module, key, source)
            if value is not None and cls is not None:
                changed |= self._note(self.attributes, (module, cls), attribute, value)
        for source in function["returns"]:
            value = _unpassed(self.evaluate(module, key, source))
            if _holds_data(value):
                returned = self.returned_data.setdefault((module, key), [])
                if value not in returned and len(returned) < MAX_RESULTS:
                    returned.append(value)
                    self._read_callers(module)
                    changed = True
                continue
            if value is not None and (module, key) not in self.results:
                self.results[(module, key)] = value
                self._read_callers(module)
                changed = True
        return changed

    def _read_callers(self, module: str) -> None:
        """Read the modules that may call what `module` returns: its importers, and through a
        package's `__init__` that re-exports it (`from lib.data import get_data_loader`) theirs."""
        pending, seen = [module], {module}
        while pending:
            for importer in self.importers_of(pending.pop()):
                self.summary(importer)
                if importer not in seen and self.project.relpaths[importer].endswith("__init__.py"):
                    seen.add(importer)
                    pending.append(importer)

    # -- questions -----------------------------------------------------------------------

    def wrapped(self, table: dict, key: tuple[str, str | None]) -> dict[str, Origin]:
        """The DDP models among `table[key]` (parameters or attributes): name -> Origin."""
        return {name: value for name, value in table.get(key, {}).items() if isinstance(value, Origin)}

    def prepared(self, table: dict, key: tuple[str, str | None]) -> dict[str, Prepared]:
        """What Accelerate prepared among `table[key]` (parameters or attributes): name -> Prepared."""
        return {name: value for name, value in table.get(key, {}).items() if isinstance(value, Prepared)}

    def receives_wrapped(self, module: str) -> bool:
        """Whether some function of `module` is handed a DDP model, keeps one on `self` or
        binds one a project function returns: its rules must look though it never names DDP."""
        if self._receivers is None:
            self._receivers = {
                m for table in (self.parameters, self.attributes) for (m, k) in table
                if self.wrapped(table, (m, k)) or self.prepared(table, (m, k))
            }
            for name in self._order if self.results else ():
                summary = self._summaries[name]
                if summary is not None and any(
                    _wraps(self._result(name, callee, function["class"]))
                    for function in summary["functions"].values()
                    for callee in function["made"]
                ):
                    self._receivers.add(name)
        return module in self._receivers

    def result_of(self, module: str, callee: str, cls: str | None, index: int | None = None) -> Origin | None:
        """The Origin of the DDP model that calling `callee` in `module` returns (with `index`:
        at that position of the tuple it returns, `model, device = setup(net)`), or None."""
        value = self._result(module, callee, cls)
        if isinstance(value, Pack):
            value = value.items[index] if index is not None and index < len(value.items) else None
        return value if isinstance(value, Origin) else None

    def _result(self, module: str, callee: str, cls: str | None):
        if module not in self._summaries or not self.results:
            return None
        target = self.resolve(module, callee, cls)
        return self.results.get(target[:2]) if target is not None else None

    def callee_summary(self, module: str, key: str | None, cls: str | None, callee: str) -> dict | None:
        """The summary of the project function a call of `callee` in function `key` reaches, with
        "bound": whether `self` is bound: a function or class of the project, or the method
        (`__call__` for a plain call) of the project object a parameter or `self` attribute
        holds (`loss_scaler(loss, optimizer, update_grad=...)`); None when unknown."""
        value, rest = self._held(module, key, cls, callee)
        if isinstance(value, LossScaler) and not rest:
            return LOSS_SCALER_CALL
        target = self.target(module, key, cls, callee)
        if target is None:
            return None
        return {**self._summaries[target[0]]["functions"][target[1]], "bound": target[2]}  # type: ignore[index]

    def _held(self, module: str, key: str | None, cls: str | None, callee: str) -> tuple:
        """What the parameter or `self` attribute that a call of `callee` in function `key` starts
        from holds (None when unknown), and the rest of the name: (value, "step") for `scaler.step`."""
        head, _, rest = callee.partition(".")
        if head == "self" and cls is not None and rest:
            attribute, _, rest = rest.partition(".")
            return self.attributes.get((module, cls), {}).get(attribute), rest
        return (self.parameters.get((module, key), {}).get(head) if key else None), rest

    def target(self, module: str, key: str | None, cls: str | None, callee: str) -> tuple[str, str, bool] | None:
        """(module, key, whether `self` is bound) of the project function that calling `callee`
        in function `key` reaches, also through an object a parameter or `self` attribute holds."""
        value, rest = self._held(module, key, cls, callee)
        if isinstance(value, Instance) and "." not in rest:
            return self._method(value, rest or "__call__")
        return self.resolve(module, callee, cls)

    def combines(self, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0) -> str | None:
        """Where calling `callee` in function `key` combines results across ranks: the place of
        the collective (`all_reduce` at utils.py:44) it reaches through project helpers, or None.
        A method called on an object of unknown class (`meter.sync()` in a loop over meters)
        is looked for among the classes of the caller's module."""
        if depth > 4 or self.summary(module) is None:
            return None
        memo_key = (module, key, cls, callee)
        if memo_key in self._combines:
            return self._combines[memo_key]
        self._combines[memo_key] = None  # a recursion through this call combines nothing more
        found = None
        if self._qualify(module, callee) in COMBINING_COLLECTIVES:
            found = "here"
        else:
            targets = [self.target(module, key, cls, callee)]
            if targets[0] is None and "." in callee and "()." not in callee:
                method = callee.rpartition(".")[2]
                classes = self._summaries[module]["classes"]  # type: ignore[index]
                targets = [self._method(Instance(module, name, ""), method) for name in classes]
            for target in filter(None, targets):
                record = self._summaries[target[0]]["functions"][target[1]]  # type: ignore[index]
                for inner, line in record["invocations"]:
                    where = self.combines(target[0], target[1], record["class"], inner, depth + 1)
                    if where is not None:
                        found = where if where != "here" else f"{inner.rpartition('.')[2]} at {self.location(target[0], line)}"
                        break
                if found:
                    break
        self._combines[memo_key] = found
        return found

    def evaluation(self, module: str, key: str | None, cls: str | None, callee: str, index: int | None,
                   keyword: str | None) -> tuple[str, str, str] | None:
        """Where the project function that calling `callee` in function `key` reaches iterates
        what the call passes it (at position `index` or as `keyword`) in a loop without
        backward(), and combines results across ranks in or after that loop: (the function's
        key, the loop's place, the combine's place); None if it does not, or is unknown."""
        return self.follow(self._evaluations, self._evaluates, module, key, cls, callee, index, keyword)

    def follow(self, memo: dict, check, module: str, key: str | None, cls: str | None, callee: str,
               index: int | None, keyword: str | None, depth: int = 0):
        """What `check(module, key, record, source)` finds about a value that calling `callee` in
        function `key` hands (at position `index` or as `keyword`) to a project function: there,
        as its parameter (source ["param", name]); else where that function hands it on (up to
        three calls deep: `evaluate(loader)` calls `_run(model, loader)`) or keeps it on `self`
        for its class's methods (["attr", name]). The first answer, or None; `memo` keeps the
        answers by function and parameter."""
        target = self.target(module, key, cls, callee)
        if target is None:
            return None
        record = self._summaries[target[0]]["functions"][target[1]]  # type: ignore[index]
        params = record["params"][1:] if target[2] else record["params"]
        name = keyword if keyword in params else params[index] if index is not None and index < len(params) else None
        if name is None:
            return None
        memo_key = (target[0], target[1], name)
        if memo_key not in memo:
            memo[memo_key] = None  # a recursion through it finds nothing more
            memo[memo_key] = self._reach(memo, check, target[0], target[1], record, ["param", name], depth)
        return memo[memo_key]

    def _reach(self, memo: dict, check, module: str, key: str, record: dict, source: list, depth: int):
        found = check(module, key, record, source)
        if found is not None or depth >= 3:
            return found
        for inner, args, keywords, _ in record["calls"]:
            handed = [(i, None) for i, given in enumerate(args) if given == source]
            handed += [(None, k) for k, given in keywords.items() if given == source]
            for position, word in handed:
                found = self.follow(memo, check, module, key, record["class"], inner, position, word, depth + 1)
                if found is not None:
                    return found
        kept = [["attr", a] for a, given in record["sets"].items() if given == source] if source[0] == "param" else []
        for other, method in self._summaries[module]["functions"].items() if kept else ():  # type: ignore[index]
            for attribute in kept if method["class"] == record["class"] else ():
                found = self._reach(memo, check, module, other, method, attribute, depth)
                if found is not None:
                    return found
        return None

    def kept_evaluation(self, module: str, cls: str, attribute: str) -> tuple[str, str, str] | None:
        """Where a method of class `cls` evaluates what the class keeps as `self.<attribute>`
        (`self.val_loader = build_loader(cfg, "val")`) and combines the results, as `evaluation`."""
        memo_key = (module, cls, f"self.{attribute}")
        if memo_key not in self._evaluations:
            self._evaluations[memo_key] = None  # a recursion through it finds nothing more
            self._evaluations[memo_key] = next(filter(None, (
                self._reach(self._evaluations, self._evaluates, module, key, method, ["attr", attribute], 0)
                for key, method in self._summaries[module]["functions"].items()  # type: ignore[index]
                if method["class"] == cls
            )), None)
        return self._evaluations[memo_key]

    def _evaluates(self, module: str, key: str, record: dict, source: list):
        held = source[1] if source[0] == "param" else f"self.{source[1]}" if source[0] == "attr" else None
        for line, _, iterated, trains in record["loops"]:
            if held in iterated and not trains:
                for inner, at in record["invocations"]:
                    where = self.combines(module, key, record["class"], inner) if at >= line else None
                    if where is not None:
                        if self._deduplicates(module, key, record):
                            return None  # padded duplicates land on their originals' slots
                        if where == "here":
                            where = f"{inner.rpartition('.')[2]} at {self.location(module, at)}"
                        return key, self.location(module, line), where
        return None

    def _deduplicates(self, module: str, key: str, record: dict, depth: int = 0) -> bool:
        """Whether function `key` (or a project helper it calls) places results by sample id
        (torch_api.DEDUPLICATING_METHODS): a COCO evaluator merging by image id, features
        index_copy_'d into a dataset-sized tensor; or trims them to a length
        (`preds[: len(data_loader.dataset)]`, also through `n = len(...)`)."""
        if (module, key) in self._deduplicating:
            return self._deduplicating[(module, key)]
        self._deduplicating[(module, key)] = False  # a recursion through it finds nothing more
        found = self._deduplicating[(module, key)] = self._finds_deduplication(module, key, record, depth)
        return found

    def _finds_deduplication(self, module: str, key: str, record: dict, depth: int) -> bool:
        if record.get("deduplicates"):
            return True  # `preds[: len(dataset)]`: the padded duplicates are cut off
        for callee, _ in record["invocations"]:
            if callee.rpartition(".")[2] in DEDUPLICATING_METHODS:
                return True
            refused = self.refused
            target = self.target(module, key, record["class"], callee) if depth < 4 else None
            if self.refused != refused:
                return True  # a helper past the bounds may place results by sample id: unknown, so silent
            if target is not None and target[:2] != (module, key):
                inner = self._summaries[target[0]]["functions"][target[1]]  # type: ignore[index]
                if self._deduplicates(target[0], target[1], inner, depth + 1):
                    return True
        return False

    def hands_to_evaluation(self, module: str) -> bool:
        """Whether some function of `module` hands a value to a project function that evaluates
        it and combines the results (see `evaluation`): its rules must look though it never
        names a collective."""
        summary = self._summaries.get(module)
        if summary is None:
            return False
        # Asked of every module's hints: only a module that builds samplers reads on (its loaders' helpers).
        self._reading_closed = not self.project.modules[module].get("samplers")
        try:
            return self._hands_to_evaluation(module, summary)
        finally:
            self._reading_closed = False

    def _hands_to_evaluation(self, module: str, summary: dict) -> bool:
        return any(
            self.evaluation(module, key, function["class"], callee, index, None) is not None
            for key, function in summary["functions"].items()
            for callee, args, _, _ in function["calls"]
            for index, source in enumerate(args)
            if source is not None
        )

    @property
    def context(self):
        """Who runs the project's functions (ddplint.model.context.ProcessContext)."""
        if self._context is None:
            self._context = process_context.ProcessContext(self)
        return self._context

    def digest(self) -> list:
        """What the solution says, as JSON-able data (for cache keys)."""
        return [
            sorted([*key, name, repr(value)] for key, values in table.items() for name, value in values.items())
            for table in (self.parameters, self.attributes)
        ] + [sorted([*key, repr(value)] for key, value in self.results.items())] + [
            sorted([*key, repr(values)] for key, values in self.returned_data.items())
        ] + self.values.digest()

    @functools.cached_property
    def values(self) -> values.Values:
        """Saved files and DDP wraps across the program (ddplint.model.values)."""
        return values.Values(self)


def _either(values: list):
    """What a conditional expression, or a name an `if` binds in one way or both, holds: the
    DDP model, sampler or loader one way makes (`DDP(m) if distributed else m`), since the
    distributed run takes that way, rather than a project object the other keeps; None where
    the ways hold different kinds of value (a DDP model and its inner module) or objects of
    different classes."""
    found = [value for value in values if value is not None]
    # A library loss scaler one way and a project object the other (`ApexScaler() if apex else
    # NativeScalerWithGradNormCount()`): the project's code says what its object does.
    found = [value for value in found if not isinstance(value, LossScaler)] or found
    followed = [value for value in found if not isinstance(value, Instance)] or found
    if not followed or len({type(value) for value in followed}) != 1:
        return None
    if len({(value.module, value.cls) for value in followed if isinstance(value, Instance)}) > 1:
        return None
    return followed[0]


def _holds_data(value) -> bool:
    """A sampler or loader, or a tuple holding one."""
    if isinstance(value, Pack):
        return any(_holds_data(item) for item in value.items)
    return isinstance(value, Data)


def _unpassed(value):
    """A value as a function's result: where it was made, not how its maker got it."""
    return replace(value, passed_at=None) if value is not None and value.passed_at else value
