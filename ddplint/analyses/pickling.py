"""What crosses a process boundary, and whether a callable survives the trip (pickle).

Shared by the rules about spawn-unsafe objects (DDP002, DDP016). Pickle stores a function by
reference, `module.qualname`, so only functions and classes reachable from a module's top
level pickle: a lambda (`<lambda>`) or a function defined inside another function
(`f.<locals>.g`) fails with "Can't pickle local object" once a process is started by spawn.

Which names are nested functions is only known after the rule has seen the whole module, so
rules feed a `Definitions` during the traversal (the `TracksDefinitions` mixin does it), and
ask `picklable(...)` in `leave_Module`.
"""

from __future__ import annotations

import builtins

import libcst as cst

from ddplint.semantic import DATALOADER, TORCH_SAVE, NameResolver, Scope

PROCESS = frozenset(
    {
        "multiprocessing.Process",
        "multiprocessing.context.Process",
        "torch.multiprocessing.Process",
    }
)
SPAWN = frozenset(
    {
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.spawn.spawn",
        "torch.multiprocessing.start_processes",
        "torch.multiprocessing.spawn.start_processes",
    }
)
PICKLE_DUMP = frozenset({"pickle.dump", "pickle.dumps"})
# Method names that hand an object to another process whatever the receiver is: a queue's put.
_QUEUE_PUT = frozenset({"put", "put_nowait"})


def is_process_start(call: cst.Call, names: NameResolver) -> bool:
    """`Process(...)` from multiprocessing or torch.multiprocessing, also `ctx.Process(...)`."""
    if names.qualified(call.func) in PROCESS:
        return True
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "Process"


def crosses_process_boundary(call: cst.Call, names: NameResolver) -> bool:
    """A call that pickles (or may pickle, under spawn) the objects passed to it."""
    qualified = names.qualified(call.func)
    if qualified in DATALOADER or qualified in SPAWN or qualified in PICKLE_DUMP or qualified in TORCH_SAVE:
        return True
    if is_process_start(call, names):
        return True
    return qualified is None and isinstance(call.func, cst.Attribute) and call.func.attr.value in _QUEUE_PUT


def contained_values(expr: cst.BaseExpression):
    """`expr` itself, and the values inside it when it is a literal tuple, list, set or dict."""
    yield expr
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        for element in expr.elements:
            yield from contained_values(element.value)
    elif isinstance(expr, cst.Dict):
        for element in expr.elements:
            if isinstance(element, cst.DictElement):
                yield from contained_values(element.value)


class Definitions:
    """Function and class definitions of one module, by where they live."""

    def __init__(self) -> None:
        # The enclosing definitions: a function's own scope, or None for a class body.
        self._stack: list[Scope | None] = []
        self.module_level: set[str] = set()
        self._nested: set[tuple[int, str]] = set()

    @property
    def in_function(self) -> bool:
        return any(entry is not None for entry in self._stack)

    def enter_function(self, node: cst.FunctionDef, own_scope: Scope) -> None:
        self._record(node.name.value)
        self._stack.append(own_scope)

    def enter_class(self, node: cst.ClassDef) -> None:
        self._record(node.name.value)
        self._stack.append(None)

    def leave(self) -> None:
        self._stack.pop()

    def _record(self, name: str) -> None:
        if not self._stack:
            self.module_level.add(name)
        elif self._stack[-1] is not None:
            self._nested.add((id(self._stack[-1]), name))

    def is_nested_function(self, scope: Scope, name: str) -> bool:
        return (id(scope), name) in self._nested


class TracksDefinitions:
    """Mixin for a Rule: keeps `self.definitions` up to date during the traversal."""

    def __init__(self, names: NameResolver) -> None:
        super().__init__(names)  # type: ignore[call-arg]
        self.definitions = Definitions()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.definitions.enter_function(node, self.names.scope)  # type: ignore[attr-defined]

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.definitions.leave()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.definitions.enter_class(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.definitions.leave()


def binding_scope(scope: Scope, name: str) -> Scope | None:
    """The scope whose binding of `name` is seen from `scope`; None for builtins/unknown."""
    current: Scope | None = scope
    while current is not None:
        if name in current.bindings:
            return current
        current = current.parent
    return None


def is_builtin(scope: Scope, name: str) -> bool:
    return binding_scope(scope, name) is None and hasattr(builtins, name)


def picklable(expr: cst.BaseExpression, scope: Scope, definitions: Definitions, module_scope: Scope) -> bool | None:
    """True: pickles by reference (import, builtin, module-level def or class).
    False: certainly fails (lambda, nested function, a name bound to a lambda, a partial of
    those). None: cannot tell statically (parameters, attributes of objects, ...)."""
    if isinstance(expr, cst.Lambda):
        return False
    if isinstance(expr, cst.Name):
        name = expr.value
        where = binding_scope(scope, name)
        if where is None:
            return True if hasattr(builtins, name) else None
        if isinstance(where.constants.get(name), cst.Lambda):
            return False
        if where is module_scope:
            if where.bindings[name] is not None or name in definitions.module_level:
                return True
            return None
        return False if definitions.is_nested_function(where, name) else None
    if isinstance(expr, cst.Attribute):
        head = expr
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name):
            where = binding_scope(scope, head.value)
            if where is not None and where.bindings[head.value] is not None:
                return True  # an attribute of an imported module
        return None
    if isinstance(expr, cst.Call) and expr.args and _is_partial(expr.func, scope):
        return False if picklable(expr.args[0].value, scope, definitions, module_scope) is False else None
    return None


def _is_partial(func: cst.BaseExpression, scope: Scope) -> bool:
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        where = binding_scope(scope, func.value.value)
        return where is not None and where.bindings[func.value.value] == "functools" and func.attr.value == "partial"
    if isinstance(func, cst.Name):
        where = binding_scope(scope, func.value)
        return where is not None and where.bindings[func.value] == "functools.partial"
    return False
