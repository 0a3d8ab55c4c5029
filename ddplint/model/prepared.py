"""Loaders a project function returns that a module importing it trains on unsharded, though it
hands them to a library that shards loaders.

Accelerate's `accelerator.prepare(...)` (and its `prepare_data_loader`, and Fabric's
`setup_dataloaders`) shards a DataLoader by building a new one, which it returns; the loader it
is handed is left as it was (Accelerate's "internal mechanisms" guide, v0.34 to 1.x: "the
dataloader(s) are re-created" in a DataLoaderShard; `prepare_data_loader`, v1.14.0: "Wraps a
PyTorch DataLoader to generate batches for one of the processes only"). A script that hands it
a copy of its loader (`deepcopy(loader)`), or drops the loader it returns (`model, opt, _ =
accelerator.prepare(model, opt, loader)`), and iterates its own loader, iterates the unsharded
one: every process reads the whole dataset.

`trained_unprepared` answers, for a module, which of its module-level functions return such a
loader: a module importing it binds the function's result to a name once, hands that name (or a
copy of it) to a prepare call, and a loop of the same function iterates the name itself
(`for batch in loader`, `enumerate(loader)`, `tqdm(loader)`) and runs a backward in its body.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from ddplint.model.records import Place
from ddplint.prefilter.screens import dotted, last_name

# The calls of Accelerate and Fabric that return a sharded copy of the loaders they are handed.
LOADER_PREPARES = frozenset(("prepare", "prepare_data_loader", "setup_dataloaders"))
_COPIES = frozenset(("deepcopy", "copy"))
_WRAPPERS = frozenset(("enumerate", "tqdm"))  # iterate their first argument, batch by batch
_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class Unprepared:
    """A loader the function returns, which `importer` binds at `bound`, hands to the prepare
    call at `prepared` (a copy of it where `copy`, else the prepared one is dropped) and
    iterates unprepared in the loop at `loop`, which runs a backward."""

    importer: str
    bound: Place
    prepared: Place
    loop: Place
    copy: bool

    def describe(self) -> str:
        handed = "a copy of it is handed" if self.copy else "it is handed"
        dropped = "" if self.copy else ", which returns a sharded loader the script does not keep"
        return f"{handed} to Accelerate's prepare at {self.prepared}{dropped}"


def trained_unprepared(program, module: str) -> dict[str, list[Unprepared]]:
    """Module-level function of `module` -> each place a module importing it trains on the
    loader it returns unprepared (see the module's docstring), in the order of the importers."""
    found: dict[str, list[Unprepared]] = {}
    for importer in dict.fromkeys(program.importers_of(module)):
        tree = program.tree(importer)
        for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))] if tree else ():
            for function, unprepared in _in_scope(program, importer, module, scope):
                found.setdefault(function, []).append(unprepared)
    return found


def _in_scope(program, importer: str, module: str, scope: ast.AST):
    nodes = list(_own_nodes(scope))
    stores = Counter(n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    for node in nodes:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name, value = node.targets[0].id, node.value
        if stores[name] != 1 or not isinstance(value, ast.Call):
            continue  # rebound: what the name holds where it is iterated is not told here
        qualified = program.qualify(importer, dotted(value.func) or "")
        located = program.split(qualified, importer) if qualified else None
        if located is None or located[0] != module or not located[1] or "." in located[1]:
            continue
        handed = next(((call, copy) for call in nodes if (copy := _handed(call, name)) is not None), None)
        loop = next((n for n in nodes if isinstance(n, (ast.For, ast.AsyncFor)) and _iterates(n.iter, name) and _backward(n)), None)
        if handed is not None and loop is not None:
            call, copy = handed
            place = program.place
            yield located[1], Unprepared(importer, place(importer, node.lineno), place(importer, call.lineno), place(importer, loop.lineno), copy)


def _own_nodes(scope: ast.AST):
    """The nodes of a module's or function's own code, not those of the functions and classes
    it defines."""
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, _OWN_SCOPES):
            pending.extend(ast.iter_child_nodes(node))


def _handed(call: ast.AST, name: str) -> bool | None:
    """Whether the prepare call `call` is handed a copy of `name` (True) or `name` itself
    (False); None where it is no prepare call, or is handed neither."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in LOADER_PREPARES):
        return None
    for given in (*call.args, *(keyword.value for keyword in call.keywords)):
        if isinstance(given, ast.Name) and given.id == name:
            return False
        if isinstance(given, ast.Call) and last_name(given.func) in _COPIES and given.args and _is_name(given.args[0], name):
            return True
    return None


def _iterates(expr: ast.expr, name: str) -> bool:
    if isinstance(expr, ast.Call) and last_name(expr.func) in _WRAPPERS and expr.args:
        expr = expr.args[0]
    return _is_name(expr, name)


def _backward(loop: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward" for n in ast.walk(loop))


def _is_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name
