"""The program model: which values are DDP models, samplers and loaders, followed across
functions and modules, and the general questions asked of them.

A DDP program is several functions: `main()` wraps the model, `train_one_epoch(model, ...)` in
`engine.py` steps it, a `Trainer` keeps it as `self.model`, a `build_model()` returns it. A rule
that sees one function cannot know that the `model` parameter it is looking at is a DDP model.
The program answers that, with the place that makes it so, and knows no rule.

It is built on the project index (ddplint.model.project), which says which modules exist, what each
imports and which ones name DDP or another distributed marker. Only the modules a value can
reach are read with CPython's `ast`: those that name DDP or build a sampler, the modules of the
functions they hand a value to, and the importers of a module whose function returns one. Each
is summarised once (ddplint.model.summary), and the summaries are solved together to a fixed
point:

- a parameter holds a value when some call passes one to it;
- `self.x` holds a value in a class when some method stores one there;
- a function returns a value when some `return` gives one.

Values (ddplint.model.records): a DDP model (`Wrapped`), the inner module of one (`Inner`), what
Accelerate prepared, a DistributedSampler or a loader drawing from one, an object of a project
class, a library loss scaler, tuples of them. A conditional expression holds the DDP model,
sampler or loader one branch makes (`DDP(m) if distributed else m`): the distributed run takes
that branch. Names are qualified by the module's imports: the index's top-level ones, and
those in top-level `if` and `try` blocks, which the summary keeps. At most MAX_MODULES modules
and MAX_SOURCE bytes of their source are read for the solution; questions asked afterwards
(`asking`) may read MAX_ASKED modules more. What lies beyond is unknown: an answer that met a
bound (`refused`) says nothing. A warm run takes the solution's digest from the cache
(ddplint.model.solution) and builds no program while no file it read has changed.

The general questions: what a source holds (`evaluate`, `values_of`), what a call reaches
(`resolve`, `target`, `callee_summary`), what it gives back (`result_of`), whether it
combines across ranks (`combines`), where a value handed on is used (`follow`, `evaluation`),
who calls a function and who runs it (`context`, ddplint.model.context) and what it saves
(`values`, ddplint.model.values).
"""

from __future__ import annotations

import ast
import builtins
import collections
import dataclasses
import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ddplint.core.torch_api import (
    ACCELERATOR, BATCH_SAMPLER, COLLECTIVES, COMBINING_COLLECTIVES, DATALOADER, DDP, DEDUPLICATING_METHODS,
    DEEPSPEED_INITIALIZE, DISTRIBUTED_SAMPLER, DTENSOR_FULL_TENSOR, FRAMEWORK_COLLECTIVES, FSDP, FSDP_NO_SHARD,
    FSDP_SHARDING_STRATEGY, GRAPH_LOADERS, LOSS_SCALER_GATE, LOSS_SCALERS, MPI_COLLECTIVES, TORCH,
)
from ddplint.core.fixpoint import DepthMemo
from ddplint.model import context as process_context
from ddplint.model import keyed
from ddplint.model import store
from ddplint.model import values as program_values
from ddplint.model.records import (
    Attr, Batches, CallResult, Called, DataCall, Each, Either, Element, FileStep, Framework, FunctionSummary, Group, Inner, InnerOf, Instance, Item, Literal,
    Loader, Loop, LossScaler, MethodCall, ModuleSummary, Pack, Param, Place, Prepared, Sampler, SamplerTest, SelfAttr, Source,
    Through, Unlike, Wrapped, decode, encode,
)
from ddplint.model.summary import module_code, summarize

MAX_MODULES = 150  # modules read per run: past this, what a value would reach is unknown
# Modules the table of evaluated samplers may read beyond MAX_MODULES: a monorepo of many
# training projects spends MAX_MODULES on its starting points' first helpers (Cream: 50 starting
# points, 106 modules at one call from them), and the table reads only the evaluation helpers
# its loaders are handed to (Cream: 20).
MAX_ASKED = 100
MAX_SOURCE = 2_000_000  # bytes of source read per run, past this as past MAX_MODULES (precision corpus: 1.94 MB at most)
_RECENT_TREES = 16  # trees `Program.tree` keeps
MAX_ROUNDS = 12  # rounds of the fixed point; a chain of helpers deeper than this is unknown
BUILTIN_NAMES = frozenset(dir(builtins))  # `enumerate(loader)`, `iter(loader)`: no project function
_LAST_LINE = 1 << 30  # `backward_in` of a whole function: its lines, and no more
MAX_HELPERS = 6  # project helpers followed to a collective (`collective`); deeper is unknown
_COMBINES, _EVERY_RANK = "combines", "every rank"  # what `_runs` looks for
_LOADERS_AND_BATCHERS = DATALOADER | GRAPH_LOADERS | BATCH_SAMPLER  # made once: `_makes_data` asks on every evaluation
_BROADCAST_BUFFERS = "broadcast_buffers"  # DDP's parameter (torch_api.DDP)
MAX_RESULTS = 4  # distinct data values one function may return (`return a if x else b`, branches)
CACHE_VERSION = 32  # of the summaries kept in the cache: a summary of another version is read again
# `osp.join(this_dir, '..', 'lib')` in an `_init_paths` module: a folder it puts on sys.path
_PATH_JOIN = re.compile(r"""join\(\s*\w+\s*((?:,\s*['"][^'"\n]*['"]\s*)+)\)""")

# A call of a LossScaler, as a function summary says what a call does (Program.callee_summary).
LOSS_SCALER_CALL = FunctionSummary(
    line=0, params=tuple(LOSS_SCALERS.params), method=False, cls=None, backward=(0,), gates=(LOSS_SCALER_GATE,)
)


@dataclass(frozen=True)
class Target:
    """The project function a call reaches: its module, its key (`name`, `Class.name`), and
    whether `self` is bound (a method called on an object, or a class's `__init__`)."""

    module: str
    key: str
    bound: bool

    @property
    def function(self) -> tuple[str, str]:
        return self.module, self.key


@dataclass(frozen=True)
class Callee:
    """What a call does: the summary of the function it reaches, and whether `self` is bound."""

    summary: FunctionSummary
    bound: bool

    @property
    def arguments(self) -> tuple[str, ...]:
        return self.summary.arguments(self.bound)


@dataclass(frozen=True)
class Hop:
    """A project function on the way to a collective: its key, the call it makes (as written),
    and where."""

    function: str
    call: str
    place: Place


@dataclass(frozen=True)
class Collective:
    """A collective that every rank must reach (`all_reduce`, an Accelerator's `save_state`),
    where it is called (None: the call asked about is the collective itself), and the project
    functions a call reaches it through, outermost first (`hops`), and the framework object it
    is a method of, if any (neither compared)."""

    name: str
    place: Place | None = None
    hops: tuple[Hop, ...] = field(default=(), compare=False)
    framework: Framework | None = field(default=None, compare=False)  # the object it is a method of

    def __str__(self) -> str:
        return f"{self.name} at {self.place}"


@dataclass(frozen=True)
class Evaluation:
    """A project function that iterates a value in a loop without backward() and combines the
    results across ranks in or after that loop."""

    function: str
    loop: Place
    combine: Collective


class Program:
    """Values across the project's functions, solved once per run (see the module doc).
    `parameters[(module, key)]`, `attributes[(module, class)]`: name -> Value;
    `results[(module, key)]`: the DDP model (or tuple holding one) the function returns;
    `returned_data[(module, key)]`: the samplers, loaders and tuples of them it returns;
    `carried[(module, key)]`: (the source of an object, attribute) -> the sampler or loader the
    function knows that object carries there (`args.train_loader`)."""

    def __init__(self, project, read=None) -> None:
        self.project = project
        # Every module whose text or summary the program used: what its solution depends on.
        self.looked: set[str] = set()
        self._reader = read or self._read_file
        # Every module a question read after the solution was found (None until then): the
        # solution's digest does not cover what such answers say, so a file's cached result
        # depends on these modules too (ddplint.engine.cache).
        self.consulted: set[str] | None = None
        self._summaries: dict[str, ModuleSummary | None] = {}
        self._module_code: dict[str, FunctionSummary | None] = {}
        # The last trees `tree` parsed, by module and text: questions about one module come in runs
        self._target_memo: dict[tuple, Target | None] = {}  # `target`
        self._definitions: dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef | None] = {}
        self._trees: collections.OrderedDict[tuple[str, int], ast.Module | None] = collections.OrderedDict()
        self._calls: dict[tuple[str, tuple[str, ...]], bool] = {}  # (module, names) -> text_calls
        self._order: list[str] = []
        self._importers: dict[str, list[str]] = {}
        self._stars: dict[tuple[str, str], str | None] = {}  # (module, name) -> where a star import binds it
        self._star_importers_of: dict[str, list[str]] | None = None
        self._import_parts: dict[str, list[tuple[str, str]]] | None = None
        self._splits: dict[tuple, tuple[str, str] | None] = {}
        self._source = 0  # bytes of the modules read so far (MAX_SOURCE)
        self.refused = 0  # reads refused by the bounds: an answer that met one is unknown
        self.asking = False  # while a question that may read past MAX_MODULES is answered
        # While set, no new module is read: objects of project classes are followed only
        # into modules a DDP model or sampler already led to (it bounds the reading).
        self.reading_closed = False
        self._folders: dict[str, str] = {}
        self._receivers: set[str] | None = None
        self._function_names: dict[str, set[str]] = {}
        self.memos = _Memos()
        self.parameters: dict[tuple[str, str], dict] = {}
        self.attributes: dict[tuple[str, str], dict] = {}
        self.results: dict[tuple[str, str], object] = {}
        self.returned_data: dict[tuple[str, str], list] = {}
        self.carried: dict[tuple[str, str], dict] = {}
        self._carriers: set[str] = set()
        self._data_receivers: set[str] | None = None
        self._cached, self._fresh = self._load_cache(), {}
        for name in self.modules():
            facts = project.modules[name]
            if facts.get("ddp") or project.builds_samplers(name):  # where DDP models and samplers start
                self.summary(name)
        self._solve()
        self.solved = len(self._order)  # the modules the solution read (later questions read on)
        self.consulted = set()
        self._save_cache()

    # -- the summaries' cache, beside the index's: a warm run reads no module's ast ------

    def _cache_file(self) -> str | None:
        path = self.project.cache_path
        return path[: -len(".json")] + "-program.json" if path and path.endswith(".json") else None

    def _load_cache(self) -> dict:
        loaded = store.load(self._cache_file())
        return loaded.get("summaries", {}) if loaded.get("version") == CACHE_VERSION else {}

    def _save_cache(self) -> None:
        path = self._cache_file()
        if path is not None and self._fresh:
            store.save(os.path.dirname(path), path, {"version": CACHE_VERSION, "summaries": {**self._cached, **self._fresh}})

    # -- reading -------------------------------------------------------------------------

    def _stamp(self, module: str) -> list | None:
        """The file's size and mtime, which a cached summary must match; None for a text."""
        if self.is_text(module) or self.project.cache_path is None:
            return None
        try:
            info = os.stat(os.path.join(self.project.root, self.project.relpaths[module]))
        except OSError:
            return None
        return [info.st_size, info.st_mtime_ns]

    def _size(self, module: str) -> int:
        """The module's size in bytes, as its stamp has it (for MAX_SOURCE)."""
        if self.is_text(module):
            return len(self.project.texts[module].encode("utf-8", "replace"))
        try:
            return os.stat(os.path.join(self.project.root, self.project.relpaths[module])).st_size
        except OSError:
            return 0

    def _read_file(self, module: str) -> str | None:
        if self.is_text(module):
            return self.project.texts[module]
        try:
            with open(os.path.join(self.project.root, self.project.relpaths[module]), "rb") as handle:
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return None

    def read(self, module: str) -> str | None:
        """The text of `module`, for a question the summaries do not answer; None when unreadable."""
        self.mark_read(module)
        return self._reader(module)

    def mark_read(self, module: str) -> None:
        """`module`'s text is read for an answer: the solution, or a later answer, depends on it."""
        self.looked.add(module)
        if self.consulted is not None:
            self.consulted.add(module)

    def text_calls(self, module: str, names: tuple[str, ...]) -> bool:
        """Whether the text of `module` holds a call of one of `names` (`name(`): kept, since the
        texts a program reads do not change while it lives (the language server asks on every
        lint of an open file, for each assignment from a project function's call)."""
        key = (module, names)
        if key in self._calls:
            self.mark_read(module)  # as `read` would
            return self._calls[key]
        text = self.read(module)
        found = self._calls[key] = text is not None and any(f"{name}(" in text for name in names)
        return found

    def definition(self, module: str, key: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The `ast` definition of the top-level function or method `key` (`name`, `Class.name`)
        of `module`, or None. Kept for the program's life (the texts it reads do not change
        while it lives), as `text_calls` is: DDP014 asks on every keystroke."""
        memo = (module, key)
        if memo in self._definitions:
            self.mark_read(module)  # as `read` would
            return self._definitions[memo]
        found = self._definitions[memo] = self._definition(module, key)
        return found

    def _definition(self, module: str, key: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        tree = self.tree(module)
        owner, _, name = key.rpartition(".")
        body = tree.body if tree is not None else []
        if owner:
            cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == owner), None)
            body = cls.body if cls is not None and "." not in owner else []
        found = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
        # a top-level `def` written twice: the name holds the last once the module is imported
        return (found[-1] if not owner else found[0]) if found else None

    def tree(self, module: str, text: str | None = None) -> ast.Module | None:
        """CPython's `ast` of `module` (of `text`, where the caller has already read it), for a
        question the summaries do not answer; None when it cannot be read or does not parse. The
        last few trees are kept (callers only read them)."""
        text = self.read(module) if text is None else text
        if text is None:
            return None
        key = (module, hash(text))
        if key in self._trees:
            self._trees.move_to_end(key)
            return self._trees[key]
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        self._keep(key, tree)
        return tree

    def keep_tree(self, module: str, text: str, tree: ast.Module) -> None:
        """Keep `tree`, `ast.parse(text)` done elsewhere (the screens parse the file being
        linted), for `tree`'s questions about `module` while its text is `text`: the pip
        packages' linted files were parsed again for 430 questions about their own code."""
        key = (module, hash(text))
        if key not in self._trees:
            self._keep(key, tree)

    def _keep(self, key: tuple[str, int], tree: ast.Module | None) -> None:
        self._trees[key] = tree
        if len(self._trees) > _RECENT_TREES:
            self._trees.popitem(last=False)

    def module_code(self, module: str) -> FunctionSummary | None:
        """The summary of `module`'s own code (what runs when it is run or imported), read as a
        function's body is; on demand and not cached, for the few questions that need it. None
        when it does not parse."""
        if module not in self._module_code:
            tree = self.tree(module)
            self._module_code[module] = module_code(tree) if tree is not None else None
        return self._module_code[module]

    def summary(self, module: str, own: bool = False) -> ModuleSummary | None:
        """The summary of `module`, read (or taken from the cache) on first use; None when it
        cannot be read or parsed, or the bounds refuse it (then `refused` counts it). `own`:
        `module` is the one being linted, whose text is read anyway: a rule's question about
        its own code is not refused by the bounds (Megatron's distrib_optimizer.py, past
        MAX_MODULES in a repository of hundreds)."""
        if module in self._summaries:
            if self.consulted is not None and self._summaries[module] is not None:
                self.consulted.add(module)
            return self._summaries[module]
        if self.reading_closed and not own:
            return None
        limit = MAX_MODULES + (MAX_ASKED if self.asking else 0)
        if not own and (len(self._summaries) >= limit or self._source >= MAX_SOURCE):
            self.refused += 1
            return None
        found, stamp = self._summarize(module)
        self._summaries[module] = found
        self._order.append(module)
        if self.consulted is not None and found is not None:
            self.consulted.add(module)
        return found

    def _summarize(self, module: str) -> tuple[ModuleSummary | None, list | None]:
        stamp = self._stamp(module)
        self.looked.add(module)
        self._source += stamp[0] if stamp is not None else self._size(module)
        entry = self._cached.get(self.project.relpaths[module]) if stamp is not None else None
        if entry is not None and entry.get("stamp") == stamp:
            return decode(entry["summary"]), stamp
        found = None
        text = self.read(module)
        if text is not None:
            try:
                found = summarize(ast.parse(text), text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                found = None  # a module that does not parse hides what it does: unknown
        if stamp is not None:
            self._fresh[self.project.relpaths[module]] = {"stamp": stamp, "summary": encode(found)}
        return found, stamp

    def known(self, module: str, key: str | None = None):
        """The summary of `module` (of its function `key`, if given) where it has been read;
        None otherwise. Unlike `summary`, it reads nothing and records no consultation."""
        summary = self._summaries.get(module)
        return summary if key is None or summary is None else summary.functions.get(key)

    def solved_module(self, module: str) -> bool:
        """Whether the solution read `module` and could parse it (only such a module can hold a
        DDP model; one that does not parse has no summary)."""
        return self._summaries.get(module) is not None and module in self._order[: self.solved]

    def function(self, module: str, key: str | None) -> FunctionSummary | None:
        """The summary of function `key` of `module` (read on demand), or None."""
        summary = self.summary(module) if key else None
        return summary.functions.get(key) if summary is not None else None

    def functions(self, past_solution: bool = False):
        """(module, key, summary) of every function of the modules the solution read, in its
        order (`past_solution`: and of those questions read since)."""
        for module in list(self._order if past_solution else self._order[: self.solved]):
            summary = self._summaries[module]
            for key, function in summary.functions.items() if summary is not None else ():
                yield module, key, function

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
        found = self._importers.get(module)
        if found is None:
            found = self._importers[module] = [
                name
                for name, origin in self._imports_by_part().get(module.rpartition(".")[2], ())
                if (place := self.split(origin, name)) is not None and place[0] == module != name
            ] + self._star_importers().get(module, [])
        return found

    def _star_importers(self) -> dict[str, list[str]]:
        """Project module -> the project modules that import everything from it (`from
        utils.utils import *`)."""
        if self._star_importers_of is None:
            self._star_importers_of = {}
            for name, facts in self.project.modules.items():
                for star in facts.get("stars", ()):
                    target = self.star_module(name, star)
                    if target is not None and target != name:
                        self._star_importers_of.setdefault(target, []).append(name)
        return self._star_importers_of

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

    # -- names ---------------------------------------------------------------------------

    def qualify(self, module: str, dotted: str) -> str | None:
        """The absolute name `dotted`, as written in `module`, stands for through its imports."""
        head, _, rest = dotted.partition(".")
        origin = self.project.modules[module]["imports"].get(head)
        if origin is None:  # an import in a top-level `if` or `try` block, where the summary has one
            summary = self._summaries.get(module)
            origin = ((summary.imports if summary is not None else {}).get(head) or (None,))[-1]
        if origin is None:
            origin = self._star_origin(module, head)
        if origin is None:
            return None
        absolute = self.project.module_view(module).absolute(origin)
        return f"{absolute}.{rest}" if rest else absolute

    def _star_origin(self, module: str, name: str) -> str | None:
        """`name` bound in `module` by a star import of a project module that defines it at its
        top level (`from utils.utils import *`): "utils.utils.name"; also through a chain of
        them (`from utils import *`, where utils/__init__.py runs `from utils.experiment import
        *`): a star import binds every public name of the module's namespace, those that
        module's own star imports bound included. None otherwise."""
        key = (module, name)
        if key not in self._stars:
            self._stars[key] = None  # a cycle of star imports binds nothing more
            for star in self.project.modules[module].get("stars", ()):
                target = self.star_module(module, star)
                summary = self.summary(target) if target is not None and target != module else None
                if summary is not None and (name in summary.functions or name in summary.classes):
                    self._stars[key] = f"{target}.{name}"
                    break
                chained = self._star_origin(target, name) if summary is not None and not name.startswith("_") else None
                if chained is not None:
                    self._stars[key] = chained
                    break
        return self._stars[key]

    def star_module(self, module: str, star: str) -> str | None:
        """The project module that `from <star> import *` in `module` imports, found as any
        import is (`split`): also one in a folder without an `__init__.py` (a namespace
        package), which the index names by its file alone (`from core.data.dataloaders import
        *` -> `dataloaders`); None for a library's."""
        found = self.split(self.project.module_view(module).absolute(star), module)
        return found[0] if found is not None and not found[1] else None

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
            for parts in _PATH_JOIN.findall(self.read(module) or ""):
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
            found = self._module_at(head, folder, folders)
            if found is not None:
                return found, rest
            head, _, last = head.rpartition(".")
            rest = f"{last}.{rest}" if rest else last
        return None

    def _module_at(self, head: str, folder: str, folders: tuple[str, ...]) -> str | None:
        """The project module the dotted `head` names from a module of `folder`, or None."""
        if self.project.module(head) is not None:
            return head
        for candidate in self.project.shared.get(head, ()):  # the one beside the importer
            if os.path.dirname(self.project.relpaths[candidate]) == folder:
                return candidate
        # `import evaluation.engine` from the root, where `evaluation` has no __init__.py
        # (a namespace package): the index names that module by its package alone.
        path = head.replace(".", "/")
        by_path = self.project.names.get(f"{path}.py") or self.project.names.get(f"{path}/__init__.py")
        for base in [f for f in folders if f] if by_path is None else ():  # `from lib import utils` beside lib/
            by_path = self.project.names.get(f"{base}/{path}.py") or self.project.names.get(f"{base}/{path}/__init__.py")
            if by_path is not None:
                break
        return by_path if by_path is not None and self.project.module(by_path) is not None else None

    def resolve(self, module: str, dotted: str, cls: str | None, depth: int = 0) -> Target | None:
        """The project function a call of `dotted` in `module` (inside class `cls`) reaches; a
        class reaches its `__init__`."""
        summary = self.summary(module)
        if summary is None or depth > 8:
            return None
        functions, classes = summary.functions, summary.classes
        if dotted.startswith("super()."):  # the first project base of `cls` that defines the method
            return self._inherited(module, cls, dotted[len("super()."):]) if cls is not None else None
        if "()." in dotted:  # `utils.MetricLogger().sync`: a method of the object a call made
            maker, _, method = dotted.partition("().")
            made = self.class_of(module, maker) if "." not in method else None
            return self._method(made[0], made[1], method) if made is not None else None
        parts = dotted.split(".")
        if len(parts) == 2 and cls is not None and parts[0] in ("self", "cls"):
            return self._method(module, cls, parts[1])
        if len(parts) == 1 and parts[0] in functions and not functions[parts[0]].method:
            return Target(module, parts[0], False)
        if len(parts) == 1 and parts[0] in classes:
            key = f"{parts[0]}.__init__"
            return Target(module, key, True) if key in functions else None
        qualified = self.qualify(module, dotted)
        found = self.split(qualified, module) if qualified else None
        if found is None or not found[1] or "." in found[1]:
            return None
        target, symbol = found
        return self.resolve(target, symbol, None, depth + 1) if target != module else None

    def _method(self, module: str, cls: str, method: str, depth: int = 0) -> Target | None:
        """The method a call on an object of class `cls` of `module` reaches: the class's own,
        else the first project base class's that defines it (`self.model_to_device(net)` from
        BaseModel). Where that one is abstract (it only stands for the overrides), the one
        project subclass method that overrides it: what `self.sample_timesteps(n)` in the base's
        `training_step` runs (with several overrides, which runs depends on the object: the
        abstract one stands for unknown)."""
        summary = self.summary(module)
        if summary is None or depth > 8:
            return None
        key = f"{cls}.{method}"
        if key in summary.functions:
            found = Target(module, key, True)
            return (self._override(module, cls, method) or found) if summary.functions[key].abstract else found
        return self._inherited(module, cls, method, depth)

    def _override(self, module: str, cls: str, method: str) -> Target | None:
        """The one method of the project subclasses of class `cls` of `module` (at any depth)
        that overrides its `method` and is not abstract itself; None where there is none or several."""
        memo = ("override", module, cls, method)
        if memo not in self.memos.read:
            found: set[Target] = set()
            for sub_module, sub in self._subclasses(module, cls):
                summary = self.summary(sub_module)
                record = summary.functions.get(f"{sub}.{method}") if summary is not None else None
                if record is not None and not record.abstract:
                    found.add(Target(sub_module, f"{sub}.{method}", True))
            self.memos.read[memo] = found.pop() if len(found) == 1 else None
        return self.memos.read[memo]

    def _subclasses(self, module: str, cls: str, depth: int = 0) -> list[tuple[str, str]]:
        """(module, class) of each project class derived from class `cls` of `module`, at any
        depth: the classes whose base is written with its name (`Diffusion`,
        `diffusion.Diffusion`) and names that class."""
        if depth > 8:
            return []
        found = []
        for other, name, base in self._classes_based_on(module, cls):
            if self.class_of(other, base) == (module, cls):
                found += [(other, name), *self._subclasses(other, name, depth + 1)]
        return found

    def _classes_based_on(self, module: str, name: str) -> list[tuple[str, str, str]]:
        """(module, class, base as written) of the classes with a base whose last name is `name`
        in `module` and the modules that import from it (or from a package re-exporting it),
        read only where the text has such a class statement."""
        memo = ("classes based on", module, name)
        if memo not in self.memos.read:
            header = re.compile(rf"^[ \t]*class[ \t]+\w+[ \t]*\([^)]*\b{re.escape(name)}\b", re.MULTILINE)
            importers = self.importers_of(module)
            packages = [other for other in importers if self.project.relpaths[other].endswith("__init__.py")]
            users = [user for package in packages for user in self.importers_of(package)]
            found = []
            for other in dict.fromkeys([module, *importers, *users]):
                text = self.read(other)
                summary = self.summary(other) if text is not None and header.search(text) else None
                for cls, record in summary.classes.items() if summary is not None else ():
                    found += [(other, cls, base) for base in record.bases if base.rpartition(".")[2] == name]
            self.memos.read[memo] = found
        return self.memos.read[memo]

    def _inherited(self, module: str, cls: str, method: str, depth: int = 0) -> Target | None:
        """The method of the first project base class of `cls` that defines it (`super().method`)."""
        summary = self.summary(module)
        record = summary.classes.get(cls) if summary is not None else None
        for base in record.bases if record is not None else ():
            made = self.class_of(module, base)
            found = self._method(made[0], made[1], method, depth + 1) if made is not None else None
            if found is not None:
                return found
        return None

    def makes_ddp(self, module: str, dotted: str) -> bool:
        """Whether calling `dotted` in `module` builds a DDP model: DDP itself, or a project
        class derived from it."""
        return self.derives_from(module, dotted, DDP)

    def derives_from(self, module: str, dotted: str, api, depth: int = 0) -> bool:
        """Whether `dotted` in `module` names a class of `api` (a LightningModule, DDP) or a
        project class derived from one, through project bases in any module."""
        qualified = self.qualify(module, dotted)
        if qualified in api:
            return True
        summary = self.summary(module)
        if summary is None or depth > 8:
            return False
        if "." not in dotted and dotted in summary.classes:
            return any(self.derives_from(module, base, api, depth + 1) for base in summary.classes[dotted].bases)
        found = self.split(qualified, module) if qualified else None
        if found is None or not found[1] or "." in found[1] or found[0] == module:
            return False
        return self.derives_from(found[0], found[1], api, depth + 1)

    def made_by(self, importer: str, qualified: str, api) -> Place | None:
        """Where the project function that the absolute name `qualified` (as `importer` imports
        it) names makes what it returns with a call of `api`: each of its returns gives the
        result of such a call, bound once or returned as is (`accelerator = Accelerator(...)`
        ... `return accelerator`); the place of that call, or None."""
        found = self.split(qualified, importer)
        if found is None or not found[1] or "." in found[1] or found[0] == importer:
            return None
        module, name = found
        if not self.text_calls(module, api.last_names):
            return None  # read only a module that can make one
        summary = self.summary(module)
        record = summary.functions.get(name) if summary is not None else None
        if record is None or record.method or record.other_returns or not record.returns:
            return None
        made = None
        for source in record.returns:
            if not isinstance(source, CallResult) or self.qualify(module, source.callee) not in api:
                return None
            made = made or self.place(module, source.line)
        return made

    def class_of(self, module: str, dotted: str, depth: int = 0) -> tuple[str, str] | None:
        """(module, class) of the project class that `dotted` names in `module`, or None."""
        summary = self.summary(module)
        if summary is None or depth > 8:
            return None
        if "." not in dotted and dotted in summary.classes:
            return module, dotted
        qualified = self.qualify(module, dotted)
        found = self.split(qualified, module) if qualified else None
        if found is None or not found[1] or "." in found[1] or found[0] == module:
            return None
        return self.class_of(found[0], found[1], depth + 1)

    def module_classes(self, module: str) -> list[tuple[str, str]] | None:
        """(module, class) of every name project module `module` binds at its top level, when each
        is a project class it defines or imports (a package's `__init__`: `from .nyu import
        NYUDataset`), so that `getattr(module, name)` with a name known only at run time is one
        of them; None when it binds anything else (a function, an assignment), or is unknown."""
        tree = self.tree(module)
        if tree is None:
            return None
        found: list[tuple[str, str]] = []
        for statement in tree.body:
            if isinstance(statement, ast.ClassDef):
                found.append((module, statement.name))
            elif isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    made = self.class_of(module, alias.asname or alias.name)
                    if made is None:
                        return None
                    found.append(made)
            elif isinstance(statement, ast.Assign) and all(
                isinstance(target, ast.Name) and target.id.startswith("__") for target in statement.targets
            ):
                continue  # `__all__ = [...]`
            elif not isinstance(statement, ast.Import) and not (
                isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            ):  # `import os` and the docstring bind no class a name could pick
                return None
        return found

    def place(self, module: str, line: int) -> Place:
        return Place(self.project.relpaths[module], line)

    def modules(self) -> list[str]:
        """Every module of the project, by the name the index gives it, in the index's order."""
        return list(self.project.modules)

    def path(self, module: str) -> str:
        """The file of `module`, relative to the project root."""
        return self.project.relpaths[module]

    def module_at(self, place: Place) -> str | None:
        """The module whose file holds `place` (where a value was made), or None."""
        return self.project.names.get(place.path)

    def is_text(self, module: str) -> bool:
        """Whether `module` is a text linted without its file (standard input, an editor's
        buffer, an example): a program of such texts alone knows nothing of the modules beside
        them, so what other modules do with its functions is unknown."""
        return module in self.project.texts

    def may_save(self, module: str) -> bool:
        """Whether a function of `module` may call torch.save, itself or through the project
        modules it imports (ddplint.model.project.Project.may_save: by text, without reading)."""
        return self.project.may_save(module)

    # -- what a source holds ---------------------------------------------------------------

    def evaluate(self, module: str, key: str, source: Source | None):
        """What a summary's `source` holds in function `key`: a Value (ddplint.model.records),
        or None (unknown, or anything else)."""
        if source is None:
            return None
        function = self._record(module, key)
        if function is None:
            return None
        if isinstance(source, Group):
            items = tuple(self.evaluate(module, key, item) for item in source.items)
            return Pack(items, keys=source.keys) if any(items) else None
        if isinstance(source, Each):
            item = self.evaluate(module, key, source.item)
            return Pack((item,), each=True) if item is not None else None
        if isinstance(source, Element):
            listed = self.evaluate(module, key, source.listed)
            return listed.items[0] if isinstance(listed, Pack) and listed.each else None
        if isinstance(source, Item):
            return self._item(module, key, source)
        if isinstance(source, Either):
            return _either([self.evaluate(module, key, branch) for branch in source.branches])
        if isinstance(source, InnerOf):
            wrapper = self.evaluate(module, key, source.wrapper)
            return Inner(wrapper.wrapped_at) if isinstance(wrapper, Wrapped) else None
        if isinstance(source, Param):
            return self.parameters.get((module, key), {}).get(source.name)
        if isinstance(source, SelfAttr):
            return self.attributes.get((module, function.cls), {}).get(source.name) if function.cls else None
        if isinstance(source, CallResult):
            return self._call_value(module, key, function, source)
        if isinstance(source, Attr):
            return self._attribute(module, key, source)
        if isinstance(source, Unlike):
            # no instance of torch's DistributedDataParallel, from which every DDP wrapper derives, is a DDP model
            value = self.evaluate(module, key, source.held)
            unlike = (self.qualify(module, name) for name in source.classes)
            return None if isinstance(value, Wrapped) and any(name in DDP and name in TORCH for name in unlike) else value
        if isinstance(source, Through):
            passes = all(self._yields_argument(module, key, function.cls, callee, index) for callee, index in source.calls)
            return self.evaluate(module, key, source.held) if passes else None
        return None

    def _yields_argument(self, module: str, key: str, cls: str | None, callee: str, index: int) -> bool:
        """Whether iterating what calling `callee` returns iterates its argument at `index`: a
        callable of no project function (`enumerate`, `tqdm`: a library's wrapper), or a project
        function that hands it back or is a generator looping over it (`log_every(loader)`). A
        callable the model cannot place (`backend.reshard`, a method of an unknown object) is
        unknown: False."""
        target = self.target(module, key, cls, callee)
        if target is None:
            qualified = callee if callee in BUILTIN_NAMES else self.qualify(module, callee)
            return qualified is not None and self.split(qualified, module) is None
        record = self._summaries[target.module].functions[target.key]  # type: ignore[union-attr]
        params = record.arguments(target.bound)
        name = params[index] if index < len(params) else None
        if name is None:
            return False
        if record.returns and all(source == Param(name) for source in record.returns):
            return True
        return not record.returns and any(name in loop.iterated for loop in record.loops)

    def _attribute(self, module: str, key: str, source: Attr):
        """What `held.name` holds, followed for samplers and loaders only: the attribute of the
        project object `held` holds, or what the program knows the function's object carries
        there (`carried`)."""
        held = self.evaluate(module, key, source.held)
        if isinstance(held, Instance):
            value = self.attributes.get((held.module, held.cls), {}).get(source.name)
        else:
            value = self.carried.get((module, key), {}).get((source.held, source.name))
        return value if _holds_data(value) else None

    def _record(self, module: str, key: str) -> FunctionSummary | None:
        """The summary of function `key` of a module the program read; "" for the module's own code."""
        if not key:
            return self.module_code(module)
        summary = self._summaries.get(module)
        return summary.functions.get(key) if summary is not None else None

    def _item(self, module: str, key: str, source: Item):
        for value in self._alternatives(module, key, source.held):
            if isinstance(value, Prepared):
                return value
            if isinstance(value, Pack) and value.at(source.index) is not None and _unpacks(value, source.size):
                return value.at(source.index)
        return None

    def _call_value(self, module: str, key: str, function: FunctionSummary, source: CallResult):
        callee, line = source.callee, source.line
        if source.data is not None:
            made = self._makes_data(module, key, source)
            if made is not None:
                return made
        if self.makes_ddp(module, callee):
            return self._wrap(module, key, function, source)
        made = self._framework_made(module, key, function, source)
        if made is not None:
            return made
        if self.qualify(module, callee) in LOSS_SCALERS:
            return LossScaler(self.place(module, line))
        made = self.class_of(module, callee)
        if made is not None:
            sampler = self._epoch_seeded(module, key, function, source, made)
            return sampler if sampler is not None else Instance(made[0], made[1], self.place(module, line))
        target = self.resolve(module, callee, function.cls)
        if target is not None and self.unwrapped_parameter(target) is not None:
            # `unwrap_model(model)`: the inner module of the DDP model this call passes, if it passes one
            wrapper = self.evaluate(module, key, self._passed(function, source, target))
            return Inner(wrapper.wrapped_at) if isinstance(wrapper, Wrapped) else None
        value = self.results.get(target.function) if target is not None else None
        if value is None and target is not None and self.returned_data.get(target.function):
            value = self.returned_data[target.function][0]
        if value is not None and target is not None and _holds_data(value) and self._hands_no_sampler(module, key, function, source, target):
            return None
        return value.made() if value is not None else None

    def hands_no_sampler_at(self, module: str, line: int, target: Target) -> bool:
        """Whether the call of `target` at `line` of `module` hands it no sampler where the
        loaders it returns draw only from those it is handed (`_hands_no_sampler`); a call the
        summary keeps no arguments of hands it nothing it follows."""
        summary = self._summaries.get(module)
        records = [*(summary.functions.items() if summary is not None else ()), ("", self.module_code(module))]
        for key, function in records:
            if function is None:
                continue
            for call in function.calls:
                if call.line == line and self.resolve(module, call.callee, function.cls) == target:
                    return self._hands_no_sampler(module, key, function, CallResult(call.callee, line), target)
            for called in function.invocations:
                if called.line == line and self.resolve(module, called.callee, function.cls) == target:
                    return bool(self._handed_samplers(target))
        return False

    def _handed_samplers(self, target: Target) -> set[str]:
        """The parameters of `target` the samplers of the loaders it returns come from, where
        every one of them draws from one it is handed; empty otherwise (a sampler made inside,
        a loader drawing from one)."""
        record = self._summaries[target.module].functions[target.key]  # type: ignore[union-attr]
        made = _data_calls(record.returns)
        names = [_params_in((data.sampler, data.batch_sampler)) for data in made]
        return set().union(*names) if made and all(names) and not record.other_returns else set()

    def _hands_no_sampler(self, module: str, key: str, function: FunctionSummary, source: CallResult, target: Target) -> bool:
        """Whether the loaders `target` returns draw only from samplers its parameters are
        handed, and this call hands none (`create_loader(datasets, [None], ...)`, where another
        call hands it DistributedSamplers): a parameter's value is what any call passes it, the
        loader this call gets is made of what this one passes."""
        names = self._handed_samplers(target)
        for name in names:
            if _holds_data(self.evaluate(module, key, self.passed_for(function, source.callee, source.line, target, name))):
                return False
        return bool(names)

    def _wrap(self, module: str, key: str, function: FunctionSummary, source: CallResult) -> Wrapped:
        """The DDP model a call of DDP makes: what it wraps (an object of a project class), and
        whether it broadcasts buffers."""
        wraps, broadcasts = None, True
        for call in function.calls:
            if call.callee == source.callee and call.line == source.line:
                given = call.args[0] if call.args else call.keywords.get(DDP.params[0])
                held = self.evaluate(module, key, given)
                wraps = (held.module, held.cls) if isinstance(held, Instance) else None
        for call in function.literals:
            if call.callee == source.callee and call.line == source.line:
                off = {(_BROADCAST_BUFFERS, False), (DDP.position(_BROADCAST_BUFFERS), False)}
                broadcasts = off.isdisjoint(call.literals)
        return Wrapped(self.place(module, source.line), wraps=wraps, broadcasts=broadcasts)

    def _framework_made(self, module: str, key: str, function: FunctionSummary, source: CallResult):
        """What a call makes of a framework that communicates across ranks: an Accelerator, a
        DeepSpeed engine (in the tuple `deepspeed.initialize` returns), an FSDP model; or what an
        Accelerator's `prepare` returns (`Accelerator().prepare`, `accelerator.prepare` on one a
        parameter or attribute holds, `make_accelerator().prepare`). None for any other call."""
        callee, at = source.callee, self.place(module, source.line)
        qualified = self.qualify(module, callee)
        if qualified in ACCELERATOR:
            return Framework("accelerate", at, bool(source.plugins))
        if qualified in FSDP:
            return Framework("fsdp", at, self._fsdp_shards(module, key, source))
        if qualified in DEEPSPEED_INITIALIZE:
            return Pack((Framework("deepspeed", at), None, None, None))
        if not callee.endswith(".prepare"):
            return None
        maker = callee[: -len(".prepare")]
        if maker.endswith("()"):
            if self.qualify(module, maker[:-2]) in ACCELERATOR:
                return Prepared(at, sharded=bool(source.plugins))
            accelerator = self._result(module, maker[:-2], function.cls)
        else:
            accelerator, rest = self._held_by(module, key, function.cls, callee)
            accelerator = accelerator if rest == "prepare" else None
        if isinstance(accelerator, Framework) and accelerator.kind == "accelerate":
            return Prepared(at, sharded=accelerator.sharded)
        return None

    def _fsdp_shards(self, module: str, key: str, source: CallResult) -> bool:
        """Whether the FSDP1 wrap `source` splits the parameters and gradients across the ranks:
        its `sharding_strategy` left out (FULL_SHARD) or a ShardingStrategy member other than
        NO_SHARD. False where the code decides it at run time (a variable, a lookup by name as
        `ShardingStrategy[cfg.strategy]`, `*args` or `**kwargs`): not established."""
        tree = self.definition(module, key) if key else self.tree(module)
        name = source.callee.rpartition(".")[2]
        for node in ast.walk(tree) if tree is not None else ():
            func = node.func if isinstance(node, ast.Call) and node.lineno == source.line else None
            if getattr(func, "attr", getattr(func, "id", None)) != name:
                continue
            given = [k.value for k in node.keywords if k.arg == FSDP_SHARDING_STRATEGY]  # type: ignore[union-attr]
            position = FSDP.position(FSDP_SHARDING_STRATEGY)
            given += node.args[position:position + 1] if position is not None else []  # type: ignore[union-attr]
            if not given:
                return not any(isinstance(arg, ast.Starred) for arg in node.args) and all(  # type: ignore[union-attr]
                    k.arg is not None for k in node.keywords  # type: ignore[union-attr]
                )
            value = given[0]
            return isinstance(value, ast.Attribute) and value.attr.lstrip("_").isupper() and value.attr != FSDP_NO_SHARD
        return False

    def unwrapped_parameter(self, target: Target) -> str | None:
        """The parameter of the project function `target` whose inner module it returns: each
        return gives `p.module`, `p.module if ... else p`, `getattr(p, "module", p)` or `p`
        itself (`return m.module if hasattr(m, "module") else m`), one at least the inner
        module; None otherwise."""
        record = self._summaries[target.module].functions[target.key]  # type: ignore[union-attr]
        returns = record.returns
        if record.other_returns or not any(isinstance(source, InnerOf) for source in returns):
            return None
        names = set()
        for source in returns:
            held = source.wrapper if isinstance(source, InnerOf) else source
            if not isinstance(held, Param):
                return None
            names.add(held.name)
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
        params = self._summaries[target.module].functions[target.key].arguments(target.bound)  # type: ignore[union-attr]
        return (params.index(name) if name in params else None), name

    def function_names(self, kind: str, holds) -> set[str]:
        """The names of the functions for which `holds(module, summary)` holds, among those the
        solution read (it read every function a DDP model reaches), kept by `kind`."""
        if kind not in self._function_names:
            self._function_names[kind] = {key.rpartition(".")[2] for module, key, record in self.functions() if holds(module, record)}
        return self._function_names[kind]

    def calls_any(self, module: str, names: set[str], reaches) -> bool:
        """Whether a function of `module` calls one named in `names` for which `reaches(module,
        key, cls, callee)` holds: only a module the solution read can hold a DDP model."""
        if not names or not self.solved_module(module):
            return False
        return any(
            reaches(module, key, function.cls, call.callee)
            for key, function in self._summaries[module].functions.items()  # type: ignore[union-attr]
            for call in function.invocations if self._named(module, call.callee, names)
        )

    def _named(self, module: str, callee: str, names: set[str]) -> bool:
        """Whether `callee` may call a function named in `names`: by its last name, or as an
        import of `module` under another name (`from utils import unwrap_model as unwrap`)."""
        imported = self.project.modules.get(module, {}).get("imports", {}).get(callee) if names else None
        return callee.rpartition(".")[2] in names or imported is not None and imported.rpartition(".")[2] in names

    def _unwrapper_names(self) -> set[str]:
        return self.function_names("unwraps", lambda module, record: any(isinstance(s, InnerOf) for s in record.returns))

    def calls_unwrapper(self, module: str) -> bool:
        """Whether a function of `module` calls a project function that returns the inner module
        of what it is handed (`unwrapped_argument`)."""
        return self.calls_any(module, self._unwrapper_names(), lambda *call: self.unwrapped_argument(*call) is not None)

    def _passed(self, function: FunctionSummary, source: CallResult, target: Target) -> Source | None:
        """The source of what the call `source` of `function` passes for the parameter of
        `target` that it unwraps."""
        return self.passed_for(function, source.callee, source.line, target, self.unwrapped_parameter(target))

    def passed_for(self, function: FunctionSummary, callee: str, line: int, target: Target, name: str | None) -> Source | None:
        """The source of what the call of `callee` at `line` of `function` passes for the
        parameter `name` of `target`, the function it reaches; None where it passes nothing
        the summary follows there. A parameter's value is what any call passes it: this call
        may pass another (`train_epoch(batches)` beside `train_epoch(loader)`)."""
        params = self._summaries[target.module].functions[target.key].arguments(target.bound)  # type: ignore[union-attr]
        for call in function.calls:
            if call.callee == callee and call.line == line:
                index = params.index(name) if name in params else len(call.args)
                return call.keywords.get(name) or (call.args[index] if index < len(call.args) else None)  # type: ignore[arg-type]
        return None

    def _alternatives(self, module: str, key: str, source: Source) -> list:
        """The values `source` may hold: every value a called project function returns, and
        where imports in `if` blocks bind its name to functions of two modules, each one's."""
        if isinstance(source, CallResult) and source.data is None:
            function = self._record(module, key)
            returned = [
                (value, target) for target in self._targets(module, source.callee, function.cls)
                if not self._hands_no_sampler(module, key, function, source, target)
                for value in self.returned_data.get(target.function, ())
            ]
            if returned:
                admitted = [self.admitted(value, target, self._literals_of(function, source)) for value, target in returned]
                return [value for value in admitted if value is not None] or [None]
        return [self.evaluate(module, key, source)]

    @staticmethod
    def _literals_of(function: FunctionSummary, source: CallResult) -> tuple:
        """The literal arguments the call `source` of `function` passes."""
        for call in function.literals:
            if call.callee == source.callee and call.line == source.line:
                return call.literals
        return ()

    def admitted(self, value, target: Target, literals: tuple):
        """What the builder `target` returns (`value`) to a call passing `literals`: without the
        samplers and loaders that the call rules out (`rules_out`), kept as unknown in a tuple;
        None when nothing is left."""
        if isinstance(value, Pack) and not value.each:
            items = tuple(
                None if item is not None and self.rules_out(item, target, literals) else self._decided(item, target, literals)
                for item in value.items
            )
            return replace(value, items=items) if any(items) else None
        return None if self.rules_out(value, target, literals) else self._decided(value, target, literals)

    def _decided(self, value, target: Target, literals: tuple):
        """`value` with the drop_last of its sampler that the call passing `literals` decides:
        `prepare(path, is_train=False)` of a builder making `DistributedSampler(ds,
        drop_last=is_train)` gets a sampler that pads."""
        sampler = value.sampler if isinstance(value, Loader) else value
        flag = sampler.drop_last_from if isinstance(sampler, Sampler) else None
        if flag is None or flag[:2] != target.function:
            return value
        params = self._summaries[target.module].functions[target.key].arguments(target.bound)  # type: ignore[union-attr]
        passed = {params[at] if isinstance(at, int) and at < len(params) else at: given for at, given in literals}
        given = passed.get(flag[2])
        if not isinstance(given, bool):
            return value
        decided = replace(sampler, drop_last=given)
        return replace(value, sampler=decided) if isinstance(value, Loader) else decided

    def rules_out(self, value, target: Target, literals: tuple) -> bool:
        """Whether a call of the builder `target` passing `literals` ((position or keyword,
        value) pairs) passes one that a test the sampler of `value` is made under rules out:
        `build_loader(cfg, "val")` gets no sampler made under `if split == "train":`."""
        tests = [test.test for test in value.when if (test.module, test.key) == target.function] if isinstance(value, (Sampler, Loader)) else []
        if not tests:
            return False
        params = self._summaries[target.module].functions[target.key].arguments(target.bound)  # type: ignore[union-attr]
        passed = {params[at] if isinstance(at, int) and at < len(params) else at: given for at, given in literals}
        for test in tests:
            if test.name in passed and (bool(passed[test.name]) if test.values is None else passed[test.name] in test.values) != test.way:
                return True
        return False

    def _targets(self, module: str, callee: str, cls: str | None) -> list[Target]:
        """What a call of `callee` reaches (`resolve`), and the functions the other imports of
        its name in top-level `if` blocks bind."""
        found = [self.resolve(module, callee, cls)]
        head, _, rest = callee.partition(".")
        summary = self._summaries.get(module)
        others = (summary.imports if summary is not None else {}).get(head, ())[:-1]
        for origin in others if head not in self.project.modules[module]["imports"] else ():
            qualified = self.project.module_view(module).absolute(origin)
            place = self.split(f"{qualified}.{rest}" if rest else qualified, module)
            if place is not None and place[1] and "." not in place[1] and place[0] != module:
                found.append(self.resolve(place[0], place[1], None, 1))
        return [target for target in dict.fromkeys(found) if target is not None]

    def values_of(self, module: str, key: str, source: Source) -> list:
        """Every value `source` may hold in function `key` where it takes an element of what
        a call returns (`loaders, _ = build()`; `train, val = loaders`), one per value the
        called functions return (`_alternatives`); else what `evaluate` says."""
        if isinstance(source, Item):
            return [
                value.at(source.index) for value in self.values_of(module, key, source.held)
                if isinstance(value, Pack) and value.at(source.index) is not None and _unpacks(value, source.size)
            ]
        if isinstance(source, CallResult) and source.data is None:
            return self._alternatives(module, key, source)
        if isinstance(source, Either) and all(isinstance(branch, CallResult) for branch in source.branches):
            # the result of a call of one of several functions (`loader_class(args)`): each one's
            return [value for branch in source.branches for value in self.values_of(module, key, branch)]
        return [self.evaluate(module, key, source)]

    def _makes_data(self, module: str, key: str, source: CallResult) -> Sampler | Loader | Batches | None:
        """The DistributedSampler, the DataLoader drawing from one, or the BatchSampler over one,
        that a call builds."""
        data, qualified = source.data, self.qualify(module, source.callee)
        padding = qualified in DISTRIBUTED_SAMPLER or (
            qualified not in _LOADERS_AND_BATCHERS and self.padding_sampler(module, source.callee)  # a project copy of it
        )
        if data.starred or (not padding and qualified not in _LOADERS_AND_BATCHERS):  # type: ignore[union-attr]
            return None
        at = self.place(module, source.line)
        if qualified in BATCH_SAMPLER:
            drawn = self.evaluate(module, key, data.sampler)  # type: ignore[union-attr]
            optional = isinstance(drawn, Sampler) and (drawn.optional or self.absent_some_way(module, key, data.sampler))  # type: ignore[union-attr]
            return Batches(at, replace(drawn.made(), optional=optional)) if isinstance(drawn, Sampler) else None
        if padding:
            shuffle = _literal(data.shuffle, True)  # type: ignore[union-attr]
            drop_last = _literal(data.drop_last, False)  # type: ignore[union-attr]
            held = (module, key, data.dataset.name) if isinstance(data.dataset, Param) else None  # type: ignore[union-attr]
            when = tuple(SamplerTest(module, key, test) for test in data.when)  # type: ignore[union-attr]
            flag = (module, key, data.drop_last.name) if isinstance(data.drop_last, Param) else None  # type: ignore[union-attr]
            given = self._given_epoch(module, key, source)
            return Sampler(at, shuffle, drop_last, dataset=held, when=when, drop_last_from=flag, epoch_given=given)
        source = data.sampler  # type: ignore[union-attr]
        drawn = self.evaluate(module, key, source)
        if source is None:  # through its batch_sampler: a BatchSampler made here or by a project function
            source = data.batch_sampler  # type: ignore[union-attr]
            batches = self.evaluate(module, key, source)
            drawn = batches.sampler if isinstance(batches, Batches) else None
        if not isinstance(drawn, Sampler):
            return None  # a loader that is not known to draw from a DistributedSampler is not followed
        # `sampler=sampler if train else None`: the loader draws from it under the builder's test
        tests = tuple(SamplerTest(module, key, test) for test in data.when)  # type: ignore[union-attr]
        optional = drawn.optional or data.optional or self.absent_some_way(module, key, source)  # type: ignore[union-attr]
        return Loader(at, replace(drawn.made(), when=drawn.when + tests, optional=optional), batched=source is not data.sampler)  # type: ignore[union-attr]

    def absent_some_way(self, module: str, key: str, source: Source | None) -> bool:
        """Whether some way of the `if`s that bind `source` holds no DistributedSampler (None,
        nothing, another sampler): `if distributed: sampler = DistributedSampler(ds)` with
        `else: sampler = None`, or none before it."""
        if not isinstance(source, Either):
            return False
        return any(
            self.absent_some_way(module, key, way) if isinstance(way, Either) else not isinstance(self.evaluate(module, key, way), (Sampler, Batches))
            for way in source.branches
        )

    def padding_sampler(self, module: str, callee: str) -> bool:
        """Whether `callee`, as written in `module`, names a project class that pads its indices
        as DistributedSampler does (a copy of it: ddplint.model.project.ProjectView.padding_sampler),
        or a subclass of DistributedSampler whose order still comes from the epoch
        (ProjectView.epoch_sampler): either is followed as one."""
        qualified = self.class_name(module, callee)
        view = self.project.module_view(module)
        return qualified is not None and (view.padding_sampler(qualified) or view.epoch_sampler(qualified)) is not None

    def _epoch_seeded(self, module: str, key: str, function: FunctionSummary, source: CallResult, made: tuple[str, str]) -> Sampler | None:
        """The sampler an object of the project class `made` is, where its `set_epoch` stores
        the epoch its `__iter__` seeds its order from, whatever its base or name
        (the index's "epoch_seeded"; ddplint.model.project.Project.builds_samplers): as a
        DistributedSampler, it repeats its order until set_epoch is called. It shuffles as the
        call's literal `shuffle` says, else as its `__init__`'s default, unknown (None) where
        neither says; whether it pads is its own code's (drop_last unknown)."""
        if not self.project.modules[made[0]]["classes"].get(made[1], {}).get("epoch_seeded"):
            return None
        init = self.definition(made[0], f"{made[1]}.__init__")
        params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:] if init is not None else []
        literals = dict(self._literals_of(function, source))
        position = params.index("shuffle") if "shuffle" in params else None
        shuffle = literals.get("shuffle", literals.get(position) if position is not None else None)
        if shuffle is None and init is not None:
            shuffle = _default(init, "shuffle")
        passed = next((call for call in function.calls if call.callee == source.callee and call.line == source.line), None)
        dataset = (passed.args[0] if passed.args else None) if passed is not None else None
        held = (module, key, dataset.name) if isinstance(dataset, Param) else None
        return Sampler(
            self.place(module, source.line), shuffle if isinstance(shuffle, bool) else None, None, dataset=held,
            epoch_given=self._given_epoch(module, key, source),
        )

    def _given_epoch(self, module: str, key: str, source: CallResult) -> bool:
        """Whether the call `source` of function `key` builds a sampler of a project class and
        hands its constructor, for the epoch its order is seeded from (`_seeding_parameter`), a
        parameter of `key` (`_passes_parameter`): `DistributedSampler(ds, epoch=epoch)`."""
        made = self.class_of(module, source.callee)
        init = self.definition(made[0], f"{made[1]}.__init__") if made is not None else None
        if init is None:
            return False
        seeding = _seeding_parameter(init, self.definition(made[0], f"{made[1]}.set_epoch"))
        scope = self.definition(module, key) if key else None
        params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
        return seeding is not None and scope is not None and _passes_parameter(scope, source, params, seeding)

    def class_name(self, module: str, callee: str) -> str | None:
        """The absolute name `callee`, as written in `module`, stands for, a class of the module
        itself included (which no import binds)."""
        qualified = self.qualify(module, callee)
        if qualified is None and callee in self.project.modules[module]["classes"]:
            qualified = f"{module}.{callee}"
        return qualified

    # -- solving -------------------------------------------------------------------------

    @staticmethod
    def _note(table: dict, key, name: str, value) -> bool:
        known = table.setdefault(key, {})
        if name in known and not _refines(known[name], value):
            return False
        known[name] = value
        return True

    def _solve(self) -> None:
        for _ in range(MAX_ROUNDS):
            # the names of functions that store data on an object they are handed (`_carried_back`)
            self._carriers = {
                key.rpartition(".")[2] for _, key, function in self.functions(past_solution=True)
                if any(isinstance(c.holder, Param) for c in function.carried)
            }
            changed = False
            for module in list(self._order):
                summary = self._summaries[module]
                for key, function in summary.functions.items() if summary is not None else ():
                    changed |= self._step(module, key, function)
            if not changed:
                return

    def _step(self, module: str, key: str, function: FunctionSummary) -> bool:
        changed = self._pass_on(module, key, function)
        cls = function.cls
        for attribute, source in function.sets.items():
            value = self.evaluate(module, key, source)
            if value is not None and cls is not None:
                changed |= self._note(self.attributes, (module, cls), attribute, value)
        for attribute, source in self._handed_to_base(module, key, function) if cls is not None else ():
            value = self.evaluate(module, key, source)
            if value is not None and attribute not in function.sets:
                changed |= self._note(self.attributes, (module, cls), attribute, value)
        for carried in function.carried:
            value = self.evaluate(module, key, carried.source)
            if _holds_data(value):
                changed |= self._note(self.carried, (module, key), (carried.holder, carried.name), value)
        for source in function.returns:
            changed |= self._return(module, key, self.evaluate(module, key, source))
        for source in function.returns:  # then the other ways of an `if` chain, each on its own
            for way in _other_ways(source):
                value = self.evaluate(module, key, way)
                if _holds_data(value):
                    changed |= self._return(module, key, value)
        return changed

    def _pass_on(self, module: str, key: str, function: FunctionSummary) -> bool:
        """Note what each call of `function` hands a project function's parameters."""
        changed = False
        builds_samplers = self.project.builds_samplers(module)
        carries = self.carried.get((module, key), {})
        for call in function.calls:
            passed = [(i, self.evaluate(module, key, s)) for i, s in enumerate(call.args)]
            named = [(k, self.evaluate(module, key, s)) for k, s in call.keywords.items()]
            given = [(i, s) for i, s in enumerate(call.args) if s is not None] + list(call.keywords.items())
            handed = [(at, name, value) for at, s in given for (holder, name), value in carries.items() if holder == s]
            carrier = call.callee.rpartition(".")[2] in self._carriers  # it may store data on what it is handed
            if not any(v for _, v in passed) and not any(v for _, v in named) and not handed and not carrier:
                continue
            # Read on where a DDP model or its inner module goes, or from a module that builds a sampler (its loaders).
            followed = handed or carrier or any(isinstance(v, (Wrapped, Inner, Prepared, Framework)) or _holds_data(v) for _, v in (*passed, *named))
            self.reading_closed = not followed and not builds_samplers
            target = self.resolve(module, call.callee, function.cls)
            self.reading_closed = False
            if target is None or self._test_into_training(module, target.module):
                continue
            params = self._summaries[target.module].functions[target.key].arguments(target.bound)  # type: ignore[union-attr]
            at = self.place(module, call.line)
            for index, value in (*passed, *named):
                name = params[index] if isinstance(index, int) and index < len(params) else index
                if value is not None and name in params:
                    changed |= self._note(self.parameters, target.function, name, replace(value, passed_at=at))
            for index, attribute, value in handed:  # `train(args)` after `args.train_loader = loader`
                name = params[index] if isinstance(index, int) and index < len(params) else index
                if name in params:
                    changed |= self._note(self.carried, target.function, (Param(name), attribute), replace(value, passed_at=at))
            changed |= self._carried_back(module, key, target, params, given)
        return changed

    def _test_into_training(self, caller: str, callee: str) -> bool:
        """Whether a call of module `caller` into module `callee` is a test's call of training
        code (tests/, test_*.py): what a test hands a training function (a model it wraps in
        FSDP, a mock of the arguments) is no value the training run gives it."""
        relpaths, is_test = self.project.relpaths, self.project.is_test_path
        return is_test(relpaths[caller].replace("\\", "/")) and not is_test(relpaths[callee].replace("\\", "/"))

    def _carried_back(self, module: str, key: str, target: Target, params: tuple, given: list) -> bool:
        """What the function `target` stores on the objects a call of function `key` hands it
        (`setup_data(args)` sets `args.train_loader`): the caller's object carries it after."""
        changed = False
        record = self._summaries[target.module].functions[target.key]  # type: ignore[union-attr]
        for carried in record.carried:
            if not isinstance(carried.holder, Param) or carried.holder.name not in params:
                continue
            position = params.index(carried.holder.name)
            for index, source in given:
                if index == position or index == carried.holder.name:
                    value = self.carried.get(target.function, {}).get((carried.holder, carried.name))
                    if value is not None:
                        changed |= self._note(self.carried, (module, key), (source, carried.name), value.made())
        return changed

    def _return(self, module: str, key: str, value) -> bool:
        """Note what function `key` returns."""
        value = value.made() if value is not None else None
        if _holds_data(value):
            returned = self.returned_data.setdefault((module, key), [])
            if value in returned or len(returned) >= MAX_RESULTS:
                return False
            returned.append(value)
        elif value is None or (module, key) in self.results and not (
            _refines(self.results[(module, key)], value) or _follows_past(self.results[(module, key)], value)
        ):
            return False
        else:
            self.results[(module, key)] = value
        self._read_callers(module)
        return True

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

    def held(self, table: dict, key: tuple[str, str | None], kind: type) -> dict:
        """The values of class `kind` among `table[key]` (parameters or attributes): name -> value."""
        return {name: value for name, value in table.get(key, {}).items() if isinstance(value, kind)}

    def receives_wrapped(self, module: str) -> bool:
        """Whether some function of `module` is handed a DDP model, keeps one on `self` or
        binds one a project function returns: its rules must look though it never names DDP."""
        if self._receivers is None:
            self._receivers = {
                m for table in (self.parameters, self.attributes) for (m, k) in table
                if self.held(table, (m, k), Wrapped) or self.held(table, (m, k), Prepared)
            }
            for name in self._order if self.results else ():
                summary = self._summaries[name]
                if summary is not None and any(
                    _wraps(self._result(name, callee, function.cls))
                    for function in summary.functions.values()
                    for callee in function.made
                ):
                    self._receivers.add(name)
        return module in self._receivers

    def result_of(self, module: str, callee: str, cls: str | None, index: int | None = None, kind: type = Wrapped):
        """The DDP model (or the value of `kind`: a Framework object) that calling `callee` in
        `module` returns (with `index`: at that position of the tuple it returns, `model, device =
        setup(net)`), or None."""
        value = self._result(module, callee, cls)
        if isinstance(value, Pack):
            value = value.items[index] if index is not None and index < len(value.items) else None
        return value if isinstance(value, kind) else None

    def _result(self, module: str, callee: str, cls: str | None):
        if module not in self._summaries or not self.results:
            return None
        target = self.resolve(module, callee, cls)
        return self.results.get(target.function) if target is not None else None

    def callee_summary(self, module: str, key: str | None, cls: str | None, callee: str) -> Callee | None:
        """What the project callable reached by calling `callee` in function `key` does: a
        function or class of the project, or the method (`__call__` for a plain call) of the
        project object a parameter or `self` attribute holds (`loss_scaler(loss, optimizer,
        update_grad=...)`); None when unknown."""
        value, rest = self._held_by(module, key, cls, callee)
        if isinstance(value, LossScaler) and not rest:
            return Callee(LOSS_SCALER_CALL, False)
        target = self.target(module, key, cls, callee)
        if target is None:
            return None
        return Callee(self._summaries[target.module].functions[target.key], target.bound)  # type: ignore[union-attr]

    def _held_by(self, module: str, key: str | None, cls: str | None, callee: str) -> tuple:
        """What the parameter or `self` attribute that a call of `callee` in function `key` starts
        from holds (None when unknown), and the rest of the name: (value, "step") for `scaler.step`."""
        head, _, rest = callee.partition(".")
        if head == "self" and cls is not None and rest:
            attribute, _, rest = rest.partition(".")
            return self.attributes.get((module, cls), {}).get(attribute), rest
        return (self.parameters.get((module, key), {}).get(head) if key else None), rest

    def target(self, module: str, key: str | None, cls: str | None, callee: str) -> Target | None:
        """The project function that calling `callee` in function `key` reaches, also through an
        object a parameter or `self` attribute holds. Kept for the program's life, by the
        question and the reading bounds in force (the tables it reads are solved when the
        program is built; the language server asks of every call on every keystroke)."""
        memo = (module, key, cls, callee, self.reading_closed, self.asking)
        if memo not in self._target_memo:
            self._target_memo[memo] = self._target(module, key, cls, callee)
        return self._target_memo[memo]

    def _target(self, module: str, key: str | None, cls: str | None, callee: str) -> Target | None:
        value, rest = self._held_by(module, key, cls, callee)
        if isinstance(value, Instance) and "." not in rest:
            return self._method(value.module, value.cls, rest or "__call__")
        return self.resolve(module, callee, cls)

    def combines(self, module: str, key: str | None, cls: str | None, callee: str) -> Collective | None:
        """The collective through which calling `callee` in function `key` combines results
        across ranks, itself (no place) or through project helpers (`all_reduce` at utils.py:44),
        or None. A method called on an object of unknown class (`meter.sync()` in a loop over
        meters) is looked for among the classes of the caller's module."""
        return self._runs(_COMBINES, module, key, cls, callee, 0)

    def collective(self, module: str, key: str | None, cls: str | None, callee: str) -> Collective | None:
        """The collective that every rank making a call of `callee` in function `key` reaches
        inside the project function it calls, at any depth of project helpers (MAX_HELPERS):
        one of torch.distributed (torch_api.COLLECTIVES), a DTensor's `full_tensor()`, or a
        method every rank must call of a framework object the program follows (an
        Accelerator, a DeepSpeed engine, an FSDP model: `framework_collective`); with the
        helpers on the way (`Collective.hops`). Calls under a rank test or given a process
        group (`group=`) inside the helpers do not count; an object of unknown class is not
        guessed. None when there is none, or it is unknown."""
        return self._runs(_EVERY_RANK, module, key, cls, callee, 0)

    def framework_collective(self, module: str, key: str | None, written: str) -> tuple[str, Framework] | None:
        """The name of the collective that the method call `written` (as written:
        `accelerator.save_state`) in function `key` of `module` (None: its own code) runs on a
        framework object the program follows (ddplint.model.records.Framework): `save_state` of
        an Accelerator given a DeepSpeed plugin, `save_checkpoint` of a DeepSpeed engine,
        `state_dict` of an FSDP model, with that object; None otherwise
        (torch_api.FRAMEWORK_COLLECTIVES)."""
        record = self.function(module, key) if key else self.module_code(module)
        for call in record.method_calls if record is not None else ():
            if call.written == written:
                found = self._method_collective(module, key or "", call)
                if found is not None:
                    return found
        return None

    def _method_collective(self, module: str, key: str, call: MethodCall) -> tuple[str, Framework] | None:
        value = self.evaluate(module, key, call.receiver)
        if not isinstance(value, Framework):
            return None
        methods = FRAMEWORK_COLLECTIVES.get(value.kind, frozenset())
        if value.sharded:
            methods = methods | FRAMEWORK_COLLECTIVES.get(f"{value.kind} sharded", frozenset())
        return (call.method, value) if call.method in methods else None

    def _runs(self, mode: str, module: str, key: str | None, cls: str | None, callee: str, depth: int) -> Collective | None:
        """`combines` (mode _COMBINES) and `collective` (mode _EVERY_RANK)."""
        if depth > (4 if mode == _COMBINES else MAX_HELPERS) or self.summary(module) is None:
            return None
        # (at depth 0 a collective called directly is not an answer, below it it is: the two differ)
        memo_key = (mode, module, key, cls, callee, depth == 0)
        memo = self.memos.collectives
        hit, known = memo.get(memo_key, depth)
        if hit:
            return known
        memo.start(memo_key)
        found = None
        qualified = self.qualify(module, callee)
        if mode == _COMBINES and qualified in COMBINING_COLLECTIVES:
            found = Collective(callee.rpartition(".")[2])
        elif mode == _EVERY_RANK and depth and (qualified in COLLECTIVES or callee.endswith(f".{DTENSOR_FULL_TENSOR}")):
            # mpi4py's world is the ranks only where an MPI launcher starts them (else each
            # process's world is itself alone, and its bcast waits for nobody)
            if qualified not in MPI_COLLECTIVES or self.project.starts_mpi_world:
                found = Collective(COLLECTIVES.get(qualified, DTENSOR_FULL_TENSOR))  # type: ignore[arg-type]
        else:
            targets = [self.target(module, key, cls, callee)]
            if mode == _COMBINES and targets[0] is None and "." in callee and "()." not in callee:
                method = callee.rpartition(".")[2]
                targets = [self._method(module, name, method) for name in self._summaries[module].classes]  # type: ignore[union-attr]
            found = next(filter(None, (self._runs_in(mode, target, depth) for target in targets if target is not None)), None)
        return memo.put(memo_key, found, depth)

    def runs_backward(self, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0) -> Place | None:
        """Where calling `callee` in function `key` runs a backward(): in the project function it
        reaches, itself or through the project functions it calls (three calls deep), or in the
        call of a library loss scaler (where that scaler is made); None when it does not, or it
        is unknown. A backward for an input's gradient in a function that steps no optimizer
        (FunctionSummary.input_gradient: an attack, a saliency map) trains nothing: not counted."""
        memo, memo_key = self.memos.backwards, (module, key, cls, callee)
        hit, known = memo.get(memo_key, depth)
        if hit:
            return known
        memo.start(memo_key)
        value, rest = self._held_by(module, key, cls, callee)
        if isinstance(value, LossScaler) and not rest:
            found: Place | None = value.made_at
        else:
            target = self.target(module, key, cls, callee)
            record = self._summaries[target.module].functions[target.key] if target is not None else None  # type: ignore[union-attr]
            found = None
            if record is not None and record.backward and not record.input_gradient:
                found = self.place(target.module, record.backward[0])  # type: ignore[union-attr]
            elif record is not None and depth < 3:
                found = self.backward_in(target.module, target.key, record.line, _LAST_LINE, depth + 1)  # type: ignore[union-attr]
        return memo.put(memo_key, found, depth)

    def backward_in(self, module: str, key: str, first: int, last: int, depth: int = 0) -> Place | None:
        """Where a backward() runs between lines `first` and `last` of function `key` (a loop's
        body): called there, or reached through a call made there (`runs_backward`); None when
        none is known to."""
        record = self.function(module, key)
        if record is None:
            return None
        for line in record.backward if not record.input_gradient else ():  # an attack's backward trains nothing
            if first <= line <= last:
                return self.place(module, line)
        for call in record.invocations:
            if first <= call.line <= last and call.callee.rpartition(".")[2] != "backward":
                found = self.runs_backward(module, key, record.cls, call.callee, depth)
                if found is not None:
                    return found
        return None

    def restored_in(self, module: str, key: str, first: int, last: int, depth: int = 0) -> frozenset[str]:
        """The objects whose state the code between lines `first` and `last` of function `key`
        of `module` ("": the module's own code) restores from a saved record (the receivers of
        its `load_state_dict(...)` calls: `model`, `optimizer`, `lr_scheduler`), itself or through
        the project functions it calls there (two calls deep, the whole of each). Objects handed
        one and the same state (`student.load_state_dict(state)`, `teacher.load_state_dict(state)`)
        count once: that is one set of weights copied, not the state of each restored."""
        record = self.function(module, key) if key else self.module_code(module)
        if record is None:
            return frozenset()
        found: set[str] = set()
        handed: set[str] = set()
        for call in record.invocations:
            if not first <= call.line <= last:
                continue
            receiver, _, method = call.callee.rpartition(".")
            if method == "load_state_dict" and receiver:
                state = self._state_handed(module, key, call.line)
                if state not in handed:
                    found.add(receiver)
                if state is not None:
                    handed.add(state)
            elif depth < 2:
                target = self.target(module, key or None, record.cls, call.callee)
                if target is not None and (target.module, target.key) != (module, key):
                    found |= self.restored_in(target.module, target.key, 0, _LAST_LINE, depth + 1)
        return frozenset(found)

    def _state_handed(self, module: str, key: str, line: int) -> str | None:
        """The text of what the one `load_state_dict(...)` call on `line` of function `key` of
        `module` ("": the module's own code) is handed; None where that is not one call's."""
        scope = self.definition(module, key) if key else self.tree(module)
        handed = [
            ast.unparse(node.args[0]) for node in ast.walk(scope)
            if isinstance(node, ast.Call) and node.lineno == line and node.args
            and isinstance(node.func, ast.Attribute) and node.func.attr == "load_state_dict"
        ] if scope is not None else []
        return handed[0] if len(handed) == 1 else None

    def receives_data(self, module: str) -> bool:
        """Whether some function of `module` is handed a DistributedSampler or a loader drawing
        from one, keeps one on `self`, or reads one an object carries: its rules must look
        though it never builds one."""
        if self._data_receivers is None:
            self._data_receivers = {
                name for table in (self.parameters, self.attributes, self.carried) for (name, _), values in table.items()
                if any(_holds_data(value) for value in values.values())
            }
            # and the callers of a project function or method that returns one (a factory's
            # `df.product_train_val_loader(...)`, its class star-imported), in the modules read
            for function, values in self.returned_data.items():
                if any(_holds_data(value) for value in values):
                    self._data_receivers.update(site.caller for site in self.context.call_sites(*function, read_only=True) or ())
        return module in self._data_receivers

    def _runs_in(self, mode: str, target: Target, depth: int) -> Collective | None:
        """The collective the project function `target` reaches (see `_runs`), with the hop
        through it: the first found (combines), or the one under the fewest `if`s there, then
        the first (collective: the surest way)."""
        record = self._summaries[target.module].functions[target.key]  # type: ignore[union-attr]
        events = sorted([*record.invocations, *(record.method_calls if mode == _EVERY_RANK else ())], key=lambda e: e.line)
        guards = self.context.guards_around(target.module, target.key) if mode == _EVERY_RANK else ()
        best: tuple[int, Collective] | None = None
        branched: list[tuple[list, Collective]] = []  # under rank tests: each with those tests
        for event in events:
            place = self.place(target.module, event.line)
            rank_guards = None
            if mode == _EVERY_RANK and not self._every_rank_runs(target, record, event.line):
                if event.line in record.grouped or best is not None:
                    continue
                rank_guards = self.context.rank_guards_at(target.module, target.key, event.line)
            if isinstance(event, MethodCall):
                found = self.framework_collective(target.module, target.key, event.written)
                where = Collective(found[0], place, framework=found[1]) if found is not None else None
                written = event.written
            else:
                where = self._runs(mode, target.module, target.key, record.cls, event.callee, depth + 1)
                written = event.callee
            if where is None:
                continue
            where = replace(where, place=where.place or place, hops=(Hop(target.key, written, place), *where.hops))
            if rank_guards is not None:
                branched.append((rank_guards, where))
                continue
            conditions = sum(guard.first <= event.line <= guard.last for guard in guards)
            if best is None or conditions < best[0]:
                best = conditions, where
            if not conditions or mode == _COMBINES:
                break
        if best is None:
            return next((where for tests, where in branched if _balanced(tests, where, branched)), None)
        return best[1]

    def _every_rank_runs(self, target: Target, record: FunctionSummary, line: int) -> bool:
        """Whether every rank that enters the function `target` reaches `line` of it with the
        whole group: no process group is given there, and no rank test stands around it."""
        return line not in record.grouped and self.context.every_rank_at(target.module, target.key, line)

    def evaluation(self, module: str, key: str | None, cls: str | None, callee: str, index: int | None,
                   keyword: str | None, line: int | None = None) -> Evaluation | None:
        """Where the project function that calling `callee` in function `key` reaches iterates
        what the call passes it (at position `index` or as `keyword`) in a loop without
        backward(), and combines results across ranks in or after that loop; None if it does
        not, or is unknown. Given the `line` of the call, the methods called there on the project
        objects it hands the function are those of the objects that call hands
        (`handed_objects`), whatever other calls of the function hand it."""
        given = self.handed_objects(module, key, cls, callee, line) if line is not None else ()
        if not given:
            return self.follow(self.memos.evaluations, self._evaluates, module, key, cls, callee, index, keyword)
        memo = self.memos.bound_evaluations.setdefault(given, DepthMemo())
        return self.follow(memo, functools.partial(self._evaluates, given=given), module, key, cls, callee, index, keyword)

    def handed_objects(self, module: str, key: str | None, cls: str | None, callee: str, line: int) -> tuple:
        """What the call of `callee` at `line` of function `key` hands the project function it
        reaches: ((that function), ((parameter, the project object it receives there), ...)),
        or () where it hands no project object (ddplint.model.records.Instance)."""
        target, record = self.target(module, key, cls, callee), self._record(module, key or "")
        if target is None or record is None:
            return ()
        params = self._summaries[target.module].functions[target.key].arguments(target.bound)  # type: ignore[union-attr]
        found = {}
        for call in (call for call in record.calls if call.callee == callee and call.line == line):
            for name, source in (*zip(params, call.args), *call.keywords.items()):
                value = self.evaluate(module, key or "", source) if source is not None and name in params else None
                if isinstance(value, Instance):
                    found[name] = replace(value, passed_at=None)
        return (target.function, tuple(sorted(found.items(), key=lambda item: item[0]))) if found else ()

    def follow(self, memo: DepthMemo, check, module: str, key: str | None, cls: str | None, callee: str,
               index: int | None, keyword: str | None, depth: int = 0):
        """What `check(module, key, summary, source)` finds about a value that calling `callee` in
        function `key` hands (at position `index` or as `keyword`) to a project function: there,
        as its parameter (source Param(name)); else where that function hands it on (up to
        three calls deep: `evaluate(loader)` calls `_run(model, loader)`) or keeps it on `self`
        for its class's methods (SelfAttr(name)). The first answer, or None; `memo` keeps the
        answers by function and parameter."""
        target = self.target(module, key, cls, callee)
        if target is None:
            return None
        record = self._summaries[target.module].functions[target.key]  # type: ignore[union-attr]
        params = record.arguments(target.bound)
        name = keyword if keyword in params else params[index] if index is not None and index < len(params) else None
        if name is None:
            return None
        memo_key = (target.module, target.key, name)
        hit, known = memo.get(memo_key, depth)
        if hit:
            return known
        memo.start(memo_key)
        return memo.put(memo_key, self._reach(memo, check, target.module, target.key, record, Param(name), depth), depth)

    def _reach(self, memo: DepthMemo, check, module: str, key: str, record: FunctionSummary, source: Source, depth: int):
        found = check(module, key, record, source)
        if found is not None or depth >= 3:
            return found
        for call in record.calls:
            handed = [(i, None) for i, given in enumerate(call.args) if given == source]
            handed += [(None, k) for k, given in call.keywords.items() if given == source]
            for position, word in handed:
                found = self.follow(memo, check, module, key, record.cls, call.callee, position, word, depth + 1)
                if found is not None:
                    return found
        kept = [SelfAttr(a) for a, given in record.sets.items() if given == source] if isinstance(source, Param) else []
        kept += self._kept_by_base(module, key, record, source) if isinstance(source, Param) else []
        for other, method in self._summaries[module].functions.items() if kept else ():  # type: ignore[union-attr]
            for attribute in kept if method.cls == record.cls else ():
                found = self._reach(memo, check, module, other, method, attribute, depth)
                if found is not None:
                    return found
        return None

    def _kept_by_base(self, module: str, key: str, record: FunctionSummary, source: Source) -> list[SelfAttr]:
        """The attributes a base class's `__init__` keeps what a constructor hands it through
        `super().__init__(model, loader)`: the object the constructor makes holds them too."""
        return [SelfAttr(attribute) for attribute, given in self._handed_to_base(module, key, record) if given == source]

    def _handed_to_base(self, module: str, key: str, record: FunctionSummary) -> list[tuple[str, Source]]:
        """(attribute, what the constructor hands for it) for each `self` attribute that the
        `__init__` of a project base class keeps as is from a parameter that the constructor
        `key` gives it through `super().__init__(model, loader)` (`self.model = model` in the
        base's `__init__`, of any module): the object the constructor makes holds it too."""
        kept: list[tuple[str, Source]] = []
        for call in record.calls if key.endswith(".__init__") else ():
            target = self.target(module, key, record.cls, call.callee) if call.callee == "super().__init__" else None
            if target is None:
                continue
            base = self._summaries[target.module].functions[target.key]  # type: ignore[union-attr]
            params = base.arguments(target.bound)
            given = {Param(params[i]): source for i, source in enumerate(call.args) if i < len(params)}
            given.update({Param(word): source for word, source in call.keywords.items()})
            kept += [(attribute, given[held]) for attribute, held in base.sets.items() if held in given]
        return kept

    def kept_evaluation(self, module: str, cls: str, attribute: str) -> Evaluation | None:
        """Where a method of class `cls` evaluates what the class keeps as `self.<attribute>`
        (`self.val_loader = build_loader(cfg, "val")`) and combines the results, as `evaluation`."""
        memo, memo_key = self.memos.evaluations, (module, cls, f"self.{attribute}")
        hit, known = memo.get(memo_key, 0)
        if hit:
            return known
        memo.start(memo_key)
        return memo.put(memo_key, next(filter(None, (
            self._reach(memo, self._evaluates, module, key, method, SelfAttr(attribute), 0)
            for key, method in self._summaries[module].functions.items()  # type: ignore[union-attr]
            if method.cls == cls
        )), None), 0)

    def _evaluates(self, module: str, key: str, record: FunctionSummary, source: Source, given: tuple = ()) -> Evaluation | None:
        held = source.name if isinstance(source, Param) else f"self.{source.name}" if isinstance(source, SelfAttr) else None
        for loop in record.loops:
            if held not in loop.iterated or loop.trains:
                continue
            for call in record.invocations:
                where = self.combines(module, key, record.cls, call.callee) if call.line >= loop.first else None
                if where is not None and _unfed(record, loop, call):
                    continue  # `metric_logger.synchronize_between_processes()` of meters nothing updated
                if where is not None and self._evaluates_another(module, key, record, call, source):
                    continue  # `validate_one(val_loader, model)`: it combines what its own loop counts
                if where is not None:
                    if self._deduplicates(module, key, record):
                        return None  # padded duplicates land on their originals' slots
                    if where.place is None:
                        where = replace(where, place=self.place(module, call.line))
                    return Evaluation(key, self.place(module, loop.first), where)
            objects = given[1] if given and given[0] == (module, key) else ()
            where = self._file_gather(module, key, record, loop.first, objects)
            if where is not None and not self._deduplicates(module, key, record):
                return Evaluation(key, self.place(module, loop.first), where)
        return None

    def _evaluates_another(self, module: str, key: str, record: FunctionSummary, call: Called, source: Source) -> bool:
        """Whether `call`, made after a loop over `source`, hands the project function it reaches
        not `source` but another value that function iterates in a loop of its own and combines
        after it (`evaluation`): the combine there counts what that loop produced, the batches of
        the value it is handed (`validate_one(val_loader, model)` after a few forward passes over
        the training loader that re-estimate BatchNorm statistics), not those of `source`."""
        for passing in record.calls:
            if passing.line != call.line or passing.callee != call.callee:
                continue
            handed = [(index, None, given) for index, given in enumerate(passing.args)]
            handed += [(None, word, given) for word, given in passing.keywords.items()]
            if any(given == source for _, _, given in handed):
                return False
            if any(given is not None and self.evaluation(module, key, record.cls, call.callee, index, word) is not None
                   for index, word, given in handed):
                return True
        return False

    def _file_gather(self, module: str, key: str, record: FunctionSummary, first: int, objects: tuple = ()) -> Collective | None:
        """Results combined through files after the loop starting at line `first`: each rank
        writes its own, a barrier waits for all, and the folder is listed and read back
        (ddplint.model.keyed.gathered_through_files), which counts every rank's results as an
        all_gather_object does; the steps taken here or in the project functions and methods
        the function calls (`file_steps`)."""
        listed = keyed.gathered_through_files(self.file_steps(module, key, record.cls, first, objects))
        return Collective("the ranks' files, listed after a barrier,", listed) if listed is not None else None

    def file_steps(self, module: str, key: str, cls: str | None, first: int = 0, objects: tuple = (),
                   depth: int = 0) -> tuple[FileStep, ...]:
        """What function `key` of `module` does with files and the ranks from line `first` on, in
        the order it runs: each write of a file (keyed.DUMPERS: `json.dump`, `f.write`,
        `df.to_csv`), barrier (`dist.barrier()`) and listing of a folder (`glob.glob`), made there
        or in the project functions it calls and the methods of the objects its parameters and
        `self` hold (`post.save()` of the PostProcessor a caller hands it; three calls deep),
        each at the place it is made and whether every rank that runs the function makes it
        (no rank test around it or around the calls that lead there). `objects`: the project
        objects ((parameter, Instance) pairs) one call hands the function, which its parameters
        hold there whatever other calls hand it (`handed_objects`). While reading is closed
        (a hint's question) every step counts as every rank's: who runs a line is not asked then."""
        record = self._record(module, key)
        if record is None or depth > 3:
            return ()
        memo_key = (module, key, first, objects, self.reading_closed)
        known = self.memos.file_steps.get(memo_key)
        if known is not None:
            return known
        self.memos.file_steps[memo_key] = ()  # a recursion through it finds nothing more
        steps: list[FileStep] = []
        for call in sorted((call for call in record.invocations if call.line >= first), key=lambda call: call.line):
            head, _, rest = call.callee.partition(".")
            held = dict(objects).get(head) if rest and "." not in rest else None
            target = self._method(held.module, held.cls, rest) if held is not None else None
            target = target or self.target(module, key or None, cls, call.callee)  # a project method first: `post.save()`
            if target is not None and target.function != (module, key):
                callee_cls = self._summaries[target.module].functions[target.key].cls  # type: ignore[union-attr]
                taken = self.file_steps(target.module, target.key, callee_cls, 0, (), depth + 1)
            else:
                kind = keyed.file_step(call.callee, COLLECTIVES.get(self.qualify(module, call.callee) or ""))
                taken = (FileStep(kind, self.place(module, call.line), True),) if kind is not None else ()
            # Who runs a line is not asked while reading is closed (Program.hands_to_evaluation):
            # the context would keep an answer that lacks the modules unread; a hint may admit more.
            if taken and not self.reading_closed and not self.context.every_rank_at(module, key or None, call.line):
                taken = tuple(replace(step, every_rank=False) for step in taken)
            steps += taken
        self.memos.file_steps[memo_key] = found = tuple(steps)
        return found

    def _deduplicates(self, module: str, key: str, record: FunctionSummary) -> bool:
        """Whether function `key` (or a project helper it calls) places results by sample id
        (torch_api.DEDUPLICATING_METHODS): a COCO evaluator merging by image id, features
        index_copy_'d into a dataset-sized tensor, a dict stored by the batch's ids; or trims
        them to a length (`preds[: len(data_loader.dataset)]`, also through `n = len(...)`);
        or writes a file per sample named by the sample and reads the folder back
        (ddplint.model.keyed): a repeat overwrites its own file."""
        placed = self._placements(module, key, record, 0)
        return "placed" in placed or {"keyed_files", "lists_files"} <= placed

    def _placements(self, module: str, key: str, record: FunctionSummary, depth: int) -> frozenset[str]:
        memo = self.memos.deduplicating
        if (module, key) not in memo:
            memo[(module, key)] = frozenset()  # a recursion through it finds nothing more
            memo[(module, key)] = self._finds_placements(module, key, record, depth)
        return memo[(module, key)]

    def _finds_placements(self, module: str, key: str, record: FunctionSummary, depth: int) -> frozenset[str]:
        """"placed" (cut or placed by sample), else what of "keyed_files" and "lists_files" the
        function and the helpers it calls do."""
        if record.deduplicates:
            return frozenset({"placed"})  # `preds[: len(dataset)]`: the padded duplicates are cut off
        found = {fact for fact, does in (("keyed_files", record.keyed_files), ("lists_files", record.lists_files)) if does}
        for call in record.invocations:
            if call.callee.rpartition(".")[2] in DEDUPLICATING_METHODS:
                return frozenset({"placed"})
            refused = self.refused
            target = self.target(module, key, record.cls, call.callee) if depth < 4 else None
            if self.refused != refused:
                return frozenset({"placed"})  # a helper past the bounds may place results by sample id: unknown, so silent
            if target is not None and target.function != (module, key):
                inner = self._summaries[target.module].functions[target.key]  # type: ignore[union-attr]
                found |= self._placements(target.module, target.key, inner, depth + 1)
                if "placed" in found:
                    return frozenset({"placed"})
        return frozenset(found)

    def hands_to_evaluation(self, module: str) -> bool:
        """Whether some function of `module` hands a value to a project function that evaluates
        it and combines the results (see `evaluation`): its rules must look though it never
        names a collective."""
        summary = self._summaries.get(module)
        if summary is None:
            return False
        # Asked of every module's hints: only a module that builds samplers reads on (its loaders' helpers).
        self.reading_closed = not self.project.builds_samplers(module)
        try:
            return any(
                self.evaluation(module, key, function.cls, call.callee, index, None) is not None
                for key, function in summary.functions.items()
                for call in function.calls
                for index, source in enumerate(call.args)
                if source is not None
            )
        finally:
            self.reading_closed = False

    @functools.cached_property
    def context(self) -> process_context.ProcessContext:
        """Who runs the project's functions (ddplint.model.context.ProcessContext)."""
        return process_context.ProcessContext(self)

    @functools.cached_property
    def values(self) -> program_values.Values:
        """Saved files and DDP wraps across the program (ddplint.model.values)."""
        return program_values.Values(self)

    def digest(self) -> list:
        """What the solution says, as JSON-able data (for cache keys)."""
        return [
            sorted([*key, str(name), repr(value)] for key, values in table.items() for name, value in values.items())
            for table in (self.parameters, self.attributes, self.carried)
        ] + [sorted([*key, repr(value)] for key, value in self.results.items())] + [
            sorted([*key, repr(values)] for key, values in self.returned_data.items())
        ] + self.values.digest()


class _Memos:
    """Answers the questions remember, by what they were asked. The table of evaluated samplers
    (ddplint.model.loaders) solves its own on fresh memos (`fresh`)."""

    def __init__(self) -> None:
        self.evaluations = DepthMemo()
        self.collectives = DepthMemo()  # `combines` and `collective`
        self.deduplicating: dict = {}
        self.file_steps: dict = {}  # (module, function, first line, objects handed) -> its FileSteps
        self.bound_evaluations: dict = {}  # `evaluation` of one call, by the objects it hands: a DepthMemo each
        self.trainings = DepthMemo()  # ddplint.model.inner
        self.backwards = DepthMemo()
        self.handed_inner: dict = {}
        self.evaluated_samplers: dict | None = None
        # what a rule's own questions of the program read from modules as saved, by question and
        # module: the language server asks them again on every keystroke of one program
        self.read: dict = {}


def _unpacks(value: Pack, size: int | None) -> bool:
    """Whether an unpacking into `size` names (None: not one) may take `value`: a tuple of
    another length raises instead."""
    return size is None or value.each or bool(value.keys) or len(value.items) == size


def _seeding_parameter(init: ast.FunctionDef | ast.AsyncFunctionDef, set_epoch) -> str | None:
    """The parameter of a sampler class's `__init__` that it stores on the attribute its
    `set_epoch` stores the epoch on (`self.epoch = epoch` in both): the epoch the sampler is
    built with, which seeds its order until set_epoch moves it; None without one."""
    if set_epoch is None:
        return None
    epochs = {attribute for attribute, _ in _self_stores(set_epoch)}
    return next((param for attribute, param in _self_stores(init) if attribute in epochs), None)


def _self_stores(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[str, str]]:
    """(attribute, parameter) of each `self.<attribute> = <parameter>` in `definition`."""
    arguments = definition.args
    params = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for node in ast.walk(definition):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in params:
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    yield target.attr, node.value.id


def _passes_parameter(scope: ast.FunctionDef | ast.AsyncFunctionDef, source: CallResult, params: list[str], name: str) -> bool:
    """Whether the call `source` (in function `scope`) passes parameter `name` (of `params`,
    the callee's positional parameters) a parameter of `scope` itself, as written: the value
    its caller hands it each time (`DistributedSampler(ds, epoch=epoch)` in `load_train(...,
    epoch, ...)`), not a constant or a setting read elsewhere (`epoch=args.start_epoch`)."""
    arguments = scope.args
    own = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for call in ast.walk(scope):
        if isinstance(call, ast.Call) and call.lineno == source.line and ast.unparse(call.func) == source.callee:
            given = next((k.value for k in call.keywords if k.arg == name), None)
            position = params.index(name) if name in params else len(call.args)
            given = call.args[position] if given is None and position < len(call.args) else given
            return isinstance(given, ast.Name) and given.id in own
    return False


def _default(definition: ast.FunctionDef | ast.AsyncFunctionDef, name: str):
    """The constant default of parameter `name` of `definition`, or None."""
    arguments = definition.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
    pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
    default = next((d for a, d in pairs if a.arg == name), None)
    return default.value if isinstance(default, ast.Constant) else None


def _literal(given, default: bool) -> bool | None:
    """A data call's flag: its literal, `default` when not passed, None when the code decides."""
    if given is None:
        return default
    return given.value if isinstance(given, Literal) else None


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
    if not followed or len({_kind(value) for value in followed}) != 1:
        return None
    if len({(value.module, value.cls) for value in followed if isinstance(value, Instance)}) > 1:
        return None
    return followed[0]


def _other_ways(source) -> list:
    """The sources a returned `source` holds along the second and later ways of the `if` chain
    that binds it (`val_sampler = DistributedSampler(a)` in one branch, `... (b)` in the next):
    evaluating the Either keeps the first way only (`_either`), and each binding deserves its own
    judgement. In a tuple, the items that the chain binds are taken along the same way (only
    where all of them have as many ways); nothing when there is no such chain."""
    items = source.items if isinstance(source, Group) else (source,)
    counts = {len(_flat_ways(item)) for item in items if isinstance(item, Either)}
    if len(counts) != 1:
        return []

    def along(item, way: int):
        return _flat_ways(item)[way] if isinstance(item, Either) else item

    ways = range(1, counts.pop())
    if isinstance(source, Group):
        return [replace(source, items=tuple(along(item, way) for item in items)) for way in ways]
    return [along(source, way) for way in ways if along(source, way) is not None]


def _flat_ways(either) -> list:
    """The branches of an Either, its nested last branch flattened (`if`, `elif`, `elif`)."""
    ways = list(either.branches)
    while ways and isinstance(ways[-1], Either):
        ways[-1:] = ways[-1].branches
    return ways


def _kind(value) -> type:
    """A value's kind for `_either`: samplers and loaders are one kind of data."""
    return Sampler if isinstance(value, (Sampler, Loader)) else type(value)


def _data_calls(sources) -> list[DataCall]:
    """The DataCalls (what a DataLoader or sampler is made with) among `sources`, at any depth
    of the records that hold them (`Each(CallResult(DataLoader, data=...))`)."""
    found, pending = [], list(sources)
    while pending:
        item = pending.pop()
        if isinstance(item, DataCall):
            found.append(item)
        elif isinstance(item, tuple):
            pending.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            pending.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return found


def _params_in(source) -> set[str]:
    """The names of the parameters `source` is handed from (`Element(Param("samplers"))`), not
    those of a call made here (`DistributedSampler(dataset)`)."""
    found, pending = set(), [source]
    while pending:
        item = pending.pop()
        if isinstance(item, Param):
            found.add(item.name)
        elif isinstance(item, Item) and isinstance(item.held, Group) and isinstance(item.index, int) and item.index < len(item.held.items):
            pending.append(item.held.items[item.index])  # `for ds, s in zip(datasets, samplers)`: `s` only
        elif isinstance(item, CallResult):
            continue  # made here (`DistributedSampler(dataset)`), not handed
        elif isinstance(item, tuple):
            pending.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            pending.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return found


def _holds_data(value) -> bool:
    """A sampler or loader, or a tuple holding one."""
    if isinstance(value, Pack):
        return any(_holds_data(item) for item in value.items)
    return isinstance(value, (Sampler, Loader))


def _refines(known, value) -> bool:
    """Whether `value` is the value `known` with more of it found: the same record, made at the
    same place, where a part unknown when it was first noted (`Wrapped.wraps`, while the program
    had not yet read what a parameter is handed) is known now. Each refinement fills a part,
    so the solution still ends."""
    if type(known) is not type(value) or known == value or not dataclasses.is_dataclass(known):
        return False
    filled = False
    for field in dataclasses.fields(known):
        before, after = getattr(known, field.name), getattr(value, field.name)
        if before is None and after is not None:
            filled = True
        elif before != after:
            return False
    return filled


def _follows_past(known, value) -> bool:
    """Whether `value`, a BatchSampler over a DistributedSampler, is the way of an `if` the run
    takes where `known` is the project object the other way makes (`batches = BatchSampler(sampler,
    n)`, then `if iterations: batches = Repeated(batches, iterations)`): as `_either` prefers it
    once both are known, a function's result noted while its parameter was unknown yields to it.
    Only ever an Instance yields, so the solution still ends."""
    return isinstance(known, Instance) and isinstance(value, Batches)


def _wraps(value) -> bool:
    """Whether a function's result is a DDP model or a tuple that holds one."""
    return isinstance(value, Wrapped) or isinstance(value, Pack) and any(isinstance(item, Wrapped) for item in value.items)


def _balanced(tests: list, where: Collective, branched: list[tuple[list, Collective]]) -> bool:
    """Whether every rank reaches a collective like `where`, which runs under the rank `tests`:
    for each of them, the other way of the same test runs the same collective (`if
    MPI.COMM_WORLD.Get_rank() == 0: ...bcast(data)` with `else: ...bcast(None)`)."""
    return bool(tests) and all(
        any(other.name == where.name and any(o.test == test.test and o.sense != test.sense for o in others)
            for others, other in branched)
        for test in tests
    )


def _unfed(record: FunctionSummary, loop: Loop, call: Called) -> bool:
    """Whether `call` combines an object the function makes itself (`metric_logger =
    utils.MetricLogger()` ... `metric_logger.synchronize_between_processes()`, which the summary
    writes `utils.MetricLogger().synchronize_between_processes`; not a parameter's nor `self`'s)
    that no call after the loop starts and before the combine updates (`metric_logger.update(
    loss=...)`, `metric_logger.meters["acc"].update(acc)`): it reduces meters that hold nothing
    of the evaluation, which padded repeats cannot skew. (The loop's own line may wrap the
    loader: `metric_logger.log_every(loader, 10)` counts no sample.)"""
    receiver = call.callee.rpartition(".")[0]
    if not receiver.endswith("()"):
        return False
    return not any(  # `metric_logger.meters["acc"].update(...)` updates it too
        other.callee.startswith(receiver + ".") and loop.first < other.line < call.line
        for other in (*record.invocations, *record.element_calls)
    )

