"""The project index: what each module of the training program exports, for rules that need
the other half of a pitfall that lives in another module.

Real training code is spread over modules (the model in `models/`, the loaders in `data/`,
helpers in `utils.py`, the loop in `train.py`). One cheap pass over every Python file under
the project root records, per module, the facts other modules' rules ask about:

- `dist`: the module names a DDP entry point (the text test of
  `ddplint.analyses.distributed_context`); one such module makes the project distributed;
- `imports`: top-level imports, local name -> origin (relative origins keep their dots and are
  resolved against the module's own name), and the modules it star-imports;
- `functions`: top-level functions that may touch CUDA (with the line), and the names they call;
- `classes`: top-level classes with their bases (as origins), to know DataLoader subclasses.

It is cheap because it is not a parse of every file: the text of a module is cut at its
top-level statements (lines that start in column 0) and CPython's `ast` parses only the import
statements and the `def`/`class` statements whose text can hold a fact. A cut that does not
parse (a column-0 line inside a string) falls back to parsing the whole module. Results are
cached per file by content, next to the results cache.

Rules never read files: they ask `self.model.project` (a `ProjectView`, or None when the
project index is off), which answers about names as the semantic model qualifies them.
"""

from __future__ import annotations

import ast
import json
import os
import re
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

from ddplint.analyses.distributed_context import DISTRIBUTED_MARKERS

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
# Folders never indexed (the CLI's default exclusions, and hidden folders).
_SKIP_DIRS = frozenset(
    ("__pycache__", "__pypackages__", "_build", "buck-out", "build", "node_modules", "venv", "site-packages")
)
MAX_INDEX_BYTES = 2_000_000  # as the engine's parse limit: larger files export nothing

# Rule codes a module's imports can make active without the module's own needles.
ALL_CODES = "*"

_TOP_LEVEL = re.compile(r"^(?:(?:async[ \t]+)?def[ \t]+(\w+)|class[ \t]+(\w+)|(?:from|import)[ \t]|@)", re.M)
_STATEMENT_START = re.compile(r"^[A-Za-z_@]", re.M)
# Text that can make a top-level def or class worth parsing.
_CUDA_TEXT = re.compile(r"cuda|\.to\s*\(|device\s*=")
_CLASS_TEXT = re.compile(r"DataLoader|Sampler")


# -- root discovery -----------------------------------------------------------------------


def find_root(path: str) -> str:
    """The folder at or above `path` with a pyproject.toml, setup.cfg, setup.py or .git; the
    folder of `path` itself when there is none."""
    start = os.path.abspath(path)
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    here = folder
    while True:
        if any(os.path.exists(os.path.join(here, marker)) for marker in ROOT_MARKERS):
            return here
        up = os.path.dirname(here)
        if up == here:
            return folder
        here = up


def common_root(paths: Iterable[str]) -> str | None:
    """The project root of the paths given: the root of their common folder."""
    absolute = [os.path.abspath(p) for p in paths]
    if not absolute:
        return None
    try:
        common = os.path.commonpath(absolute)
    except ValueError:  # different drives
        return None
    return find_root(common)


def python_files(root: str) -> list[str]:
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        found.extend(os.path.join(folder, name) for name in sorted(names) if name.endswith(".py"))
    return found


def module_name(relative: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`."""
    parts = relative[:-3].replace(os.sep, "/").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


# -- facts of one module --------------------------------------------------------------------


def module_facts(text: str) -> dict:
    """The facts one module exports (JSON-able), from its text."""
    facts: dict = {"dist": any(marker in text for marker in DISTRIBUTED_MARKERS), "imports": {}, "stars": []}
    functions: dict[str, dict] = {}
    classes: dict[str, dict] = {}
    facts["functions"], facts["classes"] = functions, classes
    if len(text) > MAX_INDEX_BYTES:
        return facts
    starts = [m.start() for m in _STATEMENT_START.finditer(text)]
    imports: list[str] = []
    wanted: list[tuple[int, str]] = []  # (first line, text) of defs and classes to parse
    for match in _TOP_LEVEL.finditer(text):
        begin = match.start()
        end = _next_start(starts, begin, text)
        chunk = text[begin:end]
        if match.group(1) is None and match.group(2) is None and not chunk.startswith("@"):
            imports.append(chunk)
            continue
        if chunk.startswith("@"):  # decorators: the statement is the def or class below
            continue
        if (match.group(1) and _CUDA_TEXT.search(chunk)) or (match.group(2) and _CLASS_TEXT.search(chunk)):
            wanted.append((text.count("\n", 0, begin) + 1, chunk))
    statements = _parse_pieces(imports, wanted)
    if statements is None:  # a cut that does not parse: parse the module instead
        tree = _parse(text)
        if tree is None:
            return facts
        statements = tree.body
    for node in statements:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    facts["imports"][alias.asname] = alias.name
                else:
                    head = alias.name.partition(".")[0]
                    facts["imports"][head] = head
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    facts["stars"].append(module)
                else:
                    origin = module + alias.name if module.endswith(".") else f"{module}.{alias.name}"
                    facts["imports"][alias.asname or alias.name] = origin
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = _function_facts(node)
        elif isinstance(node, ast.ClassDef):
            bases = [name for name in map(_dotted, node.bases) if name]
            classes[node.name] = {"line": node.lineno, "bases": bases}
    # Same-module helpers: a function calling a CUDA function of this module touches CUDA.
    changed = True
    while changed:
        changed = False
        for record in functions.values():
            if not record["cuda"] and any(functions.get(name, {}).get("cuda") for name in record["calls"]):
                record["cuda"] = changed = True
    return facts


def _next_start(starts: list[int], begin: int, text: str) -> int:
    import bisect

    i = bisect.bisect_right(starts, begin)
    while i < len(starts):
        at = starts[i]
        # Keep going past decorators' statements and `else`/`elif`/`except` clauses.
        if not text.startswith(("else", "elif", "except", "finally"), at):
            return at
        i += 1
    return len(text)


def _parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _parse_pieces(imports: list[str], wanted: list[tuple[int, str]]) -> list[ast.stmt] | None:
    statements: list[ast.stmt] = []
    if imports:
        tree = _parse("\n".join(imports))
        if tree is None:
            return None
        statements.extend(tree.body)
    for line, chunk in wanted:
        tree = _parse(chunk)
        if tree is None or len(tree.body) != 1:
            return None
        ast.increment_lineno(tree, line - 1)
        statements.extend(tree.body)
    return statements


def _dotted(expr: ast.expr) -> str | None:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _function_facts(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict:
    cuda = False
    calls: set[str] = set()
    for child in ast.walk(node):
        if not isinstance(child, ast.Call) or child in _defaults(node):
            continue
        func = child.func
        if _is_cuda_call(child):
            cuda = True
        name = _dotted(func)
        if name:
            calls.add(name)
    return {"line": node.lineno, "cuda": cuda, "calls": sorted(calls)}


def _defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    return [d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None]


def _is_cuda_call(call: ast.Call) -> bool:
    """`.cuda()`, `.to(<cuda device>)`, a call with `device=<cuda device>`,
    `torch.cuda.*Tensor(...)` (the CPython-ast twin of DDP001's test)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "cuda":
        return True
    if isinstance(func, ast.Attribute) and func.attr == "to":
        return any(_is_cuda_device(arg) for arg in call.args) or any(
            k.arg == "device" and _is_cuda_device(k.value) for k in call.keywords
        )
    name = _dotted(func) or ""
    if ".cuda." in f".{name}" and name.endswith("Tensor"):
        return True
    return any(k.arg == "device" and _is_cuda_device(k.value) for k in call.keywords)


def _is_cuda_device(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Constant):
        value = expr.value
        return (isinstance(value, str) and value.startswith("cuda")) or (type(value) is int)
    if isinstance(expr, ast.Call) and (_dotted(expr.func) or "").endswith("device") and expr.args:
        first = expr.args[0]
        return isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("cuda")
    return False


# -- the project ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hints:
    """What the project changes for one module's prefilters: whether the project is
    distributed (a rule's DISTRIBUTED_MARKERS needle is met), and the rule codes its imports
    bring facts for (their needles and screens are not applied; ALL_CODES: every rule)."""

    distributed: bool = False
    codes: frozenset[str] = frozenset()

    def admits(self, code: str) -> bool:
        return code in self.codes or ALL_CODES in self.codes


@dataclass
class Project:
    root: str
    modules: dict[str, dict]  # module name -> facts
    relpaths: dict[str, str]  # module name -> path relative to the root
    distributed: bool = False
    digest: str = ""
    _suffixes: dict[str, str | None] = field(default_factory=dict, repr=False)
    _views: dict[str, ProjectView] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.distributed = any(facts["dist"] for facts in self.modules.values())
        for name in self.modules:
            parts = name.split(".")
            for i in range(1, len(parts)):
                suffix = ".".join(parts[i:])
                if suffix in self.modules:
                    continue
                # Ambiguous suffixes (two packages with a `utils`) resolve to nothing.
                self._suffixes[suffix] = None if suffix in self._suffixes else name

    def view(self, path: str) -> ProjectView | None:
        """The project as the module at `path` sees it; None for a file outside the root."""
        relative = os.path.relpath(os.path.abspath(path), self.root)
        if relative.startswith(".."):
            return None
        name = module_name(relative) if relative.endswith(".py") else relative
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = ProjectView(self, name, relative.endswith("__init__.py"))
        return view

    def module(self, name: str) -> str | None:
        if name in self.modules:
            return name
        return self._suffixes.get(name)

    def location(self, module: str, line: int) -> str:
        return f"{self.relpaths[module]}:{line}"


class ProjectView:
    """The project seen from one module: resolves the names its semantic model qualifies."""

    def __init__(self, project: Project, module: str, is_package: bool) -> None:
        self.project = project
        self.module = module
        self.is_package = is_package
        self._hints: Hints | None = None

    @property
    def distributed(self) -> bool:
        return self.project.distributed

    # -- names -------------------------------------------------------------------------------

    def absolute(self, qualified: str, module: str | None = None, is_package: bool | None = None) -> str:
        """A relative origin (`.utils.f`, `..data.x`) made absolute from `module`."""
        module = self.module if module is None else module
        is_package = self.is_package if is_package is None else is_package
        if not qualified.startswith("."):
            return qualified
        dots = len(qualified) - len(qualified.lstrip("."))
        package = module.split(".") if is_package else module.split(".")[:-1]
        if dots - 1:
            package = package[: len(package) - (dots - 1)] if dots - 1 <= len(package) else []
        rest = qualified[dots:]
        return ".".join([*package, rest] if rest else package)

    def resolve(self, qualified: str | None, _depth: int = 0) -> tuple[str, str, str] | None:
        """(module, kind, name) of the project function ("function") or class ("class") that a
        qualified name refers to, through re-exports and star imports; None if not one."""
        if not qualified or _depth > 8:
            return None
        name = self.absolute(qualified)
        head, _, symbol = name.rpartition(".")
        module = self.project.module(head) if head else None
        if module is None:
            return None
        return self._lookup(module, symbol, _depth)

    def _lookup(self, module: str, symbol: str, depth: int) -> tuple[str, str, str] | None:
        facts = self.project.modules[module]
        if symbol in facts["functions"]:
            return module, "function", symbol
        if symbol in facts["classes"]:
            return module, "class", symbol
        other = ProjectView(self.project, module, self.project.relpaths[module].endswith("__init__.py"))
        origin = facts["imports"].get(symbol)
        if origin is not None:
            return other.resolve(origin, depth + 1)
        for star in facts["stars"]:
            found = other.resolve(f"{star}.{symbol}" if not star.endswith(".") else star + symbol, depth + 1)
            if found is not None:
                return found
        return None

    def cuda_function(self, qualified: str | None) -> str | None:
        """Where the project function `qualified` names touches CUDA ("utils.py:3"), or None."""
        found = self.resolve(qualified)
        if found is None or found[1] != "function":
            return None
        module, _, name = found
        record = self.project.modules[module]["functions"][name]
        if record["cuda"] or self._calls_cuda(module, record, set()):
            return self.project.location(module, record["line"])
        return None

    def _calls_cuda(self, module: str, record: dict, seen: set) -> bool:
        view = self.project.view(os.path.join(self.project.root, self.project.relpaths[module]))
        imports = self.project.modules[module]["imports"]
        for call in record["calls"]:
            head, _, rest = call.partition(".")
            origin = imports.get(head)
            if origin is None or (module, call) in seen:
                continue
            seen.add((module, call))
            found = view.resolve(f"{origin}.{rest}" if rest else origin) if view else None
            if found is None or found[1] != "function":
                continue
            target = self.project.modules[found[0]]["functions"][found[2]]
            if target["cuda"] or self._calls_cuda(found[0], target, seen):
                return True
        return False

    def subclass_of(self, qualified: str | None, targets: frozenset[str], _seen: frozenset = frozenset()) -> str | None:
        """Where the project class `qualified` names is defined, if one of its bases (through
        project classes) is one of the qualified `targets`; else None."""
        found = self.resolve(qualified)
        if found is None or found[1] != "class" or found in _seen:
            return None
        module, _, name = found
        record = self.project.modules[module]["classes"][name]
        view = ProjectView(self.project, module, self.project.relpaths[module].endswith("__init__.py"))
        imports = self.project.modules[module]["imports"]
        for base in record["bases"]:
            head, _, rest = base.partition(".")
            origin = imports.get(head)
            if origin is None:
                if head in self.project.modules[module]["classes"]:
                    origin = f"{module}.{head}"
                else:
                    continue
            full = view.absolute(f"{origin}.{rest}" if rest else origin)
            if full in targets or view.subclass_of(full, targets, _seen | {found}):
                return self.project.location(module, record["line"])
        return None

    def star_bindings(self) -> dict[str, str]:
        """Names this module's star imports bind, with their (absolute) origins."""
        bindings: dict[str, str] = {}
        self._star_into(self.module, self.is_package, bindings, set())
        return bindings

    def _star_into(self, module: str, is_package: bool, bindings: dict[str, str], seen: set) -> None:
        facts = self.project.modules.get(module)
        if facts is None or module in seen:
            return
        seen.add(module)
        view = ProjectView(self.project, module, is_package)
        for star in facts["stars"]:
            target = self.project.module(view.absolute(star))
            if target is None:
                continue
            target_facts = self.project.modules[target]
            target_view = ProjectView(self.project, target, self.project.relpaths[target].endswith("__init__.py"))
            for name, origin in target_facts["imports"].items():
                if not name.startswith("_"):
                    bindings.setdefault(name, target_view.absolute(origin))
            for name in (*target_facts["functions"], *target_facts["classes"]):
                if not name.startswith("_"):
                    bindings.setdefault(name, f"{target}.{name}")
            self._star_into(target, self.project.relpaths[target].endswith("__init__.py"), bindings, seen)

    # -- prefilter hints -----------------------------------------------------------------------

    def hints(self) -> Hints:
        if self._hints is None:
            self._hints = Hints(self.project.distributed, frozenset(self._codes()))
        return self._hints

    def _codes(self) -> set[str]:
        facts = self.project.modules.get(self.module)
        if facts is None:
            return set()
        codes: set[str] = set()
        if any(origin.partition(".")[0] == "torch" for origin in self.star_bindings().values()):
            return {ALL_CODES}  # torch names without an import of the file's own: nothing is screened
        from ddplint.torch_api import DATALOADER

        loaders = frozenset(DATALOADER.spellings)
        for origin in facts["imports"].values():
            absolute = self.absolute(origin)
            candidates = [absolute]
            module = self.project.module(absolute)
            if module is not None:  # `import utils` / `from . import utils`: all it exports
                exported = self.project.modules[module]
                candidates = [f"{absolute}.{name}" for name in (*exported["functions"], *exported["classes"])]
            for candidate in candidates:
                if self.cuda_function(candidate):
                    codes.add("DDP001")
                if self.subclass_of(candidate, loaders):
                    codes.add("DDP016")
        return codes


# -- building and caching -----------------------------------------------------------------


def build(root: str, cache_folder: str | None = None, files: list[str] | None = None) -> Project:
    """The index of every Python file under `root` (read from and written to the project
    cache in `cache_folder` where one is given)."""
    from ddplint.cache import _code_fingerprint, content_hash
    from ddplint import __version__

    root = os.path.abspath(root)
    cache_path = None
    entries: dict[str, dict] = {}
    if cache_folder is not None:
        key = content_hash(root.encode())[:12]
        cache_path = os.path.join(cache_folder, f"project-{__version__}-{_code_fingerprint()}-{key}.json")
        try:
            with open(cache_path, encoding="utf-8") as handle:
                loaded = json.load(handle)
            if isinstance(loaded, dict):
                entries = loaded
        except (OSError, ValueError):
            pass
    modules: dict[str, dict] = {}
    relpaths: dict[str, str] = {}
    fresh: dict[str, dict] = {}
    for path in files if files is not None else python_files(root):
        relative = os.path.relpath(path, root)
        try:
            info = os.stat(path)
        except OSError:
            continue
        entry = entries.get(relative)
        facts = None
        if entry is not None and entry.get("size") == info.st_size and entry.get("mtime") == info.st_mtime_ns:
            facts = entry.get("facts")
        if facts is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            digest = content_hash(data)
            if entry is not None and entry.get("hash") == digest:
                facts = entry.get("facts")
            if facts is None:
                facts = module_facts(data.decode("utf-8", "replace"))
            entry = {"size": info.st_size, "mtime": info.st_mtime_ns, "hash": digest, "facts": facts}
        fresh[relative] = entry
        name = module_name(relative)
        modules[name] = facts
        relpaths[name] = relative
    digest = content_hash(json.dumps(modules, sort_keys=True).encode())
    if cache_path is not None and fresh != entries:
        _save(cache_folder, cache_path, fresh)  # type: ignore[arg-type]
    return Project(root, modules, relpaths, digest=digest)


def _save(folder: str, path: str, entries: dict) -> None:
    try:
        os.makedirs(folder, exist_ok=True)
        ignore = os.path.join(folder, ".gitignore")
        if not os.path.exists(ignore):
            with open(ignore, "w", encoding="utf-8") as handle:
                handle.write("# created by ddplint\n*\n")
        descriptor, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(entries, handle)
        os.replace(temporary, path)
    except OSError:
        pass  # a cache that cannot be written only costs speed


_LOADED: dict[str, Project] = {}


def for_file(path: str, cache: bool = True) -> Project | None:
    """The project of one file, for the flake8 plugin: built (or loaded from the project's
    own cache) once per process and root."""
    if not path or path in ("-", "stdin") or not os.path.exists(path):
        return None
    root = find_root(path)
    project = _LOADED.get(root)
    if project is None:
        cache_folder = os.path.join(root, ".ddplint_cache") if cache else None
        project = _LOADED[root] = build(root, cache_folder)
    return project
