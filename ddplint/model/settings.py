"""The settings a yacs config declares (`_C = CN()`, `_C.TRAIN.ACCUM_STEPS = 1`) and what a run
may change them by, read from CPython's `ast`.

yacs (0.1.8, yacs/config.py) keeps a project's settings in a tree of `CfgNode`s whose defaults
the code assigns at the top of a module. A run changes one only by what is merged in or
assigned: `cfg.merge_from_list(args.opts)` takes KEY VALUE pairs of its command line (`--opts
TRAIN.EPOCHS 300`; each value read with `ast.literal_eval`, the text itself where that fails),
`cfg.merge_from_file(path)` a YAML file's keys, and code may assign the key (`config.TRAIN.X =
args.x` under `if args.x:`). ProjectView.runs_reaching reads, on each documented run, the value
each setting has there.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ddplint.model.parsers import NOT_SHOWN, attribute_path

CFG_NODES = ("yacs.config.CfgNode", "yacs.config.CN")  # the class of a yacs config tree
# CfgNode methods that merge a file or another tree: the keys they set are not read here
MERGES_TREES = frozenset({"merge_from_file", "merge_from_other_cfg", "load_cfg"})

Guards = tuple[tuple[ast.expr, bool], ...]  # the `if` tests around a statement, each with whether it is in the body


@dataclass
class Settings:
    """`defaults`: each key path a yacs config declares (`("TRAIN", "ACCUM_STEPS")`) -> its
    literal default (NOT_SHOWN where not a literal, or where two declarations differ);
    `assigned`: (the attribute path an assignment outside the declarations writes,
    `("TRAIN", "ACCUM_STEPS")` of `config.TRAIN.ACCUM_STEPS = ...`, and the `if`s around it in
    its function, and the value it assigns); `merges_files`: some module merges a file or another
    tree into a config; `merges_fixed`: one of those merges is no `merge_from_file(path)` of a
    path the code is handed (a literal path, another tree), so a run may merge a file its command
    does not name; `dynamic`: some module merges a list that is not a parsed option
    (`merge_from_list(pairs)`), so any key may be set."""

    defaults: dict[tuple[str, ...], object] = field(default_factory=dict)
    assigned: list[tuple[tuple[str, ...], Guards, ast.expr | None]] = field(default_factory=list)
    merges_files: bool = False
    merges_fixed: bool = False
    dynamic: bool = False

    def add(self, tree: ast.Module) -> None:
        """Take in what the module `tree` declares, assigns and merges."""
        classes = _node_names(tree)
        roots = _config_roots(tree, classes)
        declared = set()
        for statement in tree.body:
            target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
            path = attribute_path(target) if isinstance(target, ast.Attribute) else None
            if path is None or path[0] not in roots or len(path) < 2:
                continue
            declared.add(id(statement))
            if _node_call(statement.value, classes):
                continue  # `_C.TRAIN = CN()`: a subtree
            value = _literal(statement.value)
            mine = self.defaults.setdefault(path[1:], value)
            if mine != value or type(mine) is not type(value):
                self.defaults[path[1:]] = NOT_SHOWN
        for node, guards in _statements(tree.body, ()):
            if id(node) in declared:
                continue
            self._assignments(node, guards)

    def _assignments(self, node: ast.stmt, guards: Guards) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        plain = isinstance(node, (ast.Assign, ast.AnnAssign)) and len(targets) == 1 and not isinstance(targets[0], (ast.Tuple, ast.List))
        for target in _flat(targets):
            path = attribute_path(target) if isinstance(target, ast.Attribute) else None
            if path is not None:
                self.assigned.append((path[1:], guards, node.value if plain else None))  # type: ignore[union-attr]
        for call in _own_calls(node):
            name = call.func.attr if isinstance(call.func, ast.Attribute) else None
            if name in MERGES_TREES:
                self.merges_files = True
                handed = name == "merge_from_file" and len(call.args) == 1 and isinstance(call.args[0], (ast.Name, ast.Attribute))
                self.merges_fixed = self.merges_fixed or not handed
            elif name == "merge_from_list" and not (len(call.args) == 1 and isinstance(call.args[0], ast.Attribute)):
                self.dynamic = True  # a list the code builds, not the pairs of an option (`args.opts`)

    def rewritten(self, keys: tuple[str, ...]) -> list[Guards]:
        """The `if`s around each assignment that may write the setting at `keys`: one whose
        attribute path is a run of `keys` (`cfg.TRAIN = ...` replaces the subtree; `train.ACCUM
        = ...` may write it through a name bound to `cfg.TRAIN`)."""
        return [guards for guards, _ in self.writes(keys)]

    def writes(self, keys: tuple[str, ...]) -> list[tuple[Guards, ast.expr | None]]:
        """Each assignment that may write the setting at `keys` (as `rewritten`): the `if`s
        around it, and the value it writes there (None where it writes the setting's subtree,
        or no single value: `cfg.TRAIN = ...`, `a, b = ...`, `+=`)."""
        runs = {keys[start:end] for start in range(len(keys)) for end in range(start + 1, len(keys) + 1)}
        return [(guards, value if path == keys else None) for path, guards, value in self.assigned if path in runs]

    def key_of(self, path: tuple[str, ...]) -> tuple[str, ...] | None:
        """The declared key path that an attribute path read past its root (`("cfg", "TRAIN",
        "ACCUM")` of `self.cfg.TRAIN.ACCUM`) names: itself, or it less leading names that
        start no declared key; None where it names none."""
        heads = {key[0] for key in self.defaults}
        while path:
            if path in self.defaults:
                return path
            if path[0] in heads:
                return None
            path = path[1:]
        return None


def _config_roots(tree: ast.Module, classes: set[str]) -> set[str]:
    """The names the module binds at its top level to a new yacs config (`_C = CN()`)."""
    return {
        statement.targets[0].id for statement in tree.body
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Call) and _called(statement.value) in classes
    }


def _node_names(tree: ast.Module) -> set[str]:
    """The names the module calls a yacs CfgNode by (`CN` of `from yacs.config import CfgNode as
    CN`, `yacs.config.CfgNode`)."""
    found = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {alias.asname or alias.name for alias in node.names if f"{node.module}.{alias.name}" in CFG_NODES}
        elif isinstance(node, ast.Import):
            found |= {f"{alias.asname or alias.name}.{name.rpartition('.')[2]}" for alias in node.names for name in CFG_NODES
                      if name.startswith(alias.name + ".")}
    return found


def _node_call(value: ast.expr, classes: set[str]) -> bool:
    """`CN()`: a new subtree."""
    return isinstance(value, ast.Call) and _called(value) in classes


def _flat(targets):
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from _flat(target.elts)
        else:
            yield target.value if isinstance(target, ast.Starred) else target


def _own_calls(statement: ast.stmt):
    """The calls of `statement` itself, not of the statements nested in it (each is visited on its own)."""
    nested = (ast.stmt, ast.ExceptHandler)
    pending = [child for child in ast.iter_child_nodes(statement) if not isinstance(child, nested)]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call):
            yield node
        pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, nested))


def _called(call: ast.Call) -> str:
    parts = attribute_path(call.func) if isinstance(call.func, ast.Attribute) else (call.func.id,) if isinstance(call.func, ast.Name) else None
    return ".".join(parts) if parts else ""


def _literal(value: ast.expr) -> object:
    try:
        found = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_SHOWN
    return found if found is None or isinstance(found, (bool, int, float, str)) else NOT_SHOWN


def _statements(body: list[ast.stmt], guards: Guards):
    """Each statement of `body` at any depth, with the `if` tests around it in its function
    (a function's own statements start with none)."""
    for statement in body:
        yield statement, guards
        if isinstance(statement, ast.If):
            yield from _statements(statement.body, (*guards, (statement.test, True)))
            yield from _statements(statement.orelse, (*guards, (statement.test, False)))
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _statements(statement.body, ())
        else:
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(statement, name, None)
                if isinstance(inner, list):
                    yield from _statements([s for s in inner if isinstance(s, ast.stmt)], guards)
            for handler in getattr(statement, "handlers", None) or ():
                yield from _statements(handler.body, guards)


def yacs_value(written: str | None, default: object) -> object:
    """The value yacs's `merge_from_list` gives a setting of `default` for the word a command
    writes: the word read by `ast.literal_eval`, the word itself where that fails; NOT_SHOWN
    where the command writes none, a shell variable or a placeholder (`$ACC`, `<steps>`,
    `[224 or 320]`), or a value of another type (yacs refuses it: the run stops)."""
    text = (written or "").strip("'\"")
    if not text or text.startswith("-") or any(mark in text for mark in "$`{<["):
        return NOT_SHOWN
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = text
    same = type(value) is type(default) or default is None or value is None
    return value if same and (value is None or isinstance(value, (bool, int, float, str))) else NOT_SHOWN
