"""Which code of a training project runs at all: a question on the project (ddplint.model.project).

A finding is a promise that the code runs; in a training project a function nothing reachable
from an entry point calls never does (a helper whose only callers are commented out, a class
nothing instantiates). The entry points:

- scripts: modules with `if __name__ == "__main__":`, modules no other module imports whose own
  code works at the top level (a bare call, a loop, a `with`: `python tools/x.py` runs them;
  in a module that defines functions or classes, a call that only sets up an imported module,
  `wandb.init(project="x")`, is no work), and the modules the project's launch commands
  (shell scripts, documents) run;
- tests (modules under `tests/`, `test_*.py`, `*_test.py`, `conftest.py`) and notebooks;
- console scripts the project declares (pyproject.toml, setup.cfg, setup.py: "pkg.cli:main").

The code they reach is every module they import, at any depth (or a document shows imported:
a README's `from trainer import Trainer` to put in `train.py`), and every name those modules
use (a call, an attribute, an import, a string: registries and `getattr` name functions by
string; a LightningCLI in subclass mode runs any project LightningModule or LightningDataModule
subclass its command line or YAML names). A top-level function runs when its name is used in reached code (not
where every reached module that names it imports, at any depth, another module that defines the name and never
its own: a folder's own copy of a helper module); a method when its
class's name is; a module's own code when the module is reached. That holds inside an entry
script too: a function it defines that nothing names (its own code, a command, a console script,
a dispatcher such as `fire.Fire()`) does not run when the script does.

A method runs when its class's name is, unless the class derives from project classes only
(no framework calls it back) and no code that runs says the method's name other than as an
attribute of an imported module (`torch.load` is no call of `Fitter.load`): a class whose
`load` is called only in a commented-out line. Nor where every call by that name is on an object
that cannot be one of the class: `self.load` in an unrelated `Dict`, and, where no object of the
class (or of one derived from it) is ever handed on, stored or returned, only kept in names the
code reads by attribute (`checker = Checkpoint(...)`, then `checker.save(...)`), a `.load` on
anything but such a name (`self[name].load(data)`).
Nor does a method of such a class run where no code that runs builds the class or a project
class derived from it: a one-process base trainer whose only subclass no script builds (every
run builds the distributed trainer on another base), its name said only in `class` statements'
bases and in imports that keep it, and no lookup by a name built at run time able to pick it.

A top-level function its module defines again later never runs either: the name holds the last
definition once the module is imported (unless a decorator or a call at import between the two
may reach the first).

What is not known stays reachable: a project with no script that starts processes (a library,
a notebook collection) keeps every function; so does a public function or class of a package
the project installs (its users call it), and a decorated function (a decorator may register
it where no name says so).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import unicodedata

from ddplint.core.torch_api import INIT_PROCESS_GROUP, LIGHTNING_DATA_MODULE, LIGHTNING_MODULE, SPAWN, START_PROCESSES
from ddplint.model.summary import replaced_definitions
from ddplint.prefilter.screens import last_name, nodes

# `name = "pkg.module:function"` in pyproject's [project.scripts], setup.cfg's console_scripts, setup.py's entry_points
_CONSOLE_SCRIPT = re.compile(r"""["']?[\w.-]+["']?\s*=\s*["']?([\w.]+):([\w.]+)""")
_PACKAGING = ("pyproject.toml", "setup.py", "setup.cfg")
_SCRIPT = re.compile(r"([\w./${}-]*\.py)(?![\w.])")  # a script a launch command runs
_RUN_MODULE = re.compile(r"(?<![\w-])-m\s+([\w.]+)")  # `python -m pkg.train`
# Texts by which a script runs its functions without naming them in code.
# What imports a module by a name built at run time (or runs one as a script).
_DYNAMIC_IMPORTS = ("import_module", "__import__", "importlib", "runpy", "exec(", "imp.load", "load_source", "spec_from")
_NAME_DISPATCH = ("Fire(", "globals()", "locals()", "sys.modules[__name__]", "vars()")
# A line that may begin a top-level loop, `with` or call statement (`_unguarded_script`), or
# hold a second statement after `;`; a module with none does no work at the top level.
_TOP_LEVEL_WORK = re.compile(r"^(?:(?:for|while|with|async)\b|[\w.]+(?:\[[^\]\n]*\])*\s*\(|\(|[^#\n]*;|[rbfuRBFU]*[\"'].*[\"']\s*\.)", re.M)
# Calls by which a module sets up a library when imported (`wandb.init(project=...)`,
# `warnings.filterwarnings("ignore")`, `sys.path.append(...)`): no work of a script's.
_SETUP_CALLS = frozenset({
    "init", "login", "filterwarnings", "simplefilter", "basicConfig", "setLevel", "disable_warnings", "append",
    "insert", "seed", "manual_seed", "use", "setNumThreads", "set_num_threads", "set_printoptions",
    "set_start_method", "set_sharing_strategy", "setdefault", "register",
})
# Methods Python runs on a class without an instance of it: a subclass statement runs
# `__init_subclass__`, `Cls[int]` runs `__class_getitem__`.
_CLASS_HOOKS = frozenset({"__init_subclass__", "__class_getitem__"})
# Calls that import a module by a name given as a value (`importlib.import_module(cfg.type)`).
_IMPORT_CALLS = frozenset({"import_module", "__import__", "load_source", "spec_from_file_location", "run_path", "run_module", "exec", "load_module"})
# Texts by which a module looks a name up in a namespace at run time (its own, or an object's).
_NAMESPACE_LOOKUPS = (*_NAME_DISPATCH, "__dict__", "sys.modules")
# The calls by which a script starts or joins the ranks, by their last name.
_RANK_STARTS = frozenset(spelling.rpartition(".")[2] for api in (INIT_PROCESS_GROUP, SPAWN, START_PROCESSES) for spelling in api)
_CLI = "LightningCLI"  # Lightning's command line: it builds the model class its arguments name
MAX_NOTEBOOKS = 200
MAX_NOTEBOOK_BYTES = 5_000_000


class Reach:
    """The code a project's entry points reach (see the module doc)."""

    def __init__(self, project) -> None:
        self.project = project
        # What `may_use` has read so far: the names, whether a reached module could
        # not be read (then every name may be used), whether the notebooks are read.
        self._names_read: set[str] = set()
        self._unknown = False
        self._notebooks_read = False
        self._names_of: dict[str, set[str] | None] = {}  # per reached module (`_names`)
        self._imported_names: dict[str, bool] = {}  # `_imported_by_name`'s answers, by module (the texts do not change)
        self._closures: dict[str, set[str]] = {}  # `_imported_closure`'s answers
        self._calls_of: dict[str, tuple[set[str], set[str]] | None] = {}  # `called_names_in` per reached module
        self._unguarded_of: dict[str, bool] = {}  # `_unguarded`'s answers, by module
        self._misses: dict[tuple[str, str, str], bool] = {}  # `_calls_miss`'s answers

    @functools.cached_property
    def training(self) -> bool:
        """Whether the project has scripts that start processes (a `__main__` script that says
        distribution, or one whose top-level code starts the process group), or commands that
        launch them (`torchrun train.py` in a shell script or a document): only there is code that
        no entry point reaches known not to run."""
        if self.project.texts:
            return False
        modules = self.project.modules
        if any(facts.get("main") and facts["dist"] for facts in modules.values()) or self.project.launch_commands:
            return True
        return any(facts["dist"] and self._starts_ranks_at_top_level(module) for module, facts in modules.items())

    def _starts_ranks_at_top_level(self, module: str) -> bool:
        """Whether the module's own code, outside its definitions, starts or joins ranks
        (`dist.init_process_group("gloo", ...)` at the top of a script with no `__main__` guard).
        Parsed only where its text names such a call (`may_name`): most modules that say
        distribution only ask for the rank."""
        program = self.project.program
        text = program.read(module)
        if text is None or not may_name(text, _RANK_STARTS):
            return False
        tree = program.tree(module, text)
        return tree is not None and any(
            isinstance(node, ast.Call) and last_name(node.func) in _RANK_STARTS for node in _outside_definitions(tree.body)
        )

    @functools.cached_property
    def installs_packages(self) -> bool:
        """Whether the project declares a package to install, or is one installed (a wheel's or an
        sdist's metadata beside it): its public names are its users' to call."""
        root = self.project.root
        try:
            if any(name.endswith((".dist-info", ".egg-info")) or name == "PKG-INFO" for name in os.listdir(root)):
                return True
        except OSError:
            return True
        for name in _PACKAGING:
            try:
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except OSError:
                continue
            if name != "pyproject.toml" or "[project]" in text or "[tool.poetry]" in text or "[tool.setuptools" in text:
                return True
        return False

    @functools.cached_property
    def entries(self) -> list[str]:
        """The entry modules: scripts, tests, and the modules console scripts name."""
        found = list(self._named_entries)
        if self.training:  # only there is reach asked; a script run by hand (`python tools/x.py`) counts too
            found += [module for module in self.project.modules if module not in self._named_entries and self._unguarded(module)]
        return found

    def is_entry(self, module: str) -> bool:
        """Whether `module` is one of `entries`, read from its own text alone: a question about one
        script reads no other module for top-level work (torch's tree has 650 such modules)."""
        return module in self._named_entries or self.training and self._unguarded(module)

    @functools.cached_property
    def _named_entries(self) -> dict[str, None]:
        """The entries that need no reading of a module's code (its facts, path, a console script
        or a launch command name it), in order."""
        project, found = self.project, {}
        for module, facts in project.modules.items():
            relative = project.relpaths[module].replace(os.sep, "/")
            if facts.get("main") or project.is_test_path(relative):
                found[module] = None
        for module in (*self._console_modules(), *self._launched_modules()):
            found.setdefault(module)
        return found

    def _unguarded(self, module: str) -> bool:
        """`_unguarded_script`, kept per module (`entries` and `is_entry` both ask)."""
        if module not in self._unguarded_of:
            self._unguarded_of[module] = self._unguarded_script(module)
        return self._unguarded_of[module]

    def _launched_modules(self) -> list[str]:
        """The modules the project's launch commands run (`torchrun --nproc_per_node 8
        pretrain/main.py`, `python -m pkg.train`), matched by the end of their path."""
        project, found = self.project, []
        by_path = {relative.replace(os.sep, "/"): module for module, relative in project.relpaths.items()}
        for command in project.launch_commands:
            for script in _SCRIPT.findall(command.command):
                script = script.rpartition("}")[2].lstrip("./") if "/" in script or "}" in script else script
                found += [module for path, module in by_path.items() if path == script or path.endswith("/" + script)]
            for dotted_module in _RUN_MODULE.findall(command.command):
                module = project.module(dotted_module)
                if module is not None:
                    found.append(module)
        return found

    def _console_modules(self) -> list[str]:
        return [module for module, _ in self._console_scripts if self.project.module(module) is not None]

    @functools.cached_property
    def _console_scripts(self) -> list[tuple[str, str]]:
        """(module, function) of each console script the packaging files declare."""
        found = []
        for name in _PACKAGING:
            try:
                with open(os.path.join(self.project.root, name), encoding="utf-8", errors="replace") as handle:
                    found += _CONSOLE_SCRIPT.findall(handle.read())
            except OSError:
                continue
        return found

    @functools.cached_property
    def reached(self) -> set[str]:
        """The modules the entry points import, at any depth, and themselves."""
        return _imported_at_any_depth(self.project, self.entries)

    def may_use(self, name: str) -> bool:
        """Whether code that runs may use `name`: some reached module uses it (a Name, an
        attribute, an imported name, a string that is an identifier), or a notebook does; True
        where that is not known (a reached module cannot be read). The modules are read in
        sorted order only until one uses `name`: most questions (a function that runs) are
        answered by the first few, where reading all of them cost 808 modules' `ast` on the pip
        packages for ten findings. A module left unread is not consulted: the answer holds
        whatever it says."""
        while name not in self._names_read:
            if self._unknown:
                return True
            if not self._read_next():
                return self._unknown
        return True

    def users(self, name: str) -> list[str] | None:
        """The reached modules whose code names `name` (as `may_use` reads names), sorted; None
        where that is not known: a reached module cannot be read, or a notebook names it (a
        notebook's cells are not modules the model follows)."""
        found = []
        for module in sorted(self.reached):
            names = self._names(module)
            if names is None:
                return None
            if name in names:
                found.append(module)
        if name in self._notebook_names:
            return None
        return found

    def _names(self, module: str) -> set[str] | None:
        """`names_in` of a reached module, None where it cannot be read; kept: `users` and
        `may_use` read the same modules (on the pip packages 758 of them were parsed twice)."""
        if module not in self._names_of:
            tree = self.project.program.tree(module)
            self._names_of[module] = names_in(tree) if tree is not None else None
        else:
            self.project.program.mark_read(module)  # as `tree` does: the answer rests on the module
        return self._names_of[module]

    @functools.cached_property
    def _unread(self) -> list[str]:
        return sorted(self.reached, reverse=True)  # popped from the end: in sorted order

    def _read_next(self) -> bool:
        """Read one more reached module (after the last, the notebooks) into `_names_read`;
        False when nothing is left to read, or a module could not be read (`_unknown`)."""
        if self._unknown:
            return False
        if self._unread:
            names = self._names(self._unread.pop())
            if names is None:
                self._unknown = True
                return False
            self._names_read.update(names)
            return True
        if not self._notebooks_read:
            self._notebooks_read = True
            self._names_read.update(self._notebook_names)
            return True
        return False

    @functools.cached_property
    def _notebook_names(self) -> set[str]:
        """The names the project's notebooks use (their code cells, read by text)."""
        names: set[str] = set()
        for source in self._notebook_sources:
            names.update(re.findall(r"[A-Za-z_]\w*", source))
        return names

    @functools.cached_property
    def _notebook_sources(self) -> list[str]:
        """The code cells of the project's notebooks, each as one text."""
        sources: list[str] = []
        count = 0
        for folder, files in self.project.folders():
            for name in files:
                if not name.endswith(".ipynb") or count >= MAX_NOTEBOOKS:
                    continue
                count += 1
                path = os.path.join(folder, name)
                try:
                    if os.path.getsize(path) > MAX_NOTEBOOK_BYTES:
                        continue
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        cells = json.load(handle).get("cells", [])
                except (OSError, ValueError, AttributeError):
                    continue
                for cell in cells if isinstance(cells, list) else ():
                    if isinstance(cell, dict) and cell.get("cell_type") == "code":
                        source = cell.get("source", "")
                        sources.append("".join(source) if isinstance(source, list) else str(source))
        return sources

    def never_runs(self, module: str, scope: tuple[tuple[str, bool, bool], ...]) -> bool:
        """Whether code of `module` inside `scope` never runs: the definitions around it, outermost
        first, as (name, is a class, is decorated); () for the module's own code. Only in a
        training project, and only where every step is known (see the module doc)."""
        if not self.training or self.public(module, scope):
            return False
        if self.is_entry(module):
            return bool(scope) and (
                self._unused_in_script(module, scope[0]) or self._method_never_called(module, scope) or self._never_built(module, scope)
            )
        if module not in self.reached:  # unless an import by string may reach it (`import_module("models." + name)`)
            name = module.rpartition(".")[2]  # (a notebook's imports are not followed: its names are kept)
            named = self._imports_by_string and self.may_use(name) or name in self._notebook_names or self._imported_by_name(module)
            named = named or any(module == dotted or module.endswith("." + dotted) for dotted in self.project.documented_imports)
            return not named and not self._unguarded_script(module)
        if not scope:
            return False
        name, is_class, decorated = scope[0]
        if decorated or is_class and self._cli_may_pick(module, name):
            return False
        if not self.may_use(name) or self._method_never_called(module, scope) or self._never_built(module, scope):
            return True
        return not is_class and self._names_another_copy(module, name)

    def replaced(self, module: str, line: int) -> bool:
        """Whether `line` of `module` lies in the body of a top-level function that the module defines again
        later at its top level (summary.replaced_definitions), and that nothing can call before
        it is replaced: it is not decorated (a decorator may register it), and the statements
        between it and the last definition neither name it nor call, outside function bodies, a
        name this module defines (a call at import that may reach it). Calls through the name
        reach the last definition; this one never runs."""
        tree = self.project.program.tree(module)
        if tree is None:
            return False
        # only the body: the header's defaults, annotations and decorators run when the `def`
        # statement itself runs, replaced later or not (a CUDA tensor in a default is made then)
        replaced = [node for node in replaced_definitions(tree) if node.body[0].lineno <= line <= (node.end_lineno or node.lineno)]
        if not replaced or replaced[0].decorator_list:
            return False
        first = replaced[0]
        last = next(node for node in reversed(tree.body) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == first.name)
        between = [node for node in tree.body if first.lineno < node.lineno < last.lineno]
        # what the module's own code binds: its functions and classes, and the objects it makes
        # (`trainer = Trainer()`, then `trainer.run()`), which may call it
        defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        defined |= {
            node.id for statement in tree.body for node in _executed_at_import(statement)
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
        }
        return not any(first.name in names_said(node) for node in between) and not any(
            isinstance(call, ast.Call) and ({last_name(call.func), _root_name(call.func)} & defined)
            for node in between for call in _executed_at_import(node)
        )

    def _method_never_called(self, module: str, scope: tuple[tuple[str, bool, bool], ...]) -> bool:
        """Whether `scope` lies in a method that no code that runs calls: a method the top-level
        class defines itself, neither decorated nor a dunder, of a class whose bases are all
        project classes of that kind (or `object`: no framework calls it back, as torch calls
        a Module's `forward`), whose name no reached module, notebook or command says other than
        as an attribute of an imported module (`torch.load` is no call of `Fitter.load`), and
        that no lookup by a name built at run time may reach (`getattr(self, "do_" + cmd)`)."""
        if len(scope) < 2 or not scope[0][1] or scope[1][1]:
            return False
        (cls, _, _), (method, _, decorated) = scope[0], scope[1]
        if decorated or method.startswith("__") or method in self._command_names:
            return False
        # only the project's own code calls its methods, by their names, on objects of the class
        return self._plain_method(module, cls, method) and (not self._may_call(method, module) or self._calls_miss(module, cls, method))

    def _calls_miss(self, module: str, cls: str, method: str) -> bool:
        """Whether every `.method` that code running with `module` says is one on an object that
        cannot be one of class `cls` (or of a class derived from it): `self.method` and
        `super().method` in a class that is not of the family, nor a base of one; and, where no
        object of the family can be where the code does not show it (`_Receivers.escapes`), any
        receiver but a name that holds one. Not where a module cannot be read, names `method`
        as a string, looks names up by one it builds or dispatches by name, nor where a notebook
        may call it. A lookup by a name built at run time that may be `method` (`getattr(obj,
        f"do_{x}")`) is a `.method` on its object."""
        if (module, cls, method) not in self._misses:
            self._misses[module, cls, method] = self._receivers_miss(module, cls, method)
        return self._misses[module, cls, method]

    def _receivers_miss(self, module: str, cls: str, method: str) -> bool:
        """`_calls_miss`, worked out."""
        index = self._class_index
        if index is None or self._imports_by_string:
            return False
        family = _family(index, cls)
        related = family | _ancestors(index, family)
        unknown = escapes = False
        for caller in self._run_with(module):
            calls, names = self._calls(caller), self._names(caller)
            if calls is None or names is None:
                return False
            if method not in calls[0] and not any(re.fullmatch(pattern, method) for pattern in calls[1]) and not (
                related & (names | index.holds.get(caller, set()))
            ):
                continue  # says neither the method nor a class of the family or its bases, defines none
            tree = self.project.program.tree(caller)
            if tree is None:
                return False
            found = _Receivers(tree, method, family, related)
            if found.reaches:
                return False
            unknown = unknown or found.unknown
            escapes = escapes or found.escapes or any(self.users(name) != [caller] for name in found.module_holders)
            if unknown and escapes:
                return False
        name = re.escape(module.rpartition(".")[2])
        imports = re.compile(rf"^[ \t]*(?:from|import|%run)[ \t][^\n]*(?<![\w.]){name}\b", re.MULTILINE)
        return not any(imports.search(source) for source in self._notebook_sources)

    def _plain_method(self, module: str, cls: str, method: str) -> bool:
        """Whether `method` is one that class `cls` of `module` defines itself, and the class
        derives from project classes only (or `object`): no framework builds it or calls it back."""
        program = self.project.program
        summary = program.summary(module)
        if summary is None or f"{cls}.{method}" not in summary.functions:
            return False
        return bases_hold(program, module, cls, lambda where, base: (program.qualify(where, base) or base) == "object")

    def _never_built(self, module: str, scope: tuple[tuple[str, bool, bool], ...]) -> bool:
        """Whether `scope` lies in a method (neither decorated nor a hook Python runs on the class
        itself) of a top-level, undecorated class of `module` that no code that runs instantiates:
        the class derives from project classes only (or `object`: no framework builds it), and
        neither its name nor that of a class of the reached modules derived from it (by the last
        name of a base, at any depth) is said in a reached module, a notebook or a command other
        than as a `class` statement's base or in an import that keeps the name; none of these
        classes is decorated or has a keyword in its bases (`metaclass=`: it may register them);
        and no lookup by a name built at run time may pick one: no module whose namespace holds
        one (it defines or imports it, or imports with `*` from a module that holds one) looks its
        own namespace up (`globals()[name]`, `__dict__`), and where a reached module looks a name up by a value
        (`getattr(obj, name)`), none of those modules is bound as a module object by an import,
        nor is a module imported by a built name and kept (`importlib.import_module(x).Writer`,
        read by a literal name, keeps nothing)."""
        if len(scope) < 2 or not scope[0][1] or scope[0][2] or scope[1][1] or scope[1][2] or scope[1][0] in _CLASS_HOOKS:
            return False
        (cls, _, _), (method, _, _) = scope[0], scope[1]
        index = self._class_index if self._plain_method(module, cls, method) else None
        if index is None:
            return False
        family, pending = {cls}, [cls]
        while pending:
            base = pending.pop()
            for derived in index.derived.get(base, ()):
                if derived not in family:
                    family.add(derived)
                    pending.append(derived)
        if family & (index.used | index.special | self._notebook_names | self._command_names):
            return False
        holders = {other for other, held in index.holds.items() if held & family}
        while True:  # and the modules importing with `*` from one of them
            more = {other for other, sources in index.stars.items() if sources & holders} - holders
            if not more:
                break
            holders |= more
        if holders & index.dispatches:
            return False
        return not (index.lookups and (holders & index.module_objects or index.kept_imports))

    @functools.cached_property
    def _class_index(self) -> _ClassIndex | None:
        """`_ClassIndex` of the reached modules; None where one cannot be read."""
        index = _ClassIndex()
        modules = set(self.project.program.modules())
        for module in sorted(self.reached):
            tree = self.project.program.tree(module)
            text = self.project.program.read(module)
            if tree is None or text is None:
                return None
            index.add(module, tree, text, self._package(module), modules)
        return index

    def _may_call(self, method: str, module: str) -> bool:
        """Whether code that runs with `module` may call a method named `method`: `called_names_in`
        of every module of the runs that reach `module` (the import closures of the entry points
        that hold it: another script's `fitter.load(...)` calls its own class), and of the
        notebooks' cells where one imports `module`; True where a module cannot be read."""
        for caller in self._run_with(module):
            if _may_name_method(self._calls(caller), method):
                return True
        name = re.escape(module.rpartition(".")[2])
        imports = re.compile(rf"^[ \t]*(?:from|import|%run)[ \t][^\n]*(?<![\w.]){name}\b", re.MULTILINE)
        return any(imports.search(source) for source in self._notebook_sources) and _may_name_method(self._notebook_calls, method)

    def _calls(self, module: str) -> tuple[set[str], set[str]] | None:
        """`called_names_in` of `module`, kept; None where it cannot be read or dispatches by name."""
        if module not in self._calls_of:
            program = self.project.program
            tree = program.tree(module)
            text = program.read(module) or ""
            dispatches = any(dispatch in text for dispatch in _NAME_DISPATCH)
            self._calls_of[module] = None if tree is None or dispatches else called_names_in(tree)
        return self._calls_of[module]

    def _run_with(self, module: str) -> list[str]:
        """The modules that run in one process with `module`: the import closures of the entry
        points that hold it, sorted; every reached module where code that runs may import by a
        name it builds."""
        if self._imports_by_string:
            return sorted(self.reached)
        found: set[str] = set()
        for entry in self.entries:
            closure = self._imported_closure(entry)
            if module in closure:
                found |= closure
        return sorted(found)

    @functools.cached_property
    def _notebook_calls(self) -> tuple[set[str], set[str]]:
        """`called_names_in` of the notebooks' code cells (one that does not parse: every word
        it says, comments too)."""
        names: set[str] = set()
        patterns: set[str] = set()
        for source in self._notebook_sources:
            kept = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))
            try:
                found = called_names_in(ast.parse(kept))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                names.update(re.findall(r"[A-Za-z_]\w*", source))
                continue
            names |= found[0]
            patterns |= found[1]
        return names, patterns

    def _names_another_copy(self, module: str, name: str) -> bool:
        """Whether every reached module that names top-level function `name` of `module` names
        another function of that name: its imports, at any depth, reach another module that
        defines `name` and never `module` (a folder's own copy of a helper module, `utils/misc.py`
        beside `bmb/misc.py`). `module`'s own `__all__` naming it is no use. Not where code that
        runs may import by a name it builds, nor where a notebook names it."""
        if self._imports_by_string:
            return False
        users = self.users(name)
        if not users:
            return False
        defines = self.project.top_level_defs
        for user in users:
            if user == module:
                if self._uses_beyond_all(module, name):
                    return False
                continue
            closure = self._imported_closure(user)
            if module in closure or not any(other != module and name in defines(other) for other in closure):
                return False
        return True

    def _uses_beyond_all(self, module: str, name: str) -> bool:
        """Whether `module` names `name` other than in its `__all__`."""
        tree = self.project.program.tree(module)
        if tree is None:
            return True
        kept = [node for node in tree.body if not (
            isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            and any(isinstance(target, ast.Name) and target.id == "__all__"
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target])))]
        return name in names_in(ast.Module(body=kept, type_ignores=[]))

    def _imported_closure(self, module: str) -> set[str]:
        """`module` and the project modules it imports, at any depth."""
        found = self._closures.get(module)
        if found is None:
            found = self._closures[module] = _imported_at_any_depth(self.project, [module])
        return found

    def _cli_may_pick(self, module: str, cls: str) -> bool:
        """Whether a LightningCLI of code that runs may run project class `cls` of `module`: one
        in subclass mode (`subclass_mode_model=True`, or no model class given) runs whichever
        LightningModule (or LightningDataModule) subclass its `--model` (`--data`) or YAML names."""
        if not self._subclass_mode_cli:
            return False
        program = self.project.program
        return program.derives_from(module, cls, LIGHTNING_MODULE) or program.derives_from(module, cls, LIGHTNING_DATA_MODULE)

    @functools.cached_property
    def _subclass_mode_cli(self) -> bool:
        """Whether a reached module builds a LightningCLI in subclass mode (see `_cli_may_pick`)."""
        program = self.project.program
        for module in sorted(self.reached):
            text = program.read(module)
            tree = program.tree(module) if text is not None and _CLI in text else None
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.Call) and last_name(node.func) == _CLI and _subclass_mode(node):
                    return True
        return False

    @functools.cached_property
    def _imports_by_string(self) -> bool:
        """Whether code that runs may import a module by a name it builds: a reached module
        calls an import machinery, or one cannot be read. Without one, a module no reached
        module imports is not run, whatever words the code says (`config`, `utils`)."""
        program = self.project.program
        texts = [program.read(module) for module in self.reached]
        return any(text is None or any(word in text for word in _DYNAMIC_IMPORTS) for text in texts)

    def _imported_by_name(self, module: str) -> bool:
        """Whether an import statement of a reached module may name `module` by its last name
        (`from train import *`, `from training.monosdf_train import Runner`, also one inside a
        function): an import the model could not resolve (a folder put on `sys.path` at run
        time) may still reach a module so named. Not a statement whose dotted path up to that
        name is no ending of `module`'s (`from utils.misc import f` never imports `bmb/misc.py`).
        Read in the texts, asked only of modules nothing reached imports."""
        if module not in self._imported_names:
            name = module.rpartition(".")[2]
            said = re.compile(rf"^[ \t]*(?:from|import)[ \t][^\n]*(?<!\w){re.escape(name)}\b[^\n]*", re.MULTILINE)
            self._imported_names[module] = any(
                text is None or any(_may_name(line.group(0), name, module, self._package(importer)) for line in said.finditer(text))
                for importer, text in ((importer, self.project.program.read(importer)) for importer in sorted(self.reached))
            )
        return self._imported_names[module]

    def _package(self, module: str) -> str:
        """The package a module's relative imports start from."""
        relative = self.project.relpaths[module].replace(os.sep, "/")
        return module if relative.endswith("__init__.py") else module.rpartition(".")[0]

    def _unused_in_script(self, module: str, outermost: tuple[str, bool, bool]) -> bool:
        """Whether a top-level definition of an entry script is one that running the script never
        reaches: no code that runs, no notebook and no launch or console-script command names it,
        it is not decorated, and the script does not hand its names to a dispatcher
        (`fire.Fire()`, `globals()[name]`)."""
        name, _, decorated = outermost
        if decorated or self.may_use(name) or name in self._command_names:
            return False
        text = self.project.program.read(module)
        return text is not None and not any(dispatch in text for dispatch in _NAME_DISPATCH)

    @functools.cached_property
    def _command_names(self) -> set[str]:
        """The identifiers of the project's launch commands and console-script declarations
        (`python -c "from train import finetune; finetune()"`, `train = "pkg.cli:main"`)."""
        names: set[str] = set()
        for command in self.project.launch_commands:
            names.update(re.findall(r"[A-Za-z_]\w*", command.command))
        for _, function in self._console_scripts:
            names.update(function.split("."))
        return names

    def _unguarded_script(self, module: str) -> bool:
        """Whether `module` is a script without a `__main__` guard: no project module imports it
        and its own code works at the top level. In a module that defines functions or classes,
        a call that only sets up an imported module (`wandb.init(project="x")`,
        `sys.path.append(os.path.dirname(__file__))`) is no work: importing the module does it,
        and running it would do nothing more (a trainer copy nothing imports)."""
        program = self.project.program
        if program.importers_of(module):
            return False
        text = program.read(module)
        if text is not None and not _TOP_LEVEL_WORK.search(text):
            return False  # not parsed: most modules of a package are definitions and imports
        tree = program.tree(module, text)
        if tree is None:
            return True
        defines = any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for node in tree.body)
        modules = _imported_modules(tree) if defines else set()
        return any(
            isinstance(node, (ast.For, ast.While, ast.With))
            or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not _sets_up(node.value, modules))
            for node in tree.body
        )

    def public(self, module: str, scope: tuple[tuple[str, bool, bool], ...]) -> bool:
        """Whether users of an installed package may call it: the project installs packages, the
        module is in one, and neither it nor the outermost definition is private."""
        if not self.installs_packages or not self._importable(module):
            return False
        name = scope[0][0] if scope else ""
        return not name.startswith("_") and not any(part.startswith("_") and part != "__init__" for part in module.split("."))

    def _importable(self, module: str) -> bool:
        """Whether the module is in a package (its folder has an __init__.py)."""
        return "." in module or self.project.relpaths[module].replace(os.sep, "/").endswith("__init__.py")


def _imported_at_any_depth(project, modules: list[str]) -> set[str]:
    """`modules` and the project modules they import, at any depth."""
    seen, pending = set(modules), list(modules)
    while pending:
        for imported in project.imports_of(pending.pop()):
            if imported not in seen:
                seen.add(imported)
                pending.append(imported)
    return seen


def _may_name(statement: str, name: str, module: str, package: str) -> bool:
    """Whether the import `statement` of a module of `package`, which says `name`, may import
    `module` (whose last name is `name`): the dotted path it names up to `name` (`from
    utils.misc import f`: `utils.misc`; `from bmb import misc`: `bmb.misc`) and `module`'s, one ends the other;
    a relative one (`from .misc import *`) names the module of its own package."""
    words = statement.split()
    if words[0] == "from" and len(words) > 1:
        level = len(words[1]) - len(words[1].lstrip("."))
        parts = [part for part in words[1].split(".") if part]
        parts = parts[: parts.index(name) + 1] if name in parts else [*parts, name]
        if level:
            base = package.split(".")[: max(len(package.split(".")) - level + 1, 0)] if package else []
            return module == ".".join([*base, *parts])
    else:
        tokens = re.findall(r"[\w.]+", statement.partition("import")[2])
        parts = next((token.split(".") for token in tokens if name in token.split(".")), [name])
        parts = parts[: parts.index(name) + 1]
    dotted = ".".join(parts)  # (the project may itself be a folder of the path: `training.config`)
    return module == dotted or module.endswith("." + dotted) or dotted.endswith("." + module)


class _ClassIndex:
    """What the reached modules say of their classes, for `Reach._never_built`: the classes
    derived from each base (by the base's last name), the names said other than as a base or in
    an import that keeps the name, the classes decorated or with a keyword in their bases, the
    names each module's namespace holds (its classes and the names it imports), the modules each
    imports with `*`, the modules that look their own namespace up, bound as module objects by an import, and
    whether a module looks a name up by a value or keeps a module imported by a built name."""

    def __init__(self) -> None:
        self.derived: dict[str, set[str]] = {}
        self.used: set[str] = set()
        self.special: set[str] = set()
        self.holds: dict[str, set[str]] = {}
        self.stars: dict[str, set[str]] = {}  # the modules each module imports with `*`
        self.dispatches: set[str] = set()
        self.module_objects: set[str] = set()
        self.lookups = False
        self.kept_imports = False

    def add(self, module: str, tree: ast.Module, text: str, package: str, modules: set[str]) -> None:
        held = self.holds.setdefault(module, set())
        bases: set[int] = set()  # the base expressions of class statements: no use of the name
        read: set[int] = set()  # calls whose result is read by a literal attribute
        for node in nodes(tree):
            if isinstance(node, ast.ClassDef):
                held.add(node.name)
                bases.update(id(base) for base in node.bases)
                if node.decorator_list or node.keywords:
                    self.special.add(node.name)
                for base in node.bases:
                    last = last_name(base)
                    if last is not None:
                        self.derived.setdefault(last, set()).add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
                read.add(id(node.value))
        for node in nodes(tree):
            if isinstance(node, ast.Name) and id(node) not in bases:
                self.used.add(node.id)
            elif isinstance(node, ast.Attribute) and id(node) not in bases:
                self.used.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                self.used.add(node.value)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    self.module_objects.update(".".join(parts[: i + 1]) for i in range(len(parts)))
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node, package)
                for alias in node.names:
                    if alias.name == "*":
                        self.stars.setdefault(module, set()).add(source)
                        continue
                    held.add(alias.asname or alias.name)
                    if alias.asname not in (None, alias.name):
                        self.used.add(alias.name)  # renamed: the new name is what the code says
                    if f"{source}.{alias.name}".strip(".") in modules:
                        self.module_objects.add(f"{source}.{alias.name}".strip("."))
            elif isinstance(node, ast.Call):
                last = last_name(node.func)
                if last in _LOOKUPS and len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant):
                    self.lookups = True
                elif last in _IMPORT_CALLS and id(node) not in read:
                    self.kept_imports = True
        if any(lookup in text for lookup in _NAMESPACE_LOOKUPS):
            self.dispatches.add(module)
            self.lookups = True


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a `from` import reads, absolute: `from .single import x` in package `trainer`."""
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    parts = parts[: len(parts) - node.level + 1] if node.level > 1 else parts
    return ".".join([*parts, *([node.module] if node.module else [])])


def _root_name(func: ast.expr) -> str | None:
    """The name a callee's dotted chain starts from (`trainer` of `trainer.run`)."""
    while isinstance(func, (ast.Attribute, ast.Call, ast.Subscript)):
        func = func.value if not isinstance(func, ast.Call) else func.func
    return func.id if isinstance(func, ast.Name) else None


def _subclass_mode(call: ast.Call) -> bool:
    """A LightningCLI call that lets its command line or YAML pick any subclass: the model or the
    data class in subclass mode, or no model class given (then any LightningModule)."""
    keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
    if any(isinstance(value, ast.Constant) and value.value is True
           for key, value in keywords.items() if key in ("subclass_mode_model", "subclass_mode_data")):
        return True
    return not call.args and "model_class" not in keywords and None not in (k.arg for k in call.keywords)


def names_in(tree: ast.Module) -> set[str]:
    """Every name a module's code says: names, attributes, imported names and their dotted
    parts, and identifier-like strings (a name looked up by its string)."""
    names: set[str] = set()
    for node in nodes(tree):  # (ast.walk's nodes of these kinds, without contexts and operators: faster)
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.rpartition(".")[2])
            names.update(node.name.split("."))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(node.module.split("."))  # a module an import the index cannot resolve names
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)
    return names


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_OWN_SCOPES = (*_FUNCTIONS, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# The calls that look a name up by a value (`getattr(module, name)`, `globals()[name]`).
_LOOKUPS = frozenset(("getattr", "hasattr", "globals", "locals", "vars", "eval", "exec", "attrgetter", "methodcaller"))


def names_said(tree: ast.AST) -> set[str]:
    """`names_in`, less what names no top-level definition: a name read where a function binds
    it itself (Python's scopes: `run = wandb.init()` in `main` binds main's own `run`, and every
    `run` main and the functions nested in it read is that one, not the module's `def run`), and
    a string that is a parameter's default in a function that looks nothing up by a value
    (`exp_name: str = "run"` is the value the parameter gets, no lookup of a function)."""
    names: set[str] = set()
    pending: list[tuple[ast.AST, frozenset[str]]] = [(tree, frozenset())]
    while pending:
        node, shadowed = pending.pop()
        if isinstance(node, _FUNCTIONS):
            pending.extend((outer, shadowed) for outer in _evaluated_outside(node))
            bound, declared = _locals(node)
            inner = (shadowed - declared) | bound
            pending.extend((statement, inner) for statement in (node.body if isinstance(node.body, list) else [node.body]))
            continue
        if isinstance(node, ast.Name):
            if node.id not in shadowed:
                names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.alias, ast.ImportFrom, ast.Constant)):
            names |= names_in(node)  # type: ignore[arg-type]
        pending.extend((child, shadowed) for child in ast.iter_child_nodes(node))
    return names


def _evaluated_outside(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.expr]:
    """What of a function's definition runs in the scope around it: its decorators, its
    annotations and its defaults, less the string defaults of a function whose body looks
    nothing up by a value (`_LOOKUPS`: only such a lookup could take the string for a name)."""
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *filter(None, (arguments.vararg, arguments.kwarg))]
    defaults = [*arguments.defaults, *filter(None, arguments.kw_defaults)]
    looks_up = any(isinstance(node, ast.Call) and last_name(node.func) in _LOOKUPS for node in nodes(function))
    outside: list[ast.expr] = [d for d in defaults if looks_up or not (isinstance(d, ast.Constant) and isinstance(d.value, str))]
    outside += [argument.annotation for argument in every if argument.annotation is not None]
    if not isinstance(function, ast.Lambda):
        outside += [*function.decorator_list, *filter(None, [function.returns])]
    return outside


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> tuple[frozenset[str], frozenset[str]]:
    """The names a function binds in its own scope (its parameters, assignment, loop, `with`,
    `except` and import targets, the functions and classes it defines), and those it declares
    `global` or `nonlocal`. The scopes of its own inner functions, classes and comprehensions
    are not read: a name bound only there is no local of it (fewer locals hide no name)."""
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *filter(None, (arguments.vararg, arguments.kwarg))]
    bound, declared = {argument.arg for argument in every}, set()
    pending: list[ast.AST] = list(function.body) if isinstance(function.body, list) else [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            continue
        if isinstance(node, _OWN_SCOPES):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.alias) and node.name != "*":
            bound.add(node.asname or node.name.partition(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        pending.extend(ast.iter_child_nodes(node))
    return frozenset(bound - declared), frozenset(declared)


def may_name(text: str, names) -> bool:
    """Whether code of `text` may say one of the identifiers `names`: its text holds one, as
    Python reads identifiers (NFKC: `\uff49nit` is `init`), so a tree without a text match has no
    such Name or attribute and need not be parsed."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return any(name in text for name in names)


def _imported_modules(tree: ast.Module) -> set[str]:
    """The names a module's top-level `import x` / `import x.y as z` statements bind to modules."""
    return {alias.asname or alias.name.partition(".")[0] for node in tree.body if isinstance(node, ast.Import) for alias in node.names}


def _sets_up(call: ast.Call, modules: set[str]) -> bool:
    """Whether a top-level call only sets up imported modules: a setup call of `_SETUP_CALLS`
    on one of `modules`, every other name it says one of them or a dunder (`__file__`), the
    rest literals (`wandb.init(project="x")`, `torch.manual_seed(0)`); not `main()`,
    `train(args)`, `print(helper(x))`, `fire.Fire()` nor `os.system("torchrun ...")`."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in _SETUP_CALLS:
        return False
    return all(
        node.id in modules or node.id.startswith("__")
        for node in ast.walk(call)
        if isinstance(node, ast.Name)
    )


def _executed_at_import(statement: ast.stmt):
    """The nodes of a top-level statement that run when the module is imported: all but the
    bodies of the functions (and lambdas) it defines; their decorators, defaults and a class's
    own body run."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending += [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        elif isinstance(node, ast.Lambda):
            pending += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        else:
            pending += list(ast.iter_child_nodes(node))


def _outside_definitions(body: list):
    """The nodes of the statements `body` holds, not of the functions and classes defined in
    them (`if HAS_XLA:` then a class whose methods spawn: defining it starts nothing)."""
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    pending = [statement for statement in body if not isinstance(statement, definitions)]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, definitions))


def called_names_in(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names by which a module's code may call a method: `names_in`, less the attributes
    of a name that only `import` statements bind (`torch.load`, `json.load`: a module's
    function); and the patterns of the names its `getattr` calls build at run time
    (`getattr(self, f"w_{i}")`: `w_.*`; a name not built from a literal: `.*`)."""
    modules = {alias.asname or alias.name.partition(".")[0] for node in nodes(tree) if isinstance(node, ast.Import) for alias in node.names}
    modules -= _bound_otherwise(tree)
    names: set[str] = set()
    patterns: set[str] = set()
    for node in nodes(tree):
        if isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id in modules):
                names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.rpartition(".")[2])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)
        elif isinstance(node, ast.Call) and last_name(node.func) in _LOOKUPS and len(node.args) >= 2:
            built = _built_name(node.args[1])
            if built is not None:
                patterns.add(built)
    return names, patterns


# Calls that look an attribute up by a name given as a value.
_LOOKUPS = frozenset({"getattr", "hasattr", "attrgetter", "methodcaller"})


def _bound_otherwise(tree: ast.Module) -> set[str]:
    """The names a module binds other than by `import x`: assignments, parameters, definitions,
    `from` imports (a module's name so bound may be an object)."""
    found: set[str] = set()
    for node in nodes(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            found.update(alias.asname or alias.name for alias in node.names)
    return found


def _built_name(expr: ast.expr) -> str | None:
    """The pattern of the names a lookup's name argument may be: None for a literal (`names_in`
    keeps it), the literal parts with anything between for a name built from one
    (`f"w_{i}"`, `"w_{}".format(i)`, `"do_" + cmd`), `.*` for any other value."""
    if isinstance(expr, ast.Constant):
        return None
    parts: list[str] = []
    if isinstance(expr, ast.JoinedStr):
        parts = [str(value.value) if isinstance(value, ast.Constant) else "" for value in expr.values]
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format":
        template = expr.func.value
        parts = re.split(r"\{[^}]*\}", template.value) if isinstance(template, ast.Constant) and isinstance(template.value, str) else []
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        parts = [side.value if isinstance(side, ast.Constant) and isinstance(side.value, str) else "" for side in (expr.left, expr.right)]
    return ".*".join(re.escape(part) for part in parts) if any(parts) else ".*"


def _may_name_method(calls: tuple[set[str], set[str]] | None, method: str) -> bool:
    """Whether a module's `called_names_in` (None: not known) may call `method`."""
    if calls is None:
        return True
    names, patterns = calls
    return method in names or any(re.fullmatch(pattern, method) for pattern in patterns)


def bases_hold(program, module: str, cls: str, external, depth: int = 0) -> bool:
    """Whether every base of project class `cls` of `module`, at any depth, is a project class or
    one that `external(module, base)` accepts (the base as written in that module)."""
    summary = program.summary(module)
    record = summary.classes.get(cls) if summary is not None and depth < 8 else None
    if record is None:
        return False
    for base in record.bases:
        made = program.class_of(module, base)
        if made is None and not external(module, base) or made is not None and not bases_hold(program, *made, external, depth + 1):
            return False
    return True


def _family(index: _ClassIndex, cls: str) -> set[str]:
    """`cls` and the classes of the reached modules derived from it at any depth (by the last name of a base)."""
    family, pending = {cls}, [cls]
    while pending:
        for derived in index.derived.get(pending.pop(), ()):
            if derived not in family:
                family.add(derived)
                pending.append(derived)
    return family


def _ancestors(index: _ClassIndex, classes: set[str]) -> set[str]:
    """The bases, at any depth, of `classes` (by their last names)."""
    bases: dict[str, set[str]] = {}
    for base, derived in index.derived.items():
        for name in derived:
            bases.setdefault(name, set()).add(base)
    found: set[str] = set()
    pending = list(classes)
    while pending:
        for base in bases.get(pending.pop(), ()):
            if base not in found:
                found.add(base)
                pending.append(base)
    return found


_TYPE_TESTS = frozenset({"isinstance", "issubclass"})


class _Receivers:
    """What one module says of the objects of a family of project classes (a class and those
    derived from it, by name), for `Reach._calls_miss`: whether one of its `.method`s may be
    called on one (`reaches`: on a name that holds a new one, on a new one, on a class of the
    family, on `self` or `super()` in a class of `related`: the family and their bases, or a
    string says the method's name); whether one is on a receiver of no type the code shows
    (`unknown`: a parameter, an item, another object's attribute); whether an object of the
    family may be where the code does not show it (`escapes`): a class of the family said
    other than as a base, in a type test or called into a name (or read at once by an
    attribute, or dropped), a class decorated or with keywords (a registry may build it), a
    name that holds one, or `self` of a related class, read other than by an attribute (handed
    on, returned, stored, `global`) or by `__class__`, a string that says a class's name, an
    import that renames one, a class attribute that holds one.
    `module_holders`: the names the module's own code binds to a new object (another module may
    import them)."""

    def __init__(self, tree: ast.Module, method: str, family: set[str], related: set[str]) -> None:
        self.method, self.family, self.related = method, family, related
        self.reaches = self.unknown = self.escapes = False
        self.module_holders: set[str] = set()
        imported = {alias.asname or alias.name.partition(".")[0] for node in nodes(tree) if isinstance(node, ast.Import) for alias in node.names}
        self._modules = imported - _bound_otherwise(tree)
        self._parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self._scope(tree, frozenset(), None, None)

    def _scope(self, owner: ast.AST, inherited: frozenset[str], cls: str | None, this: str | None) -> None:
        """Read one scope's own nodes (a module, a function, a lambda, a class body), then the
        scopes it holds: `inherited` the holders of the scopes around it, `cls` and `this` the
        class whose method it is (or is in) and that method's first parameter."""
        own = list(_scope_nodes(owner))
        holders = set(inherited)
        for node in own:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and self._holder_target(node) is not None:
                holders.add(self._holder_target(node))  # type: ignore[arg-type]
        if any(isinstance(node, (ast.Global, ast.Nonlocal)) and set(node.names) & holders for node in own):
            self.escapes = True  # a name bound elsewhere to a new object: read where the code does not show
        if isinstance(owner, ast.Module):
            self.module_holders = set(holders)
        elif isinstance(owner, ast.ClassDef) and holders - inherited:
            self.escapes = True  # a class attribute: read as `Trainer.checker` anywhere
        kept = frozenset(holders)
        for node in own:
            self._read(node, kept, cls, this)
            if isinstance(node, ast.ClassDef):
                if node.name in self.family and (node.decorator_list or node.keywords):
                    self.escapes = True
                self._scope(node, kept, node.name, None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(owner, ast.ClassDef):
                static = any(last_name(decorator) == "staticmethod" for decorator in node.decorator_list)
                every = [*node.args.posonlyargs, *node.args.args]
                self._scope(node, kept, owner.name, every[0].arg if every and not static else None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                self._scope(node, kept, cls, this)

    def _holder_target(self, node: ast.Assign | ast.AnnAssign) -> str | None:
        """The name `node` binds to a new object of the family (`checker = Checkpoint(...)`)."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(value, ast.Call) and last_name(value.func) in self.family:
            return targets[0].id
        return None

    def _read(self, node: ast.AST, holders: frozenset[str], cls: str | None, this: str | None) -> None:
        parent = self._parents.get(id(node))
        if isinstance(node, ast.Attribute) and node.attr == self.method:
            self._receiver(node.value, holders, cls, this)
        elif isinstance(node, ast.Call) and last_name(node.func) in _LOOKUPS and len(node.args) >= 2:
            built = _built_name(node.args[1])  # (a literal name is a string: read below)
            if built is not None and re.fullmatch(built, self.method):
                if last_name(node.func) in ("getattr", "hasattr"):
                    self._receiver(node.args[0], holders, cls, this)
                else:
                    self.unknown = True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.reaches = self.reaches or node.value == self.method
            self.escapes = self.escapes or node.value in self.family
        elif isinstance(node, (ast.Name, ast.Attribute)) and _said(node) in self.family:
            self.escapes = self.escapes or not self._made_or_tested(node, parent)
        elif isinstance(node, ast.alias) and node.name.rpartition(".")[2] in self.family:
            self.escapes = self.escapes or node.asname not in (None, node.name.rpartition(".")[2])  # built by another name
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and (node.id in holders or node.id == this and cls in self.related):
            read = isinstance(parent, ast.Attribute) and parent.value is node and parent.attr != "__class__"
            handed_to_super = isinstance(parent, ast.Call) and last_name(parent.func) == "super"
            self.escapes = self.escapes or not (read or handed_to_super)

    def _receiver(self, value: ast.expr, holders: frozenset[str], cls: str | None, this: str | None) -> None:
        """Judge the receiver of one `.method`."""
        if isinstance(value, ast.Name):
            if value.id in holders or value.id in self.family:
                self.reaches = True
            elif value.id == this and cls is not None:
                self.reaches = self.reaches or cls in self.related
            elif value.id not in self._modules:
                self.unknown = True
        elif isinstance(value, ast.Call) and last_name(value.func) == "super" and cls is not None:
            self.reaches = self.reaches or cls in self.related
        elif isinstance(value, ast.Call) and last_name(value.func) in self.family:
            self.reaches = True
        else:
            self.unknown = True

    def _made_or_tested(self, node: ast.Name | ast.Attribute, parent: ast.AST | None) -> bool:
        """Whether a class name of the family is said where no object of it can escape: a base
        of a class statement, a type test, called into a name, or called and read at once by an
        attribute other than a dunder, or dropped (`Fitter().fit()`)."""
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            return False
        if isinstance(parent, ast.ClassDef) and node in parent.bases:
            return True
        if not isinstance(parent, ast.Call):
            return isinstance(parent, ast.Attribute) and parent.attr == self.method  # `Checkpoint.load(obj)`: a call of it
        if parent.func is not node:
            return last_name(parent.func) in _TYPE_TESTS
        outer = self._parents.get(id(parent))
        if isinstance(outer, (ast.Assign, ast.AnnAssign)):
            return self._holder_target(outer) is not None
        return isinstance(outer, ast.Expr) or isinstance(outer, ast.Attribute) and not outer.attr.startswith("__")


def _said(node: ast.Name | ast.Attribute) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr


def _scope_nodes(owner: ast.AST):
    """The nodes of one scope: those of `owner`'s body (a module's, a function's, a lambda's, a
    class's), not of the bodies of the functions, lambdas and classes it defines (their
    decorators, defaults, annotations and bases are its own)."""
    pending: list[ast.AST] = []
    if isinstance(owner, ast.Lambda):
        pending.append(owner.body)
    else:
        pending.extend(getattr(owner, "body", []))
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending += [*node.decorator_list, node.args, *filter(None, [node.returns])]
        elif isinstance(node, ast.Lambda):
            pending.append(node.args)
        elif isinstance(node, ast.ClassDef):
            pending += [*node.decorator_list, *node.bases, *node.keywords]
        else:
            pending.extend(ast.iter_child_nodes(node))
