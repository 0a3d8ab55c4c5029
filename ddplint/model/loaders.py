"""Samplers and loaders across functions and modules: questions the program model answers.

The program (ddplint.model.program) follows samplers (a torch DistributedSampler) and loaders
(a DataLoader drawing from one) through assignments, arguments, returns, `self` attributes and
tuples. These questions read that solution:

- `built`: what a project function returns of the samplers and loaders it builds (a data
  builder's `return train_loader, val_loader`), with where the sampler is made;
- `cycled`: whether a project generator re-iterates its argument forever (`cycle(loader)`);
- `passed_once`: whether a project function makes one pass over its argument
  (`train_one_epoch(model, loader)`);
- `forwarder`: where a project class hands its keyword arguments to a DataLoader untouched;
- `hands_back`: which argument a project function or method returns unchanged
  (`loader = backend.wrap(loader)`), `batches`: which it returns in a BatchSampler;
- `sets_epoch`, `set_epoch_in`: whether a project function, or some lines of one, may call
  `set_epoch` (`shuffle_dataset(loader, epoch)` in `utils.py`), not on a parameter every call
  passes None (`passed_none`);
- `evaluated`: where a loader drawing from the sampler made at a place is evaluated and its
  results combined across ranks by a project function (see Program.evaluation), or run by an
  ignite engine with a combining metric attached (ddplint.model.engines).

Each answers None (or nothing) where the model does not know: the caller stays silent.
"""

from __future__ import annotations

from dataclasses import dataclass

from ddplint.core.torch_api import BATCH_SAMPLER, IGNITE_ENGINE_RUN, is_dataset_set_epoch
from ddplint.model.engines import engine_evaluation
from ddplint.model.program import BUILTIN_NAMES, Target
from ddplint.model.records import CallResult, Either, Group, Loader, Pack, Param, Place, Sampler


@dataclass(frozen=True)
class Evaluated:
    """A loader of an evaluation sampler handed to `function`, which iterates it in a loop at
    `loop` and combines the results with `combine`; `handed_at` is the call that hands it."""

    function: str
    loop: Place
    combine: object  # ddplint.model.program.Collective
    handed_at: Place
    kept_as: str | None = None  # the attribute of `self` the loader is kept as, instead of handed

    def describe(self) -> str:
        if self.kept_as is not None:
            return (
                f" (its loader is kept as self.{self.kept_as} at {self.handed_at}, evaluated by {self.function}() in a "
                f"loop at {self.loop} and combined by {self.combine})"
            )
        return (
            f" (its loader is handed to {self.function}() by the call at {self.handed_at}, evaluated in a loop at "
            f"{self.loop} and combined by {self.combine})"
        )


@dataclass(frozen=True)
class Built:
    """A shuffling DistributedSampler a builder returns, alone or drawn from by a DataLoader:
    where it is made, its `index` in the tuple returned (None when returned alone), and the
    position of the builder's parameter that is its dataset (None when not one); `drops_last`
    when it is made with drop_last=True (it pads nothing); `optional` when on some path of the
    builder what it returns holds no DistributedSampler there (None, or a loader drawing from
    None or another sampler: `sampler = DistributedSampler(ds) if distributed else None`), so
    set_epoch on it, or on the loader's `sampler`, may fail; `batched` when the loader draws
    from it through its `batch_sampler` (ddplint.model.records.Loader); `epoch_given` when its
    constructor is handed the epoch its order is seeded from (ddplint.model.records.Sampler)."""

    made_at: Place
    index: int | None
    dataset: int | None
    drops_last: bool = False
    optional: bool = False
    batched: bool = False
    epoch_given: bool = False


@dataclass(frozen=True)
class Cycle:
    """A project generator that re-iterates its parameter `name` (at `index`) forever without
    set_epoch, in the loop at `loop`."""

    index: int
    name: str
    loop: Place


@dataclass(frozen=True)
class OnePass:
    """A project function `function` that makes one pass over its parameter `name` (at `index`)
    without set_epoch, in the loop at `loop` (`train_one_epoch(model, loader, ...)`); `backward`:
    where a backward() runs in that loop (it trains), or None."""

    index: int
    name: str
    function: str
    loop: Place
    backward: Place | None = None


def function_of(program, qualified: str, importer: str):
    """The module-level project function `qualified` (as `importer` imports it) names, through
    re-exports, or the static method of a module-level class it names (`Cifar.get_loader`, a
    call through the class that binds nothing): a ddplint.model.program.Target; None if it is
    not one, or its module was not read."""
    found = program.split(qualified, importer)
    if found is not None and found[1].count(".") == 1:
        record = program.known(*found)
        return Target(*found, False) if record is not None and record.cls is not None and not record.method else None
    if found is None or not found[1] or "." in found[1]:
        return None
    program.reading_closed = True  # asked of every import: only modules the solution read answer
    try:
        target = program.resolve(found[0], found[1], None)
    finally:
        program.reading_closed = False
    return target if target is not None and not target.bound else None


def built(program, qualified: str, importer: str, literals: tuple = (), line: int | None = None) -> dict[str, Built]:
    """What the project function `qualified` returns of a shuffling DistributedSampler it (or a
    builder it calls) makes: "sampler" (the sampler itself) and/or "loader" (a DataLoader drawing
    from it), or "each" (a list or dict of them, which the program model follows). Its first returned value that holds one decides; a call passing `literals`
    ((position or keyword, value) pairs) that rule out the test a sampler is made under gets
    none of it (Program.rules_out), and so does the call at `line` of `importer` where the
    loaders draw from samplers the builder is handed and it hands none (`create_loader(datasets,
    [None])`: Program.hands_no_sampler_at)."""
    target = function_of(program, qualified, importer)
    if target is None or line is not None and program.hands_no_sampler_at(importer, line, target):
        return {}
    record = program.known(target.module, target.key)
    params = record.params
    returned = program.returned_data.get(target.function, ())
    for value in filter(None, (program.admitted(value, target, literals) for value in returned)):
        items = list(enumerate(value.items)) if isinstance(value, Pack) else [(None, value)]
        found: dict[str, Built] = {}
        for index, item in items:
            # a list or dict every element of which is one (`loaders[task] = DataLoader(...)`): "each"
            each = isinstance(item, Pack) and item.each
            element = item.items[0] if each else item
            sampler = element.sampler if isinstance(element, Loader) else element
            if isinstance(sampler, Sampler) and sampler.shuffle is not False:
                held = sampler.dataset
                dataset = params.index(held[2]) if held and held[:2] == target.function and held[2] in params else None
                optional = sampler.optional or not isinstance(element, Loader) and _may_return_none(program, target, record, index)
                batched = isinstance(element, Loader) and element.batched
                built = Built(sampler.made_at, index, dataset, sampler.drop_last is True, optional, batched, sampler.epoch_given)
                found.setdefault("each" if each else "loader" if isinstance(item, Loader) else "sampler", built)
        if found:
            return found
    return {}


def _may_return_none(program, target, record, index: int | None) -> bool:
    """Whether the builder `target` (summary `record`) may return None, or something the model
    does not follow, in place of the sampler it returns alone (`index` None) or at `index` of
    a tuple: a return of something else, an end without one, an `if` that binds it one way only."""
    if record.other_returns:
        return True
    module, key = target.function
    for source in record.returns:
        if index is not None:
            source = source.items[index] if isinstance(source, Group) and index < len(source.items) else None
        if program.absent_some_way(module, key, source):
            return True
    return False


def cycled(program, qualified: str, importer: str) -> Cycle | None:
    """The project generator `qualified` names, where it re-iterates a parameter in an endless
    loop and never calls set_epoch; None otherwise. Only modules whose text may hold one (the
    index's "endless") are read."""
    found = program.split(qualified, importer)
    if found is None or not found[1] or "." in found[1]:
        return None
    module, name = found
    if not program.project.modules[module].get("endless"):
        return None
    record = program.function(module, name)
    if record is None or record.cycles is None:
        return None
    return Cycle(record.cycles.index, name, program.place(module, record.cycles.line))


def passed_once(program, qualified: str, importer: str) -> OnePass | None:
    """The project function `qualified` names, where it makes one pass over a parameter and
    never calls set_epoch (`train_one_epoch(model, loader, ...)`); None otherwise. Asked only
    of a call that an epoch loop makes with a loader: it reads that function's module."""
    found = program.split(qualified, importer)
    if found is None or not found[1] or "." in found[1]:
        return None
    target = program.resolve(found[0], found[1], None)  # through re-exports
    if target is None or target.bound:
        return None
    record = program.function(target.module, target.key)
    if record is None or record.passes is None:
        return None
    index, line = record.passes.index, record.passes.line
    last = next((loop.last for loop in record.loops if loop.first == line), line)
    backward = program.backward_in(target.module, target.key, line, last)
    return OnePass(index, record.params[index], target.key, program.place(target.module, line), backward)


def sets_epoch(program, qualified: str, importer: str) -> bool:
    """Whether calling `qualified` (as `importer` imports it) may call `set_epoch`: it names a
    project function that does, itself or through the project functions it calls (three calls
    deep), or one the model cannot read (unknown: the caller stays silent). A name of no
    project module is a library's: False."""
    found = program.split(qualified, importer)
    if found is None:
        return False
    target = program.resolve(found[0], found[1], None) if found[1] and "." not in found[1] else None
    if target is None:
        return True
    return set_epoch_in(program, target.module, target.key, 0, LAST_LINE)


LAST_LINE = 1 << 30  # `set_epoch_in` a whole function


def set_epoch_in(program, module: str, key: str, first: int, last: int, depth: int = 0) -> bool:
    """Whether lines `first` to `last` of function `key` may call `set_epoch`: a call of one,
    or of a project function that may (three calls deep), or of one it cannot read; or a call
    that hands a sampler or loader to a callable the model does not know (`hook(loader)`: a
    parameter's, an unknown object's method), outside a loop's header (where `enumerate(...)`,
    `tqdm(...)` wrap it for iteration)."""
    record = program.function(module, key)
    if record is None:
        return True
    headers = {loop.first for loop in record.loops}
    for call in record.calls:
        if first <= call.line <= last and call.line not in headers and _hands_data_to_unknown(program, module, key, record, call):
            return True
    for call in record.invocations:
        if not first <= call.line <= last:
            continue
        if call.callee.rpartition(".")[2] == "set_epoch" and not is_dataset_set_epoch(call.callee):
            if not passed_none(program, module, key, call.callee):
                return True
            continue
        refused = program.refused
        target = program.target(module, key, record.cls, call.callee) if depth < 3 else None
        if program.refused != refused:
            return True  # a helper past the bounds may call it: unknown
        if target is not None and target.function != (module, key):
            if set_epoch_in(program, target.module, target.key, 0, LAST_LINE, depth + 1):
                return True
    return False


def passed_none(program, module: str, key: str | None, callee: str) -> bool:
    """Whether `callee` (`train_sampler.set_epoch`) is a method of a parameter of function `key`
    that every call in the project passes None, or leaves to its default None
    (ddplint.model.context.Context.passed_or_default): the call never runs on an object (it
    stands under `if train_sampler is not None:`, or raises)."""
    head, _, method = callee.partition(".")
    record = program.function(module, key) if key else None
    if record is None or head not in record.params or "." in method:
        return False
    passed = program.context.passed_or_default(module, key, head)
    return bool(passed) and all(text == "None" for _, text, _ in passed)


def _hands_data_to_unknown(program, module: str, key: str, record, call) -> bool:
    """Whether `call` hands a sampler or loader to a callable that is neither a project function
    the model reaches, nor a builtin, nor a library's (a name `module` imports from outside)."""
    given = [*call.args, *call.keywords.values()]
    if not any(isinstance(value, (Sampler, Loader)) for source in given if source is not None
               for value in program.values_of(module, key, source)):
        return False
    head = call.callee.partition(".")[0]
    if call.callee in BUILTIN_NAMES or program.target(module, key, record.cls, call.callee) is not None:
        return False
    return head in record.params or head == "self" or program.qualify(module, call.callee) is None



def forwarder(program, module: str, cls: str, loaders: frozenset[str]) -> Place | None:
    """Where the `__init__` of project class `cls` of `module` builds the DataLoader (one of the
    qualified `loaders`) it hands its own keyword arguments to, untouched; None otherwise. Only
    modules whose text may hold one (the index's "forwarders") are read."""
    if not program.project.modules[module].get("forwarders"):
        return None
    record = program.function(module, f"{cls}.__init__")
    forwards = record.forwards if record is not None else None
    if forwards is None or program.qualify(module, forwards.callee) not in loaders:
        return None
    return program.place(module, forwards.line)


def hands_back(program, module: str, key: str | None, cls: str | None, callee: str) -> int | None:
    """The position of the argument that calling `callee` in function `key` gets back unchanged
    (`def wrap(self, loader): return loader`): every return of the project function or method it
    reaches returns that parameter. None when any return gives something else, or unknown."""
    target = program.target(module, key, cls, callee)
    if target is None:
        return None
    record = program.known(target.module, target.key)
    params = record.arguments(target.bound)
    returned = record.returns
    if record.other_returns or not returned or any(not isinstance(source, Param) for source in returned):
        return None
    names = {source.name for source in returned}
    name = names.pop() if len(names) == 1 else None
    return params.index(name) if name in params else None


def batches(program, module: str, key: str | None, cls: str | None, callee: str) -> int | None:
    """The position of the argument that calling `callee` in function `key` gets back batched:
    the project function it reaches returns `BatchSampler(sampler, ...)` over that parameter
    (`def make_batch_sampler(sampler, n): return BatchSampler(sampler, n, drop_last=False)`),
    the batches holding the sampler's indices, padding included. A branch returning a project
    BatchSampler subclass (`IterationBasedBatchSampler(batch_sampler, iters)`, which re-batches
    it) does not hide it; any other return does. None when unknown."""
    target = program.target(module, key, cls, callee)
    record = program.function(target.module, target.key) if target is not None else None
    if record is None or record.other_returns or not record.returns:
        return None
    names, pending = set(), list(record.returns)
    while pending:
        source = pending.pop()
        if isinstance(source, Either):
            pending.extend(source.branches)
            continue
        if not isinstance(source, CallResult):
            return None
        qualified = program.class_name(target.module, source.callee)
        if qualified in BATCH_SAMPLER and source.data is not None and isinstance(source.data.sampler, Param):
            names.add(source.data.sampler.name)
        elif not program.project.module_view(target.module).subclass_of(qualified, BATCH_SAMPLER.spellings):
            return None
    params = record.arguments(target.bound)
    name = names.pop() if len(names) == 1 else None
    return params.index(name) if name in params else None


def evaluated(program, module: str) -> dict[int, Evaluated]:
    """Samplers made in `module` whose loaders some project function evaluates and combines
    across ranks, by the line each is made on. A sampler that shuffles counts only when the
    function is named for evaluation (ddplint.analyses.roles.evaluates)."""
    path = program.project.relpaths[module]
    return {where.line: found for where, found in _evaluations(program).items() if where.path == path}


def _evaluations(program) -> dict[Place, Evaluated]:
    if program.memos.evaluated_samplers is not None:
        return program.memos.evaluated_samplers
    from ddplint.analyses.roles import evaluates

    table: dict[Place, Evaluated] = {}
    # Answers memoised while reading was closed (Program.hands_to_evaluation) may lack a
    # helper module: the table is solved on memos of its own, the same whatever was asked before.
    memos, closed = program.memos, program.reading_closed
    memos.evaluated_samplers = table
    program.memos, program.reading_closed = type(memos)(), False
    program.memos.evaluated_samplers = table
    program.asking = True  # its helpers may lie past the modules the solution read (Program.summary)
    try:
        _fill(program, table, evaluates)
    finally:
        program.memos, program.reading_closed = memos, closed
        program.asking = False
    return table


def _fill(program, table: dict[Place, Evaluated], evaluates) -> None:
    for module, key, function in program.functions():  # the modules the solution read, in its order
        _kept(program, table, evaluates, module, key, function)
        for call in function.calls:
            handed = [(i, None, s) for i, s in enumerate(call.args)] + [(None, k, s) for k, s in call.keywords.items()]
            for index, word, value in (
                (index, word, value) for index, word, source in handed if source is not None
                for value in program.values_of(module, key, source)
            ):
                if not isinstance(value, Loader):
                    continue
                sampler = value.sampler
                if not sampler.pads or sampler.made_at in table or _judged_where_batched(value):
                    continue
                found = program.evaluation(module, key, function.cls, call.callee, index, word, call.line)
                if found is None and call.callee.rpartition(".")[2] == IGNITE_ENGINE_RUN:
                    found = engine_evaluation(program, module, key, call.line, index, word)
                if found is not None and (sampler.shuffle is False or evaluates(found.function.rpartition(".")[2])):
                    table[sampler.made_at] = Evaluated(found.function, found.loop, found.combine, program.place(module, call.line))


def _judged_where_batched(loader: Loader) -> bool:
    """A loader a module builds through a batch sampler over a sampler another module's helper
    makes (`DataLoader(ds, batch_sampler=make_batch_data_sampler(make_data_sampler(ds, False)))`
    in a script): that module reads the sampler, its batches and the loader itself, and the
    finding is its own, one for each script that evaluates so, not one at the shared helper."""
    return loader.batched and loader.made_at.path != loader.sampler.made_at.path


def _kept(program, table: dict[Place, Evaluated], evaluates, module: str, key: str, function) -> None:
    """A method that keeps a builder's loader on `self` (`self.val_loader = build_loader(cfg,
    "val")`) for another method of its class to evaluate (Program.kept_evaluation)."""
    for attribute, source in function.sets.items() if function.cls else ():
        if not isinstance(source, CallResult):
            continue  # a parameter kept is followed from the call that hands it
        for value in program.values_of(module, key, source):
            sampler = value.sampler if isinstance(value, Loader) else None
            if sampler is None or not sampler.pads or sampler.made_at in table or _judged_where_batched(value):
                continue
            found = program.kept_evaluation(module, function.cls, attribute)
            if found is not None and (sampler.shuffle is False or evaluates(found.function.rpartition(".")[2])):
                table[sampler.made_at] = Evaluated(
                    found.function, found.loop, found.combine, program.place(module, source.line), attribute
                )
