"""Import-alias resolution: which torch (or stdlib) object does a name in this file refer to?

`QualifiedNameProvider` answers this for every node of the tree and costs several times the
parse. Rules only ever ask about a handful of call targets, so this resolver does two cheap
things instead:

1. Before the traversal, a walk over *statements only* (never into expressions) records every
   binding of every scope: imports with their qualified origin, and local bindings (assignments,
   parameters, `def`, `class`, `for`/`with`/`except` targets) that shadow them.
2. During the traversal the engine tells the resolver which scope it is in, and a rule asks
   `qualified(expr)` for the few expressions it cares about.

Because all bindings are known before any rule runs, a module-level import that appears after
a function body still resolves inside that body, as it does at run time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

# Public re-exports: every spelling that reaches the same torch object. Rules compare
# `resolver.qualified(node)` against these sets.
TORCH_LOAD = frozenset({"torch.load", "torch.serialization.load"})
TORCH_SAVE = frozenset({"torch.save", "torch.serialization.save"})
SET_SHARING_STRATEGY = frozenset({"torch.multiprocessing.set_sharing_strategy"})
DISTRIBUTED_SAMPLER = frozenset(
    {"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"}
)
DATALOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
BATCH_SAMPLER = frozenset({"torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler"})
DEFAULTDICT = frozenset({"collections.defaultdict"})



def torch_function_needle(name: str) -> re.Pattern[str]:
    """Text that must occur for a file to call `torch.<name>` (or `torch.serialization.<name>`)
    in any import form: the attribute itself, `import torch as th` (then `th.<name>`), or
    `<name>` imported from torch. Most files that mention torch and the bare word have none."""
    return re.compile(
        rf"torch\.{name}\b|serialization\.{name}\b|import\s+torch(?:\.serialization)?\s+as\b"
        rf"|from\s+torch(?:\.serialization)?\s+import\s+(?:\([^)]*|[^\n]*)\b{name}\b"
    )


_LOCAL = None  # a binding that is not an import: it shadows whatever was imported


class Scope:
    __slots__ = ("parent", "bindings", "constants")

    def __init__(self, parent: Scope | None) -> None:
        # For a function scope, `parent` skips enclosing class scopes, as Python's lookup does.
        self.parent = parent
        self.bindings: dict[str, str | None] = {}
        # Names bound exactly once, by `NAME = <expression>`, with that expression.
        self.constants: dict[str, cst.BaseExpression | None] = {}

    def bind(self, name: str, origin: str | None, *, in_handler: bool = False) -> None:
        if origin is _LOCAL and in_handler and self.bindings.get(name) is not _LOCAL:
            # `try: import torch` / `except ImportError: torch = None` keeps the import's meaning.
            return
        self.bindings[name] = origin

    def lookup(self, name: str) -> tuple[bool, str | None]:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings:
                return True, scope.bindings[name]
            scope = scope.parent
        return False, None


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of attributes ending in a name; None for anything else."""
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def _module_name(node: cst.BaseExpression | None) -> str:
    return dotted_name(node) or "" if node is not None else ""


def _target_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


class NameResolver:
    """Scopes of one module, built once before the traversal."""

    # The nodes that open a scope: the engine calls enter/leave around these only.
    SCOPE_NODES = (cst.FunctionDef, cst.ClassDef)

    def __init__(self, module: cst.Module) -> None:
        self.module_scope = Scope(None)
        self._scopes: dict[int, Scope] = {}
        self._stack: list[Scope] = [self.module_scope]
        self._class_scopes: set[Scope] = set()
        self._collect(module.body, self.module_scope, in_handler=False)

    # -- queries used by rules -------------------------------------------------------------

    @property
    def scope(self) -> Scope:
        return self._stack[-1]

    def qualified(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name `expr` refers to through this file's imports, or None."""
        name = dotted_name(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        found, origin = self.scope.lookup(head)
        if not found or origin is None:
            return None
        return f"{origin}.{rest}" if rest else origin

    def string_value(self, expr: cst.BaseExpression) -> str | None:
        """The value of a string literal, or of a module constant bound once to one."""
        if isinstance(expr, cst.Name):
            found, origin = self.scope.lookup(expr.value)
            if not found or origin is not None:
                return None
            expr = self._constant(expr.value)
            if expr is None:
                return None
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            value = expr.evaluated_value
            return value if isinstance(value, str) else None
        return None

    def _constant(self, name: str) -> cst.BaseExpression | None:
        scope: Scope | None = self.scope
        while scope is not None:
            if name in scope.bindings:
                return scope.constants.get(name)
            scope = scope.parent
        return None

    # -- traversal hooks, called by the engine around every rule --------------------------

    def enter(self, node: cst.CSTNode) -> None:
        scope = self._scopes.get(id(node))
        if scope is not None:
            self._stack.append(scope)

    def leave(self, node: cst.CSTNode) -> None:
        if id(node) in self._scopes:
            self._stack.pop()

    # -- the statement walk ----------------------------------------------------------------

    def _new_scope(self, node: cst.CSTNode, enclosing: Scope, *, is_class: bool) -> Scope:
        parent = enclosing
        if not is_class:
            while parent in self._class_scopes:
                parent = parent.parent  # type: ignore[assignment]
        scope = Scope(parent)
        self._scopes[id(node)] = scope
        if is_class:
            self._class_scopes.add(scope)
        return scope

    def _collect(self, statements, scope: Scope, *, in_handler: bool) -> None:
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self._collect_small(small, scope, in_handler)
            else:
                self._collect_compound(statement, scope, in_handler)

    def _collect_small(self, small: cst.BaseSmallStatement, scope: Scope, in_handler: bool) -> None:
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = _module_name(alias.name)
                if alias.asname is not None:
                    scope.bind(alias.asname.name.value, full)  # type: ignore[union-attr]
                else:
                    head = full.partition(".")[0]
                    scope.bind(head, head)
        elif isinstance(small, cst.ImportFrom):
            if isinstance(small.names, cst.ImportStar):
                return
            # Relative imports keep their dots (`.utils.load`): never mistaken for torch's.
            module = "." * len(small.relative) + _module_name(small.module)
            for alias in small.names:
                imported = _module_name(alias.name)
                bound = alias.asname.name.value if alias.asname is not None else imported  # type: ignore[union-attr]
                scope.bind(bound, f"{module}.{imported}" if not module.endswith(".") else module + imported)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                for name in _target_names(target.target):
                    first = name not in scope.bindings
                    scope.bind(name, _LOCAL, in_handler=in_handler)
                    scope.constants[name] = small.value if first and len(small.targets) == 1 else None
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            for name in _target_names(small.target):
                scope.bind(name, _LOCAL, in_handler=in_handler)
                scope.constants[name] = None

    def _collect_compound(self, statement: cst.BaseCompoundStatement, scope: Scope, in_handler: bool) -> None:
        if isinstance(statement, cst.FunctionDef):
            scope.bind(statement.name.value, _LOCAL, in_handler=in_handler)
            inner = self._new_scope(statement, scope, is_class=False)
            params = statement.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                inner.bind(param.name.value, _LOCAL)
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param):
                    inner.bind(star.name.value, _LOCAL)
            self._collect_block(statement.body, inner, in_handler=False)
            return
        if isinstance(statement, cst.ClassDef):
            scope.bind(statement.name.value, _LOCAL, in_handler=in_handler)
            inner = self._new_scope(statement, scope, is_class=True)
            self._collect_block(statement.body, inner, in_handler=False)
            return
        if isinstance(statement, cst.For):
            for name in _target_names(statement.target):
                scope.bind(name, _LOCAL, in_handler=in_handler)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None:
                    for name in _target_names(item.asname.name):
                        scope.bind(name, _LOCAL, in_handler=in_handler)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            self._collect_block(statement.body, scope, in_handler=in_handler)
            for handler in statement.handlers:
                if handler.name is not None:
                    for name in _target_names(handler.name.name):
                        scope.bind(name, _LOCAL, in_handler=True)
                self._collect_block(handler.body, scope, in_handler=True)
            for extra in (statement.orelse, statement.finalbody):
                if extra is not None:
                    self._collect_block(extra.body, scope, in_handler=in_handler)
            return
        if isinstance(statement, cst.Match):
            for case in statement.cases:
                self._collect_block(case.body, scope, in_handler=in_handler)
            return
        body = getattr(statement, "body", None)
        if isinstance(body, cst.BaseSuite):
            self._collect_block(body, scope, in_handler=in_handler)
        orelse = getattr(statement, "orelse", None)
        while orelse is not None:
            self._collect_block(orelse.body, scope, in_handler=in_handler)
            orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None

    def _collect_block(self, suite: cst.BaseSuite, scope: Scope, *, in_handler: bool) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._collect(suite.body, scope, in_handler=in_handler)
        else:  # SimpleStatementSuite: `if x: import torch`
            for small in suite.body:  # type: ignore[attr-defined]
                self._collect_small(small, scope, in_handler)
