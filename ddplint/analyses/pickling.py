"""What crosses a process boundary, and whether a callable survives the trip (pickle).

Shared by the rules about spawn-unsafe objects (DDP002, DDP016). Pickle stores a function by
reference, `module.qualname`, so only functions and classes reachable from a module's top
level pickle: a lambda (`<lambda>`) or a function defined inside another function
(`f.<locals>.g`) fails with "Can't pickle local object" once a process is started by spawn.

Which names are nested functions is only known after the walk has seen the whole module, so
rules name the `Definitions` analysis in `analyses` and ask `picklable(...)` in `leave_Module`.
"""

from __future__ import annotations

import builtins

import libcst as cst

from ddplint.semantic.edits import argument_for
from ddplint.semantic.model import Analysis, SemanticModel, Scope, dotted_name
from ddplint.core.torch_api import DATALOADER, PICKLE_DUMP, PROCESS, SPAWN, START_PROCESSES, TORCH_SAVE

# Everything that starts processes running a function it is given (pickled under spawn).
SPAWN_LIKE = SPAWN | START_PROCESSES
# Method names that hand an object to another process whatever the receiver is: a queue's put.
_QUEUE_PUT = frozenset({"put", "put_nowait"})


def is_process_start(call: cst.Call, names: SemanticModel) -> bool:
    """`Process(...)` from multiprocessing or torch.multiprocessing, also `ctx.Process(...)`."""
    if names.qualified(call.func) in PROCESS:
        return True
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "Process"


def started_function(call: cst.Call, model: SemanticModel) -> cst.BaseExpression | None:
    """The function `call` starts as each process's: `mp.spawn(fn, ...)`, `start_processes(fn)`,
    `Process(target=fn)`, or the argument a project helper of any module hands to `mp.spawn`
    (`start_dist_train(train, world_size)`, ProjectView.started_argument); None otherwise."""
    qualified = model.qualified(call.func)
    if qualified in SPAWN_LIKE or is_process_start(call, model):
        found = argument_for(call, SPAWN, "fn") if qualified in SPAWN_LIKE else argument_for(call, PROCESS, "target")
        return found.value if found is not None else None
    project = model.project
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    callee = dotted_name(call.func)
    if project is None or callee is None or not any(isinstance(arg.value, cst.Name) for arg in positional):
        return None  # (asked of every call: the project is asked only where a function may be handed on)
    index = project.started_argument(callee)
    return positional[index].value if index is not None and index < len(positional) else None


def crosses_process_boundary(call: cst.Call, names: SemanticModel) -> bool:
    """A call that pickles (or may pickle, under spawn) the objects passed to it."""
    qualified = names.qualified(call.func)
    if qualified in DATALOADER or qualified in SPAWN_LIKE or qualified in PICKLE_DUMP or qualified in TORCH_SAVE:
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


class Definitions(Analysis):
    """Function and class definitions of one module, by where they live."""

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self.module_level: set[str] = set()
        self._nested: set[tuple[int, str]] = set()

    @property
    def in_function(self) -> bool:
        return self.model.function is not None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._record(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._record(node.name.value)

    def _record(self, name: str) -> None:
        container = self.model.frame.parent  # the model already entered the definition
        if container.parent is None:  # type: ignore[union-attr]
            self.module_level.add(name)
        elif container.is_function:  # type: ignore[union-attr]
            self._nested.add((id(container.scope), name))  # type: ignore[union-attr]

    def is_nested_function(self, scope: Scope, name: str) -> bool:
        return (id(scope), name) in self._nested


def is_builtin(scope: Scope, name: str) -> bool:
    return scope.owner(name) is None and hasattr(builtins, name)


def picklable(expr: cst.BaseExpression, scope: Scope, definitions: Definitions, module_scope: Scope) -> bool | None:
    """True: pickles by reference (import, builtin, module-level def or class).
    False: certainly fails (lambda, nested function, a name bound to a lambda, a partial of
    those). None: cannot tell statically (parameters, attributes of objects, ...)."""
    if isinstance(expr, cst.Lambda):
        return False
    if isinstance(expr, cst.Name):
        name = expr.value
        where = scope.owner(name)
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
            where = scope.owner(head.value)
            if where is not None and where.bindings[head.value] is not None:
                return True  # an attribute of an imported module
        return None
    if isinstance(expr, cst.Call) and expr.args and _is_partial(expr.func, scope):
        return False if picklable(expr.args[0].value, scope, definitions, module_scope) is False else None
    return None


def _is_partial(func: cst.BaseExpression, scope: Scope) -> bool:
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        where = scope.owner(func.value.value)
        return where is not None and where.bindings[func.value.value] == "functools" and func.attr.value == "partial"
    if isinstance(func, cst.Name):
        where = scope.owner(func.value)
        return where is not None and where.bindings[func.value] == "functools.partial"
    return False
