"""The program model: which values are DDP models, followed across functions and modules.

A DDP program is several functions: `main()` wraps the model, `train_one_epoch(model, ...)` in
`engine.py` steps it, a `Trainer` keeps it as `self.model`, a `build_model()` returns it. A rule
that sees one function cannot know that the `model` parameter it is looking at is a DDP model.
The program answers that, with the place that makes it so, and knows no rule.

It is built on the project index (ddplint.project), which says which modules exist, what each
imports and which ones name `DistributedDataParallel`. Only the modules a DDP model can reach
are read with CPython's `ast`: those that name DDP, the modules of the functions they hand a
model to, and the importers of a module whose function returns one. Each is summarised once
(`summarize`: per function its parameters, the calls that pass a value it can follow, what it
returns and what it stores on `self`), and the summaries are solved together to a fixed point:

- a parameter is a DDP model when some call passes one to it;
- `self.x` is a DDP model in a class when some method stores one there;
- a function returns a DDP model when some `return` gives one.

A value is followed through local assignments in statement order (the last assignment before
a call decides, whatever branch it is in), parameters, returns, `self` attributes, and classes
(`Trainer(model)` reaches `Trainer.__init__`). `model.module` is the inner model, not a DDP
model. Anything else (containers, globals, `*args`) is not followed, so the program errs toward
saying nothing. At most MAX_MODULES modules are read; what lies beyond is unknown.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

MAX_MODULES = 400  # modules read per run: past this, what a value would reach is unknown
MAX_ROUNDS = 12  # rounds of the fixed point; a chain of helpers deeper than this is unknown
_CONTROL_FIELDS = frozenset(("body", "orelse", "finalbody", "handlers", "cases"))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Origin:
    """Where a value became a DDP model (`wrapped_at`, "train.py:141") and, for a parameter,
    the call that hands it to the function (`passed_at`)."""

    wrapped_at: str
    passed_at: str | None = None

    def describe(self, name: str) -> str:
        text = f"`{name}` is wrapped in DDP at {self.wrapped_at}"
        return f"{text} and passed here by the call at {self.passed_at}" if self.passed_at else text


# -- one module's summary ------------------------------------------------------------------


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _FunctionReader:
    """The summary of one function: its parameters, and in statement order the calls that
    pass a followed value, its returns and what it stores on `self`."""

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None) -> None:
        arguments = node.args
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        decorators = {_dotted(d) for d in node.decorator_list}
        method = cls is not None and "staticmethod" not in decorators
        self.self_name = positional[0] if method and positional and "classmethod" not in decorators else None
        self.env: dict[str, list] = {name: ["param", name] for name in (*positional, *(a.arg for a in arguments.kwonlyargs))}
        self.record: dict = {"line": node.lineno, "params": positional, "method": method, "class": cls,
                             "calls": [], "returns": [], "sets": {}, "made": []}
        self._statements(node.body)

    def source(self, expr: ast.AST | None) -> list | None:
        if isinstance(expr, ast.Name):
            return self.env.get(expr.id)
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == self.self_name and self.self_name:
                return ["attr", expr.attr]
            return None
        if isinstance(expr, ast.Call):
            callee = _dotted(expr.func)
            return ["call", callee, expr.lineno] if callee else None
        return None

    def _bind(self, target: ast.AST, source: list | None) -> None:
        if isinstance(target, ast.Name):
            if source is not None and source[0] == "call" and source[1] not in self.record["made"]:
                self.record["made"].append(source[1])
            if source is None:
                self.env.pop(target.id, None)
            else:
                self.env[target.id] = source
        elif isinstance(target, ast.Attribute):
            if source is not None and isinstance(target.value, ast.Name) and target.value.id == self.self_name:
                self.record["sets"][target.attr] = source
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(element.value if isinstance(element, ast.Starred) else element, None)

    def _calls(self, statement: ast.stmt) -> None:
        for name, value in ast.iter_fields(statement):
            if name in _CONTROL_FIELDS:
                continue
            for root in value if isinstance(value, list) else (value,):
                if not isinstance(root, ast.AST):
                    continue
                for node in ast.walk(root):
                    if isinstance(node, ast.Call):
                        self._call(node)

    def _call(self, node: ast.Call) -> None:
        callee = _dotted(node.func)
        if callee is None:
            return
        args: list = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                break  # positions after a *args are unknown
            args.append(self.source(arg))
        keywords = {k.arg: self.source(k.value) for k in node.keywords if k.arg is not None}
        keywords = {k: v for k, v in keywords.items() if v is not None}
        if any(args) or keywords:
            self.record["calls"].append([callee, args, keywords, node.lineno])

    def _statements(self, body: list[ast.stmt]) -> None:
        for statement in body:
            if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
                continue
            self._calls(statement)
            if isinstance(statement, ast.Assign):
                source = self.source(statement.value)
                for target in statement.targets:
                    self._bind(target, source)
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                self._bind(statement.target, self.source(statement.value))
            elif isinstance(statement, ast.Return) and statement.value is not None:
                source = self.source(statement.value)
                if source is not None:
                    self.record["returns"].append(source)
            elif isinstance(statement, (ast.For, ast.AsyncFor)):
                self._bind(statement.target, None)
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                for item in statement.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, None)
            for name in ("body", "orelse", "finalbody"):
                self._statements(getattr(statement, name, None) or [])
            for handler in getattr(statement, "handlers", None) or []:
                self._statements(handler.body)
            for case in getattr(statement, "cases", None) or []:
                self._statements(case.body)


def summarize(tree: ast.Module) -> dict:
    """A module's summary (JSON-able): `functions` by the key the semantic model gives them
    (`name`, or `Class.name` for a method) and `classes` with their bases as written."""
    functions: dict[str, dict] = {}
    classes: dict[str, dict] = {}

    def definitions(body: list[ast.stmt], cls: str | None) -> None:
        for node in body:
            if isinstance(node, _FUNCTIONS):
                key = f"{cls}.{node.name}" if cls else node.name
                functions.setdefault(key, _FunctionReader(node, cls).record)
                definitions(node.body, None)
            elif isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, {"line": node.lineno, "bases": [b for b in map(_dotted, node.bases) if b]})
                definitions(node.body, node.name)
            else:
                for name in ("body", "orelse", "finalbody"):
                    definitions(getattr(node, name, None) or [], cls)
                for handler in getattr(node, "handlers", None) or []:
                    definitions(handler.body, cls)

    definitions(tree.body, None)
    return {"functions": functions, "classes": classes}


# -- the whole program ---------------------------------------------------------------------


class Program:
    """DDP models across the project's functions, solved once per run (see the module doc).
    `parameters[(module, key)]`, `attributes[(module, class)]`: name -> Origin;
    `results[(module, key)]`: the Origin of the DDP model the function returns."""

    def __init__(self, project, read=None) -> None:
        from ddplint.torch_api import DDP

        self.project = project
        self._ddp = DDP.spellings
        self._read = read or self._read_file
        self._summaries: dict[str, dict | None] = {}
        self._order: list[str] = []
        self._importers: dict[str, list[str]] | None = None
        self._receivers: set[str] | None = None
        self.complete = True  # False once MAX_MODULES or MAX_ROUNDS cut the solution short
        self.parameters: dict[tuple[str, str], dict[str, Origin]] = {}
        self.attributes: dict[tuple[str, str], dict[str, Origin]] = {}
        self.results: dict[tuple[str, str], Origin] = {}
        for name, facts in project.modules.items():
            if facts.get("ddp"):
                self.summary(name)
        self._solve()

    # -- reading -------------------------------------------------------------------------

    def _read_file(self, module: str) -> str | None:
        try:
            with open(os.path.join(self.project.root, self.project.relpaths[module]), "rb") as handle:
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return None

    def summary(self, module: str) -> dict | None:
        if module in self._summaries:
            return self._summaries[module]
        if len(self._summaries) >= MAX_MODULES:
            self.complete = False
            return None
        found = None
        text = self._read(module)
        if text is not None:
            try:
                found = summarize(ast.parse(text))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                found = None  # a module that does not parse hides what it does: unknown
        self._summaries[module] = found
        self._order.append(module)
        return found

    def _importers_of(self, module: str) -> list[str]:
        if self._importers is None:
            self._importers = {}
            for name, facts in self.project.modules.items():
                view = self.project.module_view(name)
                for origin in set(facts["imports"].values()):
                    absolute = view.absolute(origin)
                    while absolute:
                        if absolute in self.project.modules:
                            self._importers.setdefault(absolute, []).append(name)
                            break
                        absolute = absolute.rpartition(".")[0]
        return self._importers.get(module, [])

    # -- names ---------------------------------------------------------------------------

    def _qualify(self, module: str, dotted: str) -> str | None:
        head, _, rest = dotted.partition(".")
        origin = self.project.modules[module]["imports"].get(head)
        if origin is None:
            return None
        absolute = self.project.module_view(module).absolute(origin)
        return f"{absolute}.{rest}" if rest else absolute

    def _split(self, qualified: str) -> tuple[str, str] | None:
        """(project module, the rest) of a qualified name, at the longest module prefix."""
        head, rest = qualified, ""
        while head:
            if self.project.module(head) is not None:
                return head, rest
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
        parts = dotted.split(".")
        if len(parts) == 2 and cls is not None and parts[0] in ("self", "cls"):
            key = f"{cls}.{parts[1]}"
            return (module, key, True) if key in functions else None
        if len(parts) == 1 and parts[0] in functions and not functions[parts[0]]["method"]:
            return module, parts[0], False
        if len(parts) == 1 and parts[0] in classes:
            key = f"{parts[0]}.__init__"
            return (module, key, True) if key in functions else None
        qualified = self._qualify(module, dotted)
        found = self._split(qualified) if qualified else None
        if found is None or not found[1] or "." in found[1]:
            return None
        target, symbol = found
        return self.resolve(target, symbol, None, depth + 1) if target != module else None

    def _makes_ddp(self, module: str, dotted: str, depth: int = 0) -> bool:
        """Whether calling `dotted` in `module` builds a DDP model: DDP itself, or a project
        class derived from it."""
        qualified = self._qualify(module, dotted)
        if qualified in self._ddp:
            return True
        summary = self.summary(module)
        if summary is None or depth > 8:
            return False
        if "." not in dotted and dotted in summary["classes"]:
            return any(self._makes_ddp(module, base, depth + 1) for base in summary["classes"][dotted]["bases"])
        found = self._split(qualified) if qualified else None
        if found is None or not found[1] or "." in found[1] or found[0] == module:
            return False
        return self._makes_ddp(found[0], found[1], depth + 1)

    # -- solving -------------------------------------------------------------------------

    def location(self, module: str, line: int) -> str:
        return self.project.location(module, line)

    def evaluate(self, module: str, key: str, source: list | None) -> Origin | None:
        """The Origin of the DDP model a summary's `source` holds in function `key`, or None."""
        if not source:
            return None
        function = self._summaries[module]["functions"][key]  # type: ignore[index]
        kind = source[0]
        if kind == "param":
            return self.parameters.get((module, key), {}).get(source[1])
        if kind == "attr":
            cls = function["class"]
            return self.attributes.get((module, cls), {}).get(source[1]) if cls else None
        callee, line = source[1], source[2]
        if self._makes_ddp(module, callee):
            return Origin(self.location(module, line))
        target = self.resolve(module, callee, function["class"])
        origin = self.results.get(target[:2]) if target is not None else None
        return Origin(origin.wrapped_at) if origin is not None else None

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
        self.complete = False

    def _step(self, module: str, key: str, function: dict) -> bool:
        changed = False
        for callee, args, keywords, line in function["calls"]:
            passed = [(i, self.evaluate(module, key, s)) for i, s in enumerate(args)]
            named = [(k, self.evaluate(module, key, s)) for k, s in keywords.items()]
            if not any(o for _, o in passed) and not any(o for _, o in named):
                continue
            target = self.resolve(module, callee, function["class"])
            if target is None:
                continue
            target_module, target_key, bound = target
            params = self._summaries[target_module]["functions"][target_key]["params"]  # type: ignore[index]
            params = params[1:] if bound else params
            at = self.location(module, line)
            for index, origin in passed:
                if origin is not None and index < len(params):
                    changed |= self._note(self.parameters, target[:2], params[index], Origin(origin.wrapped_at, at))
            for name, origin in named:
                if origin is not None and name in params:
                    changed |= self._note(self.parameters, target[:2], name, Origin(origin.wrapped_at, at))
        cls = function["class"]
        for attribute, source in function["sets"].items():
            origin = self.evaluate(module, key, source)
            if origin is not None and cls is not None:
                changed |= self._note(self.attributes, (module, cls), attribute, Origin(origin.wrapped_at))
        for source in function["returns"]:
            origin = self.evaluate(module, key, source)
            if origin is not None and (module, key) not in self.results:
                self.results[(module, key)] = Origin(origin.wrapped_at)
                for importer in self._importers_of(module):
                    self.summary(importer)
                changed = True
        return changed

    # -- questions -----------------------------------------------------------------------

    def receives_wrapped(self, module: str) -> bool:
        """Whether some function of `module` is handed a DDP model, keeps one on `self` or
        binds one a project function returns: its rules must look though it never names DDP."""
        if self._receivers is None:
            self._receivers = {m for m, _ in self.parameters} | {m for m, _ in self.attributes}
            for name in self._order if self.results else ():
                summary = self._summaries[name]
                if summary is not None and any(
                    self.result_of(name, callee, function["class"]) is not None
                    for function in summary["functions"].values()
                    for callee in function["made"]
                ):
                    self._receivers.add(name)
        return module in self._receivers

    def result_of(self, module: str, callee: str, cls: str | None) -> Origin | None:
        """The Origin of the DDP model that calling `callee` in `module` returns, or None."""
        if module not in self._summaries or not self.results:
            return None
        target = self.resolve(module, callee, cls)
        return self.results.get(target[:2]) if target is not None else None
