"""The command-line options a module's argparse parser declares, read from CPython's `ast`, for
a script whose parser is built in another module of the project (`from utils.opts import
parse_args`): ddplint.analyses.options reads the script's own parser, and asks the project
(ProjectView.imported_options) for the options of the modules it imports."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

NOT_SHOWN = object()  # an option's value where a run does not pass it, when the code does not show it
Setting = Callable[[tuple[str, ...]], object]  # the value of a setting read by its attribute path, or NOT_SHOWN
# argparse's default where `default=` is left out, by `action=`; other actions: not shown
_IMPLIED = {None: None, "store": None, "store_true": False, "store_false": True}


@dataclass
class DeclaredOptions:
    """`options`: the attribute argparse stores each option under -> (its option strings, the
    value it gets unless passed, or NOT_SHOWN); `rebound`: attributes the modules assign
    (`args.seed = cfg.seed`, `set_defaults(seed=...)`); `dynamic`: options set by name
    (`setattr(args, k, v)`, `vars(args).update(cfg)`, `parser.set_defaults(**cfg)`), so any may be; `fills_unset`: options set
    by name only where they are None (`if getattr(args, k) is None: setattr(args, k, v)`), so
    any left at None may be. `parameters`: (function, parameter) -> (its option strings, the
    value it gets unless passed, or NOT_SHOWN), for a function whose parameters are the module's
    command line (`fire.Fire(main)`: `def main(epochs: int = 1)` reads `--epochs`, or its
    place among the positional arguments), where the function never rebinds the parameter.
    `converted`: options rebound once, from their own parsed value alone (`args.resume = True if
    args.resume == 'True' else False`) -> that value (`ast`); None where rebound more than once.
    `texts`: options argparse stores as the word passed (no `type=` or `type=str`, no `action=`,
    no `nargs=`), whatever their default (`--dali`, default None). `flags`: options a
    `store_true` or `store_false` action stores -> the value passing the flag gives (True for
    `store_true` also where its default is True)."""

    options: dict[str, tuple[tuple[str, ...], object]] = field(default_factory=dict)
    rebound: set[str] = field(default_factory=set)
    dynamic: bool = False
    fills_unset: bool = False
    parameters: dict[tuple[str, str], tuple[tuple[str, ...], object]] = field(default_factory=dict)
    converted: dict[str, ast.expr | None] = field(default_factory=dict)
    texts: set[str] = field(default_factory=set)
    flags: dict[str, bool] = field(default_factory=dict)

    def shown(self, name: str) -> tuple[list[str], object] | None:
        """The option strings of the option stored under `name` and the value it gets unless
        passed, where the code shows that value; None otherwise."""
        declared = self.options.get(name)
        hidden = declared is None or declared[1] is NOT_SHOWN or declared[1] is None and self.fills_unset
        return None if hidden else (list(declared[0]), declared[1])

    def add(self, other: DeclaredOptions) -> None:
        """Take in another module's: an option two modules declare differently is not shown."""
        for name, declared in other.options.items():
            mine = self.options.setdefault(name, declared)
            if mine != declared:
                self.options[name] = (mine[0], NOT_SHOWN)
        for key, declared in other.parameters.items():
            mine = self.parameters.setdefault(key, declared)
            if mine != declared:
                self.parameters[key] = (mine[0], NOT_SHOWN)
        for name, value in other.converted.items():
            self.converted[name] = value if name not in self.converted else None
        self.rebound |= other.rebound
        self.texts |= other.texts
        self.flags.update(other.flags)
        self.dynamic = self.dynamic or other.dynamic
        self.fills_unset = self.fills_unset or other.fills_unset


def declared_options(tree: ast.Module) -> DeclaredOptions:
    found = DeclaredOptions()
    filling = {id(call) for call in _setattrs_filling_unset(tree)}
    spelled = _setattrs_spelled_out(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.rebound.update(target.attr for target in targets if isinstance(target, ast.Attribute))
            for target in targets:
                if isinstance(target, ast.Attribute):
                    once = target.attr not in found.converted and isinstance(node, ast.Assign) and _converts(node.value, target.attr)
                    found.converted[target.attr] = node.value if once else None
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        sets_own = called == "setattr" and bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == "self"
        # an argparse Action storing what the run passes under its own option: `setattr(namespace, self.dest, v)`
        sets_dest = called == "setattr" and len(node.args) > 1 and ast.unparse(node.args[1]) == "self.dest"
        if id(node) in filling:
            found.fills_unset = True
        elif id(node) in spelled:
            found.rebound.update(spelled[id(node)])
            found.converted.update((name, None) for name in spelled[id(node)])
        elif called == "setattr" and not (sets_own or sets_dest) or (
            called == "update" and isinstance(func, ast.Attribute) and _calls(func.value, "vars")
        ):
            found.dynamic = True
        elif called == "set_defaults" and any(keyword.arg is None for keyword in node.keywords):
            found.dynamic = True  # `parser.set_defaults(**cfg)`: a mapping (a YAML config) sets any default
        elif called == "set_defaults":
            found.rebound.update(keyword.arg for keyword in node.keywords if keyword.arg is not None)
            found.converted.update((keyword.arg, None) for keyword in node.keywords if keyword.arg is not None)
        elif called == "add_argument":
            strings = tuple(arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str))
            keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg is not None}
            dest = keywords.get("dest")
            longs = [string for string in strings if string.startswith("--")]
            name = dest.value if isinstance(dest, ast.Constant) else longs[0][2:].replace("-", "_") if longs and dest is None else None
            if isinstance(name, str):
                found.options[name] = (strings, _unpassed_value(keywords))
                if _stores_text(keywords):
                    found.texts.add(name)
                action = keywords.get("action")
                if isinstance(action, ast.Constant) and action.value in ("store_true", "store_false"):
                    found.flags[name] = action.value == "store_true"
        elif called == "Fire" and len(node.args) == 1 and not node.keywords:
            found.parameters.update(_fire_parameters(tree, node.args[0]))
    return found


def _stores_text(keywords: dict[str, ast.expr]) -> bool:
    """Whether argparse stores the word a run passes as it is: no `action=`, no `nargs=`, and no
    `type=` other than `str`."""
    kind = keywords.get("type")
    return "action" not in keywords and "nargs" not in keywords and (kind is None or isinstance(kind, ast.Name) and kind.id == "str")


def conditional_tests(scope: ast.AST) -> tuple[tuple[ast.expr, bool, tuple[int, int], tuple[int, int]], ...]:
    """The tests of the conditional expressions in `scope` (`a if args.fsdp else b`), once for
    each of its branches, with whether that branch is the body and where the branch starts and
    ends (line and CPython's UTF-8 column offset): a position in [start, end) is in the branch."""
    return tuple(
        (node.test, sense, (branch.lineno, branch.col_offset), (branch.end_lineno or branch.lineno, branch.end_col_offset or 0))
        for node in ast.walk(scope) if isinstance(node, ast.IfExp)
        for branch, sense in ((node.body, True), (node.orelse, False))
    )


def _converts(value: ast.expr, name: str) -> bool:
    """Whether `value` is made of the option `name` itself (`args.<name>`, `self.args.<name>`)
    and literals alone: a conversion of what the run passed."""
    inner = {id(node.value) for node in ast.walk(value) if isinstance(node, ast.Attribute)}  # `args` of `args.x`
    read = False
    for node in ast.walk(value):
        if id(node) in inner:
            continue
        if isinstance(node, ast.Attribute):
            if node.attr != name:
                return False
            read = True
        elif isinstance(node, (ast.Name, ast.Call, ast.Subscript, ast.Lambda, ast.NamedExpr)):
            return False
    return read


def _fire_parameters(tree: ast.Module, exposed: ast.expr):
    """`fire.Fire(main)`, `main` a function of the module: each parameter it never rebinds is a
    command-line option, `--name` (also `--na-me` for `na_me`), whose value unless passed is its
    literal default (NOT_SHOWN where it has none: fire then wants it passed)."""
    functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    function = next((node for node in functions if isinstance(exposed, ast.Name) and node.name == exposed.id), None)
    if function is None:
        return
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    stored = {node.id for node in ast.walk(function) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    for argument, default in (*zip(positional, defaults), *zip(arguments.kwonlyargs, arguments.kw_defaults)):
        if argument.arg in stored:
            continue
        strings = tuple(dict.fromkeys((f"--{argument.arg}", f"--{argument.arg.replace('_', '-')}")))
        value = default.value if isinstance(default, ast.Constant) else NOT_SHOWN
        yield (function.name, argument.arg), (strings, value)


def _setattrs_filling_unset(tree: ast.Module):
    """`setattr(args, name, v)` calls that only fill options left at None: in the body of
    `if getattr(args, name) is None:` (open_clip's defaults by model name)."""
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
                and _calls(test.left, "getattr") and len(test.left.args) == 2):
            continue
        read = [ast.unparse(arg) for arg in test.left.args]
        for statement in node.body:
            call = statement.value if isinstance(statement, ast.Expr) else None
            if _calls(call, "setattr") and [ast.unparse(arg) for arg in call.args[:2]] == read:
                yield call


def _setattrs_spelled_out(tree: ast.Module) -> dict[int, tuple[str, ...]]:
    """`setattr` calls whose attribute names the code spells out (id -> those names): a string
    (`setattr(layer, "forward", fn)`), or the variable of a loop around the call over a literal
    sequence of strings, also through a name the module assigns once, to one (`for key in
    ["lr", "epochs"]: setattr(args, key, ...)`), where the loop's body does not rebind it."""
    stores: dict[str, int] = {}  # how many times the module binds each name
    values: dict[str, ast.expr] = {}  # its value, where a plain `name = value` binds it
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) or isinstance(node, ast.arg):
            name = node.id if isinstance(node, ast.Name) else node.arg
            stores[name] = stores.get(name, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    spelled: dict[int, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if _calls(node, "setattr") and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            spelled[id(node)] = (node.args[1].value,)
        if not (isinstance(node, ast.For) and isinstance(node.target, ast.Name)):
            continue
        bound_once = isinstance(node.iter, ast.Name) and stores.get(node.iter.id) == 1
        sequence = values.get(node.iter.id) if bound_once else node.iter  # type: ignore[union-attr]
        elements = sequence.elts if isinstance(sequence, (ast.List, ast.Tuple, ast.Set)) else None
        strings = tuple(e.value for e in elements or () if isinstance(e, ast.Constant) and isinstance(e.value, str))
        rebinds = any(
            isinstance(inner, ast.Name) and inner.id == node.target.id and not isinstance(inner.ctx, ast.Load)
            or isinstance(inner, ast.arg) and inner.arg == node.target.id
            for statement in node.body for inner in ast.walk(statement)
        )
        if elements is None or len(strings) != len(elements) or rebinds:
            continue
        for statement in node.body:
            for call in ast.walk(statement):
                if _calls(call, "setattr") and len(call.args) > 1 and isinstance(call.args[1], ast.Name) and call.args[1].id == node.target.id:
                    spelled[id(call)] = strings
    return spelled


def _calls(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _unpassed_value(keywords: dict[str, ast.expr]) -> object:
    """The value an option gets where a run does not pass it: its literal default (argparse
    converts a string default through a `type=` other than `str`: not shown; a list or tuple of
    literals, as a tuple), argparse's own for its action."""
    required = keywords.get("required")
    if required is not None and not (isinstance(required, ast.Constant) and required.value is False):
        return NOT_SHOWN
    if "default" in keywords:
        default = keywords["default"]
        if isinstance(default, ast.UnaryOp) and isinstance(default.op, ast.USub) and isinstance(default.operand, ast.Constant):
            default = ast.Constant(-default.operand.value) if type(default.operand.value) in (int, float) else default
        kind = keywords.get("type")
        if isinstance(default, (ast.List, ast.Tuple)):  # `nargs="+", default=[0, 1]`: argparse converts no element
            elements = default.elts
            return tuple(e.value for e in elements) if all(isinstance(e, ast.Constant) for e in elements) else NOT_SHOWN
        converted = kind is not None and not (isinstance(kind, ast.Name) and kind.id == "str")  # `type=str` keeps it
        if not isinstance(default, ast.Constant) or isinstance(default.value, str) and converted:
            return NOT_SHOWN
        return default.value
    action = keywords.get("action")
    if action is None:
        return None
    return _IMPLIED.get(action.value, NOT_SHOWN) if isinstance(action, ast.Constant) else NOT_SHOWN


_COMPARED = {
    ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.Eq: operator.eq, ast.NotEq: operator.ne,
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}


def test_value(test: ast.expr, option: Callable[[str], object], setting: Setting | None = None) -> bool | None:
    """Whether `test`, made of options (`args.use_ddp`, `self.args.load_optimizer`: an attribute
    whose value `option(name)` gives, NOT_SHOWN where it does not) and literals, compared, negated
    or combined, is true in every documented run (True), false in every one (False); None where
    that is not known. `setting`, where given, reads an attribute path that is no option
    (`config.TRAIN.ACCUM_STEPS`: `setting(("config", "TRAIN", "ACCUM_STEPS"))`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test_value(test.operand, option, setting)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [test_value(value, option, setting) for value in test.values]
        decides = isinstance(test.op, ast.Or)  # the value one part alone decides the whole by
        return decides if decides in parts else None if None in parts else not decides
    if isinstance(test, ast.Compare):
        if len(test.ops) != 1 or type(test.ops[0]) not in _COMPARED:
            return None
        left, right = _value(test.left, option, setting), _value(test.comparators[0], option, setting)
        if left is NOT_SHOWN or right is NOT_SHOWN:
            return None
        try:
            return bool(_COMPARED[type(test.ops[0])](left, right))
        except TypeError:  # `None > 0`: the run fails there, not known
            return None
    value = _value(test, option, setting)
    return None if value is NOT_SHOWN else bool(value)


def expression_value(expr: ast.expr, option: Callable[[str], object]) -> object:
    """The value of `expr`, made of options and literals (as for `test_value`; whole-number
    arithmetic of them, `args.nodes * args.gpus`, and the count of a string's parts,
    `len(args.gpu_ids.split(","))`), a conditional expression of them (`True if args.resume ==
    'True' else False`) or a test; NOT_SHOWN where that is not known."""
    if isinstance(expr, ast.IfExp):
        taken = test_value(expr.test, option)
        return NOT_SHOWN if taken is None else expression_value(expr.body if taken else expr.orelse, option)
    if isinstance(expr, (ast.Compare, ast.BoolOp)) or isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        truth = test_value(expr, option)
        return NOT_SHOWN if truth is None else truth
    return _value(expr, option)


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


def _value(expr: ast.expr, option: Callable[[str], object], setting: Setting | None = None) -> object:
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.BinOp) and type(expr.op) in _ARITHMETIC:  # `args.nodes * args.gpus`: whole numbers only
        left, right = _value(expr.left, option, setting), _value(expr.right, option, setting)
        if type(left) is not int or type(right) is not int or isinstance(expr.op, ast.FloorDiv) and right == 0:
            return NOT_SHOWN
        return _ARITHMETIC[type(expr.op)](left, right)
    if _calls(expr, "len") and len(expr.args) == 1 and not expr.keywords:  # `len(args.gpu_ids.split(","))`
        split = expr.args[0]
        if not (isinstance(split, ast.Call) and isinstance(split.func, ast.Attribute) and split.func.attr == "split"):
            return NOT_SHOWN
        text = _value(split.func.value, option)
        separator = _value(split.args[0], option) if len(split.args) == 1 and not split.keywords else NOT_SHOWN
        return len(text.split(separator)) if type(text) is str and type(separator) is str and separator else NOT_SHOWN
    # `args.x`, `self.args.x`, `self.opt.x`; not `self.x`, an object's own attribute
    if isinstance(expr, ast.Attribute) and not (isinstance(expr.value, ast.Name) and expr.value.id in ("self", "cls")):
        found = option(expr.attr)
        path = attribute_path(expr) if found is NOT_SHOWN and setting is not None else None
        return setting(path) if path is not None else found  # type: ignore[misc]
    return NOT_SHOWN


def attribute_path(expr: ast.Attribute) -> tuple[str, ...] | None:
    """(`config`, `TRAIN`, `ACCUM`) of `config.TRAIN.ACCUM`; None for anything but names and attributes."""
    parts: list[str] = []
    node: ast.expr = expr
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, *reversed(parts)) if isinstance(node, ast.Name) else None
