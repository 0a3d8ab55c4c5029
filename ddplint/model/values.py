"""What the program's values are, beyond "a DDP model": the files it saves and what they hold,
and where the objects of a project class are wrapped in DDP.

Read over the solved program (ddplint.model.program) from what the summaries say of files
(ddplint.model.files):

- which checkpoints hold a DDP model's state dict (keys prefixed `module.`): `wrapper_saves`
  (and which its inner module's, keys without: `state_saves(Inner)`),
  also those handed to a project helper that `torch.save`s its parameter (`saved_parameter`:
  `save_checkpoint({"state_dict": model.state_dict()}, path)` of the ImageNet example);
  A model whose `state_dict()` is saved counts only when the program knows it is a DDP model (`ddp_model.state_dict()`); `model.module.state_dict()` and a
  `model_without_ddp = model.module` are the inner model, which the program never takes for one;
- where a project class's objects are wrapped in DDP (`wraps`), or built into
  an object that is (`parts`: `Net` builds `Block`s in its `__init__`);
- which calls save (`is_save`) or pickle what they are given (`sent_at`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ddplint.core.torch_api import PICKLE_DUMP, PROCESS, SPAWN, START_PROCESSES, TORCH_SAVE
from ddplint.model.records import FunctionSummary, Instance, Param, Place, Value, Wrapped

_SENDS = SPAWN | START_PROCESSES | PROCESS | PICKLE_DUMP | TORCH_SAVE


@dataclass(frozen=True)
class WrapperSave:
    """A save of a DDP model's state dict (or, from `state_saves(Inner)`, its inner module's) to
    the file `path` (a path key, None where unknown), under the dict key `entry` (None: saved as
    the whole object)."""

    path: str | None
    entry: str | None
    place: Place


@dataclass(frozen=True)
class SavedParameter:
    """A project function that `torch.save`s what its parameter `saved` holds (at `place`), to
    the file its parameter `file` names, or to the file `path` (a path key) it names itself;
    `arguments`: the parameters a call fills, in order."""

    saved: str
    file: str | None
    path: str | None
    arguments: tuple[str, ...]
    place: Place

    def position(self, name: str) -> int:
        return self.arguments.index(name)

    def given(self, given: dict, name: str):
        """What a call gives the parameter `name`, from its arguments by position (as a string)
        or keyword (`HandedStates.given`, `HandedFiles.given`); None where it gives nothing."""
        return given.get(name, given.get(str(self.position(name))))


@dataclass(frozen=True)
class Wrap:
    """A wrap of a project class's object in DDP; `tolerant` when it passes
    `find_unused_parameters` other than a literal False."""

    place: Place
    tolerant: bool


@dataclass(frozen=True)
class Step:
    """A class whose object holds an object of another: `owner` builds `held` in its `__init__`
    ("builds"), or derives from it ("derives": the base's `__init__` builds its submodules)."""

    place: Place
    owner: str
    held: str
    how: str


@dataclass(frozen=True)
class Part:
    """How an object of a project class is part of a DDP model: the wrap of an object of the
    class `top` (module, class), and the steps from it to the class (none: it is wrapped itself)."""

    wrap: Wrap
    top: tuple[str, str]
    steps: tuple[Step, ...] = ()


class Values:
    """Saves and wraps across the solved program (see the module doc)."""

    def __init__(self, program) -> None:
        self.program = program
        self._saves: dict[type[Value], list[WrapperSave]] = {}
        self._wraps: dict[tuple[str, str], list[Wrap]] | None = None
        self._parts: dict[tuple[str, str], list[Part]] | None = None

    def is_save(self, module: str, callee: str) -> bool:
        """Whether a call of `callee` in `module` is `torch.save`."""
        return (self.program.qualify(module, callee) or callee) in TORCH_SAVE or callee in TORCH_SAVE

    def wrapper_saves(self) -> list[WrapperSave]:
        """Every save of a DDP model's state dict, by file, key and place."""
        return self.state_saves(Wrapped)

    def state_saves(self, kind: type[Value]) -> list[WrapperSave]:
        """Every save of the state dict of a `kind` value (Wrapped: a DDP model, its keys prefixed
        `module.`; Inner: a DDP model's inner module, keys without), by file, key and place."""
        if kind not in self._saves:
            program, found = self.program, []
            for module, key, function in program.functions(past_solution=True):
                for save in function.escapes.saves:
                    if program.qualify(module, save.callee) not in TORCH_SAVE and save.callee not in TORCH_SAVE:
                        continue
                    for entry, source in save.held:
                        if isinstance(program.evaluate(module, key, source), kind):
                            where = program.place(module, save.line)
                            handed = save.path is not None and save.path.startswith("param:")
                            paths = self._handed(module, key, function, save.path[6:], source, kind) if handed else [save.path]
                            found += [WrapperSave(path, entry, where) for path in paths]
                for handed in function.escapes.handed_states:
                    found += self._through_helper(module, key, function, handed, kind)
            self._saves[kind] = sorted(set(found), key=lambda item: (str(item.place), str(item.path), str(item.entry)))
        return self._saves[kind]

    def _handed(self, module: str, key: str, function: FunctionSummary, param: str, source, kind: type[Value]) -> list[str | None]:
        """The files the calls of function `key` of `module` name for its parameter `param`
        (`save_checkpoint(model, args.ckpt)` for `def save_checkpoint(model, path)`), as path
        keys (None: one that names none, or a caller not read). Where the model whose state
        dict it saves is a parameter too, only the calls that hand it a `kind` value count
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
                if not passed or not isinstance(program.evaluate(site.caller, site.caller_key, passed[0]), kind):
                    continue
            given = [handed.given for handed in record.escapes.handed_files if handed.line == site.line]
            found.append(given[0].get(param, given[0].get(str(params.index(param)))) if given else None)
        return found or [None]

    def saved_parameter(self, module: str, key: str | None, cls: str | None, callee: str) -> SavedParameter | None:
        """What a call of `callee` in function `key` of `module` saves: the project function it
        reaches `torch.save`s one of its parameters (`def save_checkpoint(state, filename):
        torch.save(state, filename)`); None otherwise."""
        program = self.program
        target = program.target(module, key, cls, callee)
        function = program.function(target.module, target.key) if target is not None else None
        if function is None:
            return None
        arguments = function.arguments(target.bound)  # type: ignore[union-attr]
        for write in function.escapes.files:
            handed = write.path[len("param:"):] if write.path.startswith("param:") else None
            if not isinstance(write.saved, Param) or write.saved.name not in arguments or write.path.startswith("folder:"):
                continue
            if (handed is None or handed in arguments) and self.is_save(target.module, write.callee):  # type: ignore[union-attr]
                place = program.place(target.module, write.line)  # type: ignore[union-attr]
                return SavedParameter(write.saved.name, handed, None if handed else write.path, arguments, place)
        return None

    def _through_helper(self, module: str, key: str, function: FunctionSummary, handed, kind: type[Value]) -> list[WrapperSave]:
        """The saves of a `kind` value's state dict a call of a save helper makes (`handed`, a
        HandedStates of function `key`): what it hands the parameter the helper saves, to the file
        it hands the helper's file parameter (or the file the helper names)."""
        helper = self.saved_parameter(module, key, function.cls, handed.callee)
        held = helper.given(handed.given, helper.saved) if helper is not None else None
        if not held:
            return []
        path = helper.path
        if helper.file is not None:
            files = [given.given for given in function.escapes.handed_files if given.line == handed.line]
            path = helper.given(files[0], helper.file) if files else None
        where = self.program.place(module, handed.line)
        return [
            WrapperSave(path, entry, where) for entry, source in held
            if isinstance(self.program.evaluate(module, key, source), kind)
        ]

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

    def parts(self) -> dict[tuple[str, str], list[Part]]:
        """(module, class) of the project classes whose objects are part of a DDP model -> how:
        wrapped themselves, or built in `__init__` of a class that is (at any depth: `Net`
        builds an `Encoder`, which builds `Block`s), or a base class of one. The steps are
        read from the summaries (`__init__`'s calls, the classes' bases), shortest first."""
        if self._parts is None:
            found: dict[tuple[str, str], list[Part]] = {}
            for top, wraps in self.wraps().items():
                steps: dict[tuple[str, str], tuple[Step, ...]] = {top: ()}
                pending = [top]
                while pending:
                    current = pending.pop(0)
                    for held, step in self._holds(*current):
                        if held not in steps:
                            steps[held] = (*steps[current], step)
                            pending.append(held)
                for held, path in steps.items():
                    found.setdefault(held, []).extend(Part(wrap, top, path) for wrap in wraps)
            self._parts = found
        return self._parts

    def parts_in(self, module: str) -> dict[str, list[Part]]:
        """The classes of `module` whose objects are part of a DDP model (`parts`): name -> how."""
        return {cls: found for (where, cls), found in self.parts().items() if where == module}

    def _holds(self, module: str, cls: str) -> list[tuple[tuple[str, str], Step]]:
        """The project classes an object of `cls` holds: those its `__init__` builds, and its bases."""
        program, found = self.program, []
        init = program.function(module, f"{cls}.__init__")
        for call in init.invocations if init is not None else ():
            made = program.class_of(module, call.callee)
            if made is not None and made != (module, cls):
                found.append((made, Step(program.place(module, call.line), cls, made[1], "builds")))
        summary = program.summary(module)
        record = summary.classes.get(cls) if summary is not None else None
        for base in record.bases if record is not None else ():
            made = program.class_of(module, base)
            if made is not None:
                found.append((made, Step(program.place(module, record.line), cls, made[1], "derives")))
        return found

    def sent_at(self, module: str, callee: str) -> str | None:
        """Whether a call of `callee` in `module` pickles what it is given: spawn, Process,
        pickle.dump(s), torch.save, a queue's put (any receiver); its name for a message."""
        qualified = self.program.qualify(module, callee)
        last = callee.rpartition(".")[2]
        if qualified in _SENDS or callee in _SENDS or last == "Process" or (qualified is None and last in ("put", "put_nowait")):
            return last
        return None

    def digest(self) -> list:
        return [
            [[str(save.path), str(save.entry), str(save.place)] for save in self.wrapper_saves()],
            sorted([*key, str(wrap.place), str(wrap.tolerant)] for key, wraps in self.wraps().items() for wrap in wraps),
        ]
