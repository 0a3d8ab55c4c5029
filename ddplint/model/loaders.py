"""Samplers and loaders across functions and modules: questions the program model answers.

The program (ddplint.model.program) follows `Data` values, a torch DistributedSampler or a
DataLoader drawing from one, through assignments, arguments, returns, `self` attributes and
tuples. These questions read that solution:

- `built`: what a project function returns of the samplers and loaders it builds (a data
  builder's `return train_loader, val_loader`), with where the sampler is made;
- `cycled`: whether a project generator re-iterates its argument forever (`cycle(loader)`);
- `passed_once`: whether a project function makes one pass over its argument
  (`train_one_epoch(model, loader)`);
- `forwarder`: where a project class hands its keyword arguments to a DataLoader untouched;
- `hands_back`: which argument a project function or method returns unchanged
  (`loader = backend.wrap(loader)`);
- `evaluated`: where a loader drawing from the sampler made at a place is evaluated and its
  results combined across ranks by a project function (see Program.evaluation).

Each answers None (or nothing) where the model does not know: the caller stays silent.
"""

from __future__ import annotations

from dataclasses import dataclass

from ddplint.model.program import Data, Pack, Program


@dataclass(frozen=True)
class Evaluated:
    """A loader of an evaluation sampler handed to `function`, which iterates it in a loop at
    `loop` and combines the results at `combine`; `handed_at` is the call that hands it."""

    function: str
    loop: str
    combine: str
    handed_at: str
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


def function_of(program: Program, qualified: str, importer: str) -> tuple[str, str] | None:
    """(module, key) of the module-level project function `qualified` (as `importer` imports
    it) names, through re-exports; None if it is not one, or its module was not read."""
    found = program.split(qualified, importer)
    if found is None or not found[1] or "." in found[1]:
        return None
    program._reading_closed = True  # asked of every import: only modules the solution read answer
    try:
        target = program.resolve(found[0], found[1], None)
    finally:
        program._reading_closed = False
    return target[:2] if target is not None and not target[2] else None


def built(program: Program, qualified: str, importer: str, literals: list = ()) -> dict[str, tuple[str, int | None, int | None]]:
    """What the project function `qualified` returns of a shuffling DistributedSampler it (or a
    builder it calls) makes: "sampler" (the sampler itself) and/or "loader" (a DataLoader drawing
    from it) -> (where the sampler is made, its index in the returned tuple or None when
    returned alone, the position of the builder's parameter that is the sampler's dataset or
    None). Its first returned value that holds one decides; a call passing `literals` ([position
    or keyword, value]) that rule out the test a sampler is made under gets none of it
    (Program.rules_out)."""
    target = function_of(program, qualified, importer)
    params = program._summaries[target[0]]["functions"][target[1]]["params"] if target is not None else []  # type: ignore[index]
    returned = program.returned_data.get(target, ()) if target is not None else ()
    for value in [value for value in returned if not program.rules_out(value, (*target, False), literals)]:  # type: ignore[misc]
        items = list(enumerate(value.items)) if isinstance(value, Pack) else [(None, value)]
        found: dict[str, tuple[str, int | None, int | None]] = {}
        for index, item in items:
            sampler = item.sampler if isinstance(item, Data) and item.kind == "loader" else item
            if isinstance(sampler, Data) and sampler.shuffle is not False:
                held = sampler.dataset
                dataset = params.index(held[2]) if held and held[:2] == target and held[2] in params else None
                found.setdefault(item.kind, (sampler.made_at, index, dataset))
        if found:
            return found
    return {}


def cycled(program: Program, qualified: str, importer: str) -> tuple[int, str, str] | None:
    """(index of the parameter, name, where the loop is) of the project generator `qualified`
    names, where it re-iterates that parameter in an endless loop and never calls set_epoch;
    None otherwise. Only modules whose text may hold one (the index's "endless") are read."""
    found = program.split(qualified, importer)
    if found is None or not found[1] or "." in found[1]:
        return None
    module, name = found
    if not program.project.modules[module].get("endless"):
        return None
    summary = program.summary(module)
    record = summary["functions"].get(name) if summary is not None else None
    if record is None or "cycles" not in record:
        return None
    index, line = record["cycles"]
    return index, name, program.location(module, line)


def passed_once(program: Program, qualified: str, importer: str) -> tuple[int, str, str, str] | None:
    """(index of the parameter, its name, the function's name, where the loop is) of the project function `qualified`
    names, where it makes one pass over that parameter and never calls set_epoch
    (`train_one_epoch(model, loader, ...)`); None otherwise. Asked only of a call that an
    epoch loop makes with a loader: it reads that function's module."""
    found = program.split(qualified, importer)
    if found is None or not found[1] or "." in found[1]:
        return None
    target = program.resolve(found[0], found[1], None)  # through re-exports
    if target is None or target[2]:
        return None
    summary = program.summary(target[0])
    record = summary["functions"].get(target[1]) if summary is not None else None
    if record is None or "passes" not in record:
        return None
    index, line = record["passes"]
    return index, record["params"][index], target[1], program.location(target[0], line)


def forwarder(program: Program, module: str, cls: str, loaders: frozenset[str]) -> str | None:
    """Where the `__init__` of project class `cls` of `module` builds the DataLoader (one of the
    qualified `loaders`) it hands its own keyword arguments to, untouched ("data/loaders.py:12");
    None otherwise. Only modules whose text may hold one (the index's "forwarders") are read."""
    if not program.project.modules[module].get("forwarders"):
        return None
    summary = program.summary(module)
    record = summary["functions"].get(f"{cls}.__init__") if summary is not None else None
    forwards = record.get("forwards") if record is not None else None
    if forwards is None or program._qualify(module, forwards[0]) not in loaders:
        return None
    return program.location(module, forwards[1])


def hands_back(program: Program, module: str, key: str | None, cls: str | None, callee: str) -> int | None:
    """The position of the argument that calling `callee` in function `key` gets back unchanged
    (`def wrap(self, loader): return loader`): every return of the project function or method it
    reaches returns that parameter. None when any return gives something else, or unknown."""
    target = program.target(module, key, cls, callee)
    if target is None:
        return None
    record = program._summaries[target[0]]["functions"][target[1]]  # type: ignore[index]
    params = record["params"][1:] if target[2] else record["params"]
    returned = record["returns"]
    if record.get("other_returns") or not returned or any(source[0] != "param" for source in returned):
        return None
    names = {source[1] for source in returned}
    name = names.pop() if len(names) == 1 else None
    return params.index(name) if name in params else None


def evaluated(program: Program, module: str) -> dict[int, Evaluated]:
    """Samplers made in `module` whose loaders some project function evaluates and combines
    across ranks, by the line each is made on. A sampler that shuffles counts only when the
    function is named for evaluation (ddplint.analyses.roles.evaluates)."""
    table = _evaluations(program)
    prefix = program.location(module, 1).rpartition(":")[0] + ":"
    return {int(where[len(prefix):]): found for where, found in table.items() if where.startswith(prefix)}


def _evaluations(program: Program) -> dict[str, Evaluated]:
    cached = getattr(program, "_evaluated_samplers", None)
    if cached is not None:
        return cached
    from ddplint.analyses.roles import evaluates

    table: dict[str, Evaluated] = {}
    program._evaluated_samplers = table  # type: ignore[attr-defined]
    # Answers memoised while reading was closed (Program.hands_to_evaluation) may lack a
    # helper module: the table is solved on its own memos, the same whatever was asked before.
    memos = program._evaluations, program._combines, program._deduplicating, program._reading_closed
    program._evaluations, program._combines, program._deduplicating, program._reading_closed = {}, {}, {}, False
    program.asking = True  # its helpers may lie past the modules the solution read (Program.summary)
    try:
        _fill(program, table, evaluates)
    finally:
        program._evaluations, program._combines, program._deduplicating, program._reading_closed = memos
        program.asking = False
    return table


def _fill(program: Program, table: dict[str, Evaluated], evaluates) -> None:
    for module in program._order[: program.solved]:  # the modules the solution read, in its order
        summary = program._summaries[module]
        for key, function in summary["functions"].items() if summary is not None else ():
            _kept(program, table, evaluates, module, key, function)
            for callee, args, keywords, line in function["calls"]:
                handed = [(i, None, s) for i, s in enumerate(args)] + [(None, k, s) for k, s in keywords.items()]
                for index, word, value in (
                    (index, word, value) for index, word, source in handed if source is not None
                    for value in program.values_of(module, key, source)
                ):
                    if not isinstance(value, Data) or value.kind != "loader" or value.sampler is None:
                        continue
                    sampler = value.sampler
                    if not sampler.pads or sampler.made_at in table:
                        continue
                    found = program.evaluation(module, key, function["class"], callee, index, word)
                    if found is not None and (sampler.shuffle is False or evaluates(found[0].rpartition(".")[2])):
                        table[sampler.made_at] = Evaluated(*found, program.location(module, line))


def _kept(program: Program, table: dict[str, Evaluated], evaluates, module: str, key: str, function: dict) -> None:
    """A method that keeps a builder's loader on `self` (`self.val_loader = build_loader(cfg,
    "val")`) for another method of its class to evaluate (Program.kept_evaluation)."""
    for attribute, source in function["sets"].items() if function["class"] else ():
        if source[0] != "call":
            continue  # a parameter kept is followed from the call that hands it
        for value in program.values_of(module, key, source):
            sampler = value.sampler if isinstance(value, Data) and value.kind == "loader" else None
            if sampler is None or not sampler.pads or sampler.made_at in table:
                continue
            found = program.kept_evaluation(module, function["class"], attribute)
            if found is not None and (sampler.shuffle is False or evaluates(found[0].rpartition(".")[2])):
                table[sampler.made_at] = Evaluated(*found, program.location(module, source[2]), attribute)
