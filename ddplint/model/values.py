"""What the program's values are, beyond "a DDP model": the files it saves and what they hold,
where the objects of a project class are wrapped in DDP, and where a function's results go.

Read over the solved program (ddplint.model.program) from what the summaries say of files
(ddplint.model.files):

- which checkpoints hold a DDP model's state dict (keys prefixed `module.`): `wrapper_saves`,
  `saved_from_wrapper`. A model whose `state_dict()` is saved counts only when the program
  knows it is a DDP model (`ddp_model.state_dict()`); `model.module.state_dict()` and a
  `model_without_ddp = model.module` are the inner model, which the program never takes for one;
- which saved files hold tensors on the host only (`saved_on_host`), and which records a class
  saves of Python values alone (`own_record`);
- where a function saves on every rank that calls it (`saves_on_any_rank`);
- where a project class's objects are wrapped in DDP (`wraps`, `wrapped_classes`);
- what the callers of a function do with its result (`result_fate`): send it to another
  process (pickled), or keep it in place.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ddplint.core.torch_api import PICKLE_DUMP, PROCESS, SPAWN, START_PROCESSES, TORCH_SAVE
from ddplint.model.records import CallResult, FunctionSummary, Instance, Param, Place, Wrapped

_SENDS = SPAWN | START_PROCESSES | PROCESS | PICKLE_DUMP | TORCH_SAVE
# Calls that read a value in place (log it, measure it, copy its items): the object, and the
# factory a defaultdict holds, stay where they are.
_READING_CALLS = frozenset((
    "print", "len", "sorted", "list", "dict", "set", "tuple", "str", "repr", "format", "sum", "max", "min",
    "info", "debug", "warning", "error", "log", "update", "items", "keys", "values",
))
_MAX_CALLERS_DEPTH = 3  # returns followed up through callers; deeper is unknown


@dataclass(frozen=True)
class WrapperSave:
    """A save of a DDP model's state dict to the file `path` (a path key, None where unknown),
    under the dict key `entry` (None: saved as the whole object)."""

    path: str | None
    entry: str | None
    place: Place


@dataclass(frozen=True)
class Wrap:
    """A wrap of a project class's object in DDP; `tolerant` when it passes
    `find_unused_parameters` other than a literal False."""

    place: Place
    tolerant: bool


@dataclass(frozen=True)
class Fate:
    """Where a function's result goes: `sent` to another process (pickled) by `where` ("spawn at
    train.py:12"), or kept in place (`where` the call that keeps it)."""

    sent: bool
    where: str


class Values:
    """Saves and wraps across the solved program (see the module doc)."""

    def __init__(self, program) -> None:
        self.program = program
        self._saves: list[WrapperSave] | None = None
        self._wraps: dict[tuple[str, str], list[Wrap]] | None = None
        self._folders: dict[str, list[str]] | None = None  # folder -> its modules

    def _is_save(self, module: str, callee: str) -> bool:
        return (self.program.qualify(module, callee) or callee) in TORCH_SAVE or callee in TORCH_SAVE

    def wrapper_saves(self) -> list[WrapperSave]:
        """Every save of a DDP model's state dict, by file, key and place."""
        if self._saves is None:
            program, found = self.program, []
            for module, key, function in program.functions(past_solution=True):
                for save in function.saves:
                    if program.qualify(module, save.callee) not in TORCH_SAVE and save.callee not in TORCH_SAVE:
                        continue
                    for entry, source in save.held:
                        if isinstance(program.evaluate(module, key, source), Wrapped):
                            where = program.place(module, save.line)
                            handed = save.path is not None and save.path.startswith("param:")
                            paths = self._handed(module, key, function, save.path[6:], source) if handed else [save.path]
                            found += [WrapperSave(path, entry, where) for path in paths]
            self._saves = sorted(set(found), key=lambda item: (str(item.place), str(item.path), str(item.entry)))
        return self._saves

    def _handed(self, module: str, key: str, function: FunctionSummary, param: str, source) -> list[str | None]:
        """The files the calls of function `key` of `module` name for its parameter `param`
        (`save_checkpoint(model, args.ckpt)` for `def save_checkpoint(model, path)`), as path
        keys (None: one that names none, or a caller not read). Where the model whose state
        dict it saves is a parameter too, only the calls that hand it a DDP model count
        (`save_checkpoint(ema, ...)` beside it saves a plain one)."""
        program, params = self.program, function.params
        model = source.name if isinstance(source, Param) and source.name in params else None
        if function.method:
            return [None]  # `self.save(model, path)`: the positions shift by one
        found: list[str | None] = []
        for site in program.context.call_sites(module, key) or ():
            if site.caller_key is None and model is not None:
                found.append(None)  # module code: not evaluated
                continue
            record = program.function(site.caller, site.caller_key) if site.caller_key else program.module_code(site.caller)
            if record is None:
                record = FunctionSummary(0, (), False, None)
            if model is not None:
                index = params.index(model)
                passed = [call.keywords.get(model, call.args[index] if index < len(call.args) else None)
                          for call in record.calls if call.line == site.line]
                if not passed or not isinstance(program.evaluate(site.caller, site.caller_key, passed[0]), Wrapped):
                    continue
            given = [handed.given for handed in record.handed_files if handed.line == site.line]
            found.append(given[0].get(param, given[0].get(str(params.index(param)))) if given else None)
        return found or [None]

    def saves_on_any_rank(self, qualified: str, importer: str) -> Place | None:
        """Where the function of another project module that `qualified` names (as `importer`
        imports it) calls `torch.save` under no `if`, saying nothing of ranks, itself or through
        such helpers it calls (see ddplint.model.files.settle_save): every process that calls it
        writes the file. None otherwise; only modules that may save, by their text and imports
        (Project.may_save), are read."""
        program = self.program
        found = program.split(qualified, importer)
        if found is None or not found[1] or "." in found[1] or found[0] == importer:
            return None
        target = program.resolve(found[0], found[1], None) if program.project.may_save(found[0]) else None
        return self._saving(target.module, target.key, 0) if target is not None and not target.bound else None

    def _saving(self, module: str, key: str, depth: int) -> Place | None:
        program = self.program
        if depth > 3 or not program.project.may_save(module):
            return None
        record = program.function(module, key)
        for call in record.plain_saves if record is not None else ():
            if self._is_save(module, call.callee):
                return program.place(module, call.line)
            inner = program.resolve(module, call.callee, None)
            where = self._saving(inner.module, inner.key, depth + 1) if inner is not None and not inner.bound else None
            if where is not None:
                return where
        return None

    def saved_from_wrapper(self, path: str | None, key: str | None = None) -> Place | None:
        """Where the program saves a DDP model's state dict to the file `path` (a path key)
        under a dict key that agrees with `key`, or None."""
        if path is None:
            return None
        for save in self.wrapper_saves():
            if save.path == path and (save.entry is None or key is None or save.entry == key):
                return save.place
        return None

    def saved_on_host(self, module: str, path: str | None) -> Place | None:
        """Where the program saves the file `path` (a path key) with its tensors on the host,
        when every call that may write that file in the modules of `module`'s folder (the
        scripts of one program: `train.py` writes what `evaluate.py` reads), their functions
        and their own code, is a `torch.save` of host tensors; None otherwise, and when one of
        those modules is not read."""
        if path is None:
            return None
        program, found = self.program, None
        if self._folders is None:
            self._folders = {}
            for name, relative in program.project.relpaths.items():
                self._folders.setdefault(posixpath.dirname(relative.replace("\\", "/")), []).append(name)
        for saver in sorted(self._folders.get(posixpath.dirname(program.project.relpaths[module].replace("\\", "/")), ())):
            summary, code = program.summary(saver), program.module_code(saver)
            if summary is None or code is None:
                return None
            for function in (code, *summary.functions.values()):
                for write in function.files:
                    if write.path != path:
                        continue
                    if not write.host or (program.qualify(saver, write.callee) not in TORCH_SAVE and write.callee not in TORCH_SAVE):
                        return None
                    found = found or program.place(saver, write.line)
        return found

    def wraps(self) -> dict[tuple[str, str], list[Wrap]]:
        """(module, class) of the project classes whose objects are wrapped in DDP -> their wraps."""
        if self._wraps is None:
            program, found = self.program, {}
            for module, key, function in program.functions(past_solution=True):
                tolerant = set(function.tolerant)
                for call in function.calls:
                    source = call.keywords.get("module") or (call.args[0] if call.args else None)
                    if source is None or not program.makes_ddp(module, call.callee):
                        continue
                    value = program.evaluate(module, key, source)
                    if isinstance(value, Instance):
                        entry = Wrap(program.place(module, call.line), call.line in tolerant)
                        found.setdefault((value.module, value.cls), [])
                        if entry not in found[(value.module, value.cls)]:
                            found[(value.module, value.cls)].append(entry)
            self._wraps = found
        return self._wraps

    def wrapped_classes(self, module: str) -> dict[str, list[Wrap]]:
        """The classes of `module` whose objects the program wraps in DDP: name -> wraps."""
        return {cls: where for (found, cls), where in self.wraps().items() if found == module}

    def sent_at(self, module: str, callee: str) -> str | None:
        """Whether a call of `callee` in `module` pickles what it is given: spawn, Process,
        pickle.dump(s), torch.save, a queue's put (any receiver); its name for a message."""
        qualified = self.program.qualify(module, callee)
        last = callee.rpartition(".")[2]
        if qualified in _SENDS or callee in _SENDS or last == "Process" or (qualified is None and last in ("put", "put_nowait")):
            return last
        return None

    def result_fate(self, module: str, key: str, depth: int = 0) -> Fate | None:
        """What the callers of function `key` of `module` do with what it returns: sent, when
        one passes it (or returns it to a caller that passes it) to a call that pickles it;
        kept, when every call in the project is found and each only reads it in place; None
        when unknown (no caller found, or one hands it on, stores it, or returns it further
        than followed)."""
        program, kept = self.program, []
        if depth > _MAX_CALLERS_DEPTH or program.summary(module) is None:
            return None
        for caller in [module, *program.importers_of(module)]:
            summary = program.summary(caller)
            if summary is None:
                return None
            for name, function in summary.functions.items():
                for call in function.invocations:
                    found = program.resolve(caller, call.callee, function.cls)
                    if found is None or found.function != (module, key):
                        continue
                    fate = self._fate_at(caller, name, function, CallResult(call.callee, call.line), depth)
                    if fate is None or fate.sent:
                        return fate
                    kept.append(fate.where)
        project = program.project
        if set(project.texts) >= set(project.modules):
            return None  # a text linted alone: its callers elsewhere are unknown
        return Fate(False, kept[0]) if kept else None

    def _fate_at(self, module: str, key: str, function: FunctionSummary, result: CallResult, depth: int) -> Fate | None:
        """What function `key` does with `result` (a call's result as its summary writes it)."""
        program = self.program
        for send in function.sends:
            if result in send.sent:
                where = self.sent_at(module, send.callee)
                if where is not None:
                    return Fate(True, f"{where} at {program.place(module, send.line)}")
        if result in function.returns:
            return self.result_fate(module, key, depth + 1)
        if result in function.sets.values() and function.cls and self._dataset(module, function.cls):
            return Fate(True, f"the Dataset {function.cls} (stored at {program.place(module, result.line)})")
        if result in function.sets.values() or result in function.stores:
            return None
        for call in function.calls:
            if (result in call.args or result in call.keywords.values()) and call.callee.rpartition(".")[2] not in _READING_CALLS:
                made = program.resolve(module, call.callee, function.cls)
                if made is not None and made.bound and self._kept_by_dataset(made, call.args, call.keywords, result):
                    return Fate(True, f"the Dataset {made.key.rpartition('.')[0]} at {program.place(module, call.line)}")
                return None
        return Fate(False, str(program.place(module, result.line)))

    def _kept_by_dataset(self, made, args: tuple, keywords: dict, result: CallResult) -> bool:
        """The `__init__` `made` reaches is a Dataset's, and stores on `self` the parameter that
        gets `result` (`TranslationDataset(pairs, src_index)` keeping `self.src_index = src_index`)."""
        cls, _, method = made.key.rpartition(".")
        init = self.program.function(made.module, made.key)
        if method != "__init__" or init is None or not self._dataset(made.module, cls):
            return False
        params = init.params[1:]
        given = [params[i] for i, arg in enumerate(args) if arg == result and i < len(params)]
        given += [name for name, arg in keywords.items() if arg == result]
        return any(Param(name) in init.sets.values() for name in given)

    def _dataset(self, module: str, cls: str) -> bool:
        """Class `cls` of `module` is a Dataset: a base named `Dataset` or `IterableDataset`, or
        a `__getitem__`. DataLoader workers receive it."""
        summary = self.program.summary(module)
        record = summary.classes.get(cls) if summary is not None else None
        if record is None:
            return False
        bases = {base.rpartition(".")[2] for base in record.bases}
        return bool(bases & {"Dataset", "IterableDataset"}) or f"{cls}.__getitem__" in summary.functions  # type: ignore[union-attr]

    def own_record(self, module: str, cls: str, keys: set[str]) -> Place | None:
        """Where a method of class `cls` saves a dict of Python values with every key in `keys`
        (`save_checkpoint` writing `{"epoch": self.epoch, "memory": self.memory}`), when no
        method of the class saves another dict with those keys: what its own load reads back
        holds no tensors. None otherwise."""
        summary = self.program.summary(module) if keys else None
        found = None
        for function in summary.functions.values() if summary is not None else ():
            if function.cls != cls:
                continue
            for write in function.writes:
                if not keys <= set(write.keys) or self.sent_at(module, write.callee) != "save":
                    continue
                if not write.plain:
                    return None
                found = found or self.program.place(module, write.line)
        return found

    def digest(self) -> list:
        return [
            [[str(save.path), str(save.entry), str(save.place)] for save in self.wrapper_saves()],
            sorted([*key, str(wrap.place), str(wrap.tolerant)] for key, wraps in self.wraps().items() for wrap in wraps),
        ]
