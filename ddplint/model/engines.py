"""ignite engines as evaluation passes: a question ddplint.model.loaders.evaluated asks.

ignite's `Engine(process_function)` calls its process function once per batch of
`engine.run(data)` (ignite/engine/engine.py): `run` is the loop over the data, on every rank that
calls it. A metric attached to the engine (`metric.attach(engine, name)`, ignite/metrics/metric.py)
updates on each batch and computes when the run completes, combining every rank's state in a
distributed run (ddplint.core.torch_api.IGNITE_METRICS). So `evaluator.run(val_loader)`, of an
engine whose process function runs no backward, with such a metric attached, is an evaluation
of the loader whose results are combined across ranks, though no `for` loop is written.

Read from the `ast` of the function that makes the `run` call: the engine is a local name bound
there to `Engine(f)`, and the metric is attached there. Anything else is unknown: no answer.
"""

from __future__ import annotations

import ast

from ddplint.core.torch_api import IGNITE_ENGINE, IGNITE_ENGINE_RUN, IGNITE_METRICS, IGNITE_UNCOMBINED_METRICS
from ddplint.model.program import Collective, Evaluation
from ddplint.prefilter.screens import dotted

_ATTACH = "attach"
_DICT_VIEWS = frozenset({"items", "values"})


def engine_evaluation(program, module: str, key: str, line: int, index: int | None, keyword: str | None) -> Evaluation | None:
    """Where the `<engine>.run(data)` call at `line` of function `key` of `module` evaluates
    what it passes as data (position `index` or `keyword`): the engine is bound in that function
    to an ignite Engine whose process function (a project function) reaches no backward(), and an
    ignite metric that combines across ranks is attached to it there. None otherwise."""
    if (index, keyword) not in ((0, None), (None, "data")):
        return None
    definition = program.definition(module, key)
    if definition is None:
        return None
    nodes = list(ast.walk(definition))
    engines = _engines(program, module, nodes)
    for node in nodes:
        if not (isinstance(node, ast.Call) and node.lineno == line and isinstance(node.func, ast.Attribute)
                and node.func.attr == IGNITE_ENGINE_RUN and isinstance(node.func.value, ast.Name)):
            continue
        engine = node.func.value.id
        process = engines.get(engine)
        if process is None or _trains(program, module, key, process):
            continue
        attached = _attached_metric(program, module, nodes, engine)
        if attached is not None:
            combine = Collective("the compute of the ignite metric attached", program.place(module, attached))
            return Evaluation(process, program.place(module, line), combine)
    return None


def _engines(program, module: str, nodes: list[ast.AST]) -> dict[str, str]:
    """Local name -> the name of the process function of the ignite Engine it is bound to; a
    name bound more than once is left out (which engine runs is unknown)."""
    found: dict[str, str | None] = {}
    for node in nodes:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            continue
        name, value = node.targets[0].id, node.value
        process = None
        if isinstance(value, ast.Call) and program.qualify(module, dotted(value.func) or "") in IGNITE_ENGINE:
            given = value.args[0] if value.args else next(
                (word.value for word in value.keywords if word.arg == "process_function"), None)
            process = given.id if isinstance(given, ast.Name) else None
        found[name] = process if name not in found else None
    return {name: process for name, process in found.items() if process is not None}


def _trains(program, module: str, key: str, process: str) -> bool:
    """Whether the process function `process` may run a backward(): it does, or a call it makes
    reaches one, or it is not a project function the model reads (unknown)."""
    target = program.target(module, key, None, process)
    if target is None:
        return True
    return program.backward_in(target.module, target.key, 0, 1 << 30) is not None


def _attached_metric(program, module: str, nodes: list[ast.AST], engine: str) -> int | None:
    """The line where an ignite metric that combines across ranks is attached to `engine`
    (`Loss(...).attach(evaluator, "nll")`, also through a name or a loop over a dict or list of
    metrics); None where none is."""
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == _ATTACH):
            continue
        given = node.args[0] if node.args else next((word.value for word in node.keywords if word.arg == "engine"), None)
        if isinstance(given, ast.Name) and given.id == engine and _combining_metric(program, module, nodes, node.func.value, 0):
            return node.lineno
    return None


def _combining_metric(program, module: str, nodes: list[ast.AST], expr: ast.expr, depth: int) -> bool:
    """Whether `expr` is an ignite metric whose compute combines across ranks: a call of one
    of ignite.metrics' classes, or a name every binding of which in the function is one (an
    assignment, or a loop over a list of them or over a dict's `items()`/`values()` whose every
    value is one)."""
    if isinstance(expr, ast.Call):
        qualified = program.qualify(module, dotted(expr.func) or "")
        return qualified in IGNITE_METRICS and qualified not in IGNITE_UNCOMBINED_METRICS
    if not isinstance(expr, ast.Name) or depth > 2:
        return False
    bound = _bindings(nodes, expr.id)
    return bool(bound) and all(_combining_metric(program, module, nodes, value, depth + 1) for value in bound)


def _bindings(nodes: list[ast.AST], name: str) -> list[ast.expr]:
    """What `name` is bound to in the function: assigned values, and the elements of what a loop
    binds it over (a list or tuple literal, or a dict's values through `items()`/`values()`);
    a binding the model cannot read makes the answer [None]-free but unreadable: []."""
    bound: list[ast.expr] = []
    for node in nodes:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            bound.append(node.value)
        elif isinstance(node, ast.For) and _loop_binds(node.target, name):
            elements = _elements(nodes, node.iter, node.target, name)
            if elements is None:
                return []
            bound += elements
    return bound


def _loop_binds(target: ast.expr, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(target))


def _elements(nodes: list[ast.AST], iterated: ast.expr, target: ast.expr, name: str) -> list[ast.expr] | None:
    """The values a loop over `iterated` binds `name` to: a list or tuple literal's elements
    (the loop target the name), or a dict's values (`for k, m in d.items()`, `for m in
    d.values()`); None when unknown."""
    if isinstance(iterated, (ast.List, ast.Tuple)) and isinstance(target, ast.Name):
        return list(iterated.elts)
    if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)
            and iterated.func.attr in _DICT_VIEWS and isinstance(iterated.func.value, ast.Name)):
        return None
    by_items = iterated.func.attr == "items"
    pair = isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)
    if by_items and not (pair and target.elts[1].id == name) or not by_items and not isinstance(target, ast.Name):
        return None
    return _dict_values(nodes, iterated.func.value.id)


def _dict_values(nodes: list[ast.AST], name: str) -> list[ast.expr] | None:
    """Every value the function puts in the dict `name`: its literal's values, `name[k] = v`,
    `name.update({...})`; None when it is bound to anything but a dict literal."""
    values: list[ast.expr] = []
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    if not isinstance(node.value, ast.Dict) or None in node.value.keys:
                        return None
                    values += node.value.values
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
                    values.append(node.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == name):
            if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Dict) or None in node.args[0].keys:
                return None
            values += node.args[0].values
    return values or None
