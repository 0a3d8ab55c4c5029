"""The values a setting read from a configuration file takes in the runs the project ships.

A count a script reads from its config file (`cfg = json.load(open(path))` ...
`self.accum = cfg["train"]["accum_grad"]` ... `for _ in range(self.accum):`) is what the file the
run loads gives for that key path. The file is the one the path names where it is one of the
project's (a literal, a constant, a parameter's default that every call leaves it at, an option's
default that no launch command changes); where the path is not shown (an option the user must
pass, a file the project does not hold), it is one of the config files of that format that the
project keeps nearest the script (ProjectView.nearest_configs). A key path none of those files
holds has no value shown: a run that reads it fails, or reads a file the project does not ship.

The chain is followed through names bound once (`accum = cfg["train"]["accum"]`), `self`
attributes its class binds once (`self.cfg = OmegaConf.load(path)` in `__init__`, read in
`train`), wrappers that keep the keys (`AttrDict(json.load(f))`), attribute reads of the keys
(`cfg.train.accum_grad`, OmegaConf's and AttrDict's), `cfg.get("key", default)`, and
`with open(path) as f: cfg = yaml.safe_load(f)`.
"""

from __future__ import annotations

import libcst as cst

from ddplint.analyses.options import UNKNOWN, ParserOptions, literal
from ddplint.semantic.model import Analysis, Frame, Scope, SemanticModel

# loader -> the format of the file it reads
CONFIG_LOADERS = {
    "json.load": "json", "yaml.load": "yaml", "yaml.safe_load": "yaml", "yaml.full_load": "yaml",
    "yaml.unsafe_load": "yaml", "omegaconf.OmegaConf.load": "yaml",
}
# classes and functions that hand a loaded mapping on with its keys (last name)
_WRAPPERS = frozenset({
    "AttrDict", "EasyDict", "edict", "Munch", "munchify", "DotMap", "Box", "ConfigDict", "DictConfig", "create",
    "HParams", "dict",
})
MAX_DEPTH = 8


class ConfigValues(Analysis):
    """Read `run_values` after the walk."""

    requires = (ParserOptions,)

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self._frames: dict[int, Frame] = {}  # a function's scope (id) -> its frame
        # (class, attribute) -> each value a method assigns `self.<attribute>` (None: not a plain
        # assignment), with the scope it is read in
        self._attributes: dict[tuple[int, str], list[tuple[cst.BaseExpression | None, Scope]]] = {}
        self._opened: dict[tuple[int, str], cst.BaseExpression] = {}  # (scope, f) of `with open(path) as f` -> path

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._frames[id(self.model.frame.scope)] = self.model.frame

    def _self_attribute(self, target: cst.BaseExpression) -> tuple[int, str] | None:
        frame = self.model.function
        if (
            frame is None or frame.self_class is None or not isinstance(target, cst.Attribute)
            or not isinstance(target.value, cst.Name) or target.value.value != frame.self_name
        ):
            return None
        return id(frame.self_class), target.attr.value

    def _assigned(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        for element in target.elements if isinstance(target, (cst.Tuple, cst.List)) else ():
            self._assigned(element.value, None)
        key = self._self_attribute(target)
        if key is not None:
            self._attributes.setdefault(key, []).append((value, self.model.scope))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assigned(target.target, node.value if len(node.targets) == 1 else None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._assigned(node.target, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._assigned(node.target, node.value)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if (
                isinstance(call, cst.Call) and call.args and self.model.qualified(call.func) in ("open", "builtins.open")
                and item.asname is not None and isinstance(item.asname.name, cst.Name)
            ):
                self._opened[(id(self.model.scope), item.asname.name.value)] = call.args[0].value

    # -- after the walk -------------------------------------------------------------------

    def run_values(self, expr: cst.BaseExpression, scope: Scope | None, depth: int = 0) -> frozenset | None:
        """The values `expr`, read in `scope`, takes in the runs the project ships (through
        names and `self` attributes bound once): for a read of a config file, those that the
        config files such a run may load give for its key path (none where no such file holds
        it); else the integer every documented run gives it (ParserOptions.default_for); None
        where not shown."""
        if depth > MAX_DEPTH:
            return None
        bound = self._bound(expr, scope)
        if bound is not None:
            return self.run_values(*bound, depth + 1)
        read = self._key_path(expr, scope, depth)
        if read is None:
            value = self.model.get(ParserOptions).default_for(expr, scope)
            return frozenset({value}) if value is not None else None
        files, keys, default = read
        view = self.model.project
        values: set = set()
        for path in files:
            found = view.config_value(path, keys)
            if found:
                values.add(found[0])
            elif default is not UNKNOWN:
                values.add(default)
        return frozenset(value for value in values if isinstance(value, (int, float, str, bool)) or value is None)

    def reads_config(self, expr: cst.BaseExpression, scope: Scope | None, depth: int = 0) -> bool:
        """Whether `expr`, read in `scope`, is a read of a loaded config file (through names
        and `self` attributes bound once): `run_values` gives what the shipped files hold."""
        bound = self._bound(expr, scope) if depth <= MAX_DEPTH else None
        if bound is not None:
            return self.reads_config(*bound, depth + 1)
        return depth <= MAX_DEPTH and self._key_path(expr, scope, depth) is not None

    def _bound(self, expr: cst.BaseExpression, scope: Scope | None) -> tuple[cst.BaseExpression, Scope | None] | None:
        """What a name bound once by a plain assignment (`accum = cfg["accum"]`), or a `self`
        attribute its class assigns once (`self.cfg = json.load(f)`), holds, and the scope it
        is read in; None for anything else."""
        if isinstance(expr, cst.Name):
            value = self.model.constant(expr.value, scope)
            return (value, self.model.binding_scope(expr.value, scope)) if value is not None else None
        frame = self._frames.get(id(scope)) if scope is not None else None
        if (
            frame is None or frame.self_class is None or not isinstance(expr, cst.Attribute)
            or not isinstance(expr.value, cst.Name) or expr.value.value != frame.self_name
        ):
            return None
        assigned = self._attributes.get((id(frame.self_class), expr.attr.value), [])
        return assigned[0] if len(assigned) == 1 and assigned[0][0] is not None else None

    def _key_path(self, expr: cst.BaseExpression, scope: Scope | None, depth: int):
        """(the config files a run may load, the key path `expr` reads from what it loaded,
        the default `.get` gives where a file lacks it, UNKNOWN for none) for a read of a loaded
        config (`cfg["train"]["accum"]`, `cfg.train.accum`, `cfg.get("accum", 1)`); None for
        anything else."""
        keys: list[str] = []
        default = UNKNOWN
        node = expr
        while True:
            if depth > MAX_DEPTH:
                return None
            source = self._loaded(node, scope, depth)
            if source is not None:
                if not keys:
                    return None
                files, prefix = source
                return files, (*prefix, *reversed(keys)), default
            bound = self._bound(node, scope) if keys else None
            if bound is not None:
                node, scope = bound
                depth += 1
                continue
            step = _key_step(node)
            if step is None:
                return None
            node, key, get_default = step
            if get_default is not UNKNOWN and not keys:
                default = get_default
            keys.append(key)

    def _loaded(self, expr: cst.BaseExpression, scope: Scope | None, depth: int):
        """(the files, the key path already read) where `expr` is a loaded config: a loader's
        call (`json.load(open(path))`, `OmegaConf.load(path)`), a wrapper of one, or a name or
        `self` attribute bound once to one, or to a part of one; None otherwise."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, cst.Call):
            qualified = self.model.qualified(expr.func) or ""
            kind = CONFIG_LOADERS.get(qualified)
            first = expr.args[0].value if expr.args and expr.args[0].keyword is None and not expr.args[0].star else None
            if kind is not None and first is not None:
                return self._files(self._path_of(first, scope), kind, scope), ()
            if first is not None and len(expr.args) == 1 and qualified.rpartition(".")[2] in _WRAPPERS:
                return self._loaded(first, scope, depth + 1)
            return None
        bound = self._bound(expr, scope)
        if bound is None:
            return None
        source = self._loaded(*bound, depth + 1)
        if source is not None:
            return source
        read = self._key_path(bound[0], bound[1], depth + 1)
        return (read[0], read[1]) if read is not None and read[2] is UNKNOWN else None

    def _path_of(self, argument: cst.BaseExpression, scope: Scope | None) -> cst.BaseExpression | None:
        """The path a loader reads: the argument, the path of `open(path)`, or that of the
        `with open(path) as f` whose `f` it is handed."""
        if isinstance(argument, cst.Call) and argument.args and self.model.qualified(argument.func) in ("open", "builtins.open"):
            return argument.args[0].value
        if isinstance(argument, cst.Name):
            owner = self.model.binding_scope(argument.value, scope)
            opened = self._opened.get((id(owner), argument.value)) if owner is not None else None
            if opened is not None:
                return opened
        return argument

    def _files(self, path: cst.BaseExpression | None, kind: str, scope: Scope | None) -> tuple[str, ...]:
        """The project's config files of `kind` that a run loads from `path`: those its shown
        values name, where each names one; else those nearest the module."""
        view = self.model.project
        if view is None:
            return ()
        written = self._paths(path, scope) if path is not None else None
        shipped = [view.shipped_config(text, kind) for text in written or ()]
        if written and all(shipped):
            return tuple(dict.fromkeys(shipped))  # type: ignore[arg-type]
        return view.nearest_configs(kind)

    def _paths(self, expr: cst.BaseExpression, scope: Scope | None, depth: int = 0) -> list[str] | None:
        """The path strings every documented run gives `expr`: a literal, a name bound once to
        one, a parameter's default that every call of the function leaves or gives a literal,
        or an option's default no launch command changes; None where not shown."""
        text = self.model.string_value(expr)
        if text is not None:
            return [text]
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            bound = self._bound(expr, scope)
            if bound is not None:
                return self._paths(*bound, depth + 1)
            return self._parameter_paths(expr.value, scope)
        value = self.model.get(ParserOptions).documented(expr, scope)
        return [value] if isinstance(value, str) else None

    def _parameter_paths(self, name: str, scope: Scope | None) -> list[str] | None:
        """What every call of the function whose parameter `name` is gives it, as literal
        strings; None where a call gives anything else, or no call is known."""
        view = self.model.project
        owner = self.model.binding_scope(name, scope)
        frame = self._frames.get(id(owner)) if owner is not None else None
        if view is None or frame is None or frame.key is None:
            return None
        passed = view.context.passed_or_default(view.module, frame.key, name)
        found = []
        for _, text, _ in passed or ():
            try:
                value = literal(cst.parse_expression(text))
            except cst.ParserSyntaxError:
                return None
            if not isinstance(value, str):
                return None
            found.append(value)
        return found or None


def _key_step(expr: cst.BaseExpression):
    """(what is read from, the key, the default of `.get`, UNKNOWN for none) for one step of
    a key path: `x["key"]`, `x.key`, `x.get("key", default)`; None for anything else."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key = literal(expr.slice[0].slice.value)
        return (expr.value, key, UNKNOWN) if isinstance(key, str) else None
    if isinstance(expr, cst.Attribute):
        return expr.value, expr.attr.value, UNKNOWN
    if (
        isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get"
        and 1 <= len(expr.args) <= 2 and all(a.keyword is None and not a.star for a in expr.args)
    ):
        key = literal(expr.args[0].value)
        default = literal(expr.args[1].value) if len(expr.args) == 2 else None
        return (expr.func.value, key, default) if isinstance(key, str) else None
    return None
