"""The command-line options a file's argparse parser declares, and the value a run gets for one.

A count read from an option (`num_workers=args.workers`, `for _ in range(args.accum_steps)`) is
what the run passes, or the option's default. Where no launch command of the project passes the
option and no document tells the user to set it (prose naming `--update-freq`), every documented
run gets the default: a default of 0 workers starts no worker, a default of 1 micro-batch
accumulates nothing. A count written as a literal, or as a name bound once to
one (`grad_step = 1`), is that number on every run. A parameter of a function
(`def train(model, accum_steps=1)`) holds what the calls of it pass (`train(model,
accum_steps=args.accum_steps)`), or its default where a call leaves it out: where every call
the program shows gives it the same value in every documented run, so does the parameter. So too for a test of options: under `if
args.seed is not None:` with `--seed` left at its default None by every launch command, the code
runs in no documented run.
"""

from __future__ import annotations

import operator
import re

import libcst as cst

from ddplint.analyses.branches import Branches
from ddplint.semantic.edits import keyword_argument
from ddplint.semantic.model import Analysis, dotted_name, Frame, Scope, SemanticModel
from ddplint.semantic.walk import descendants

UNKNOWN = object()  # a value no documented run is shown to have
# argparse's default where `default=` is left out, by `action=`; other actions: unknown
_IMPLIED = {None: None, "store": None, "store_true": False, "store_false": True}
_NAMED = {"None": None, "True": True, "False": False}
_COMPARE = {
    cst.Is: operator.is_, cst.IsNot: operator.is_not, cst.Equal: operator.eq, cst.NotEqual: operator.ne,
    cst.LessThan: operator.lt, cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
}
Branch = tuple[cst.BaseExpression, bool]  # an `if`'s test, and whether the code is in its `else`
MAX_CALLERS = 3  # a parameter handed on by parameters of the callers is followed this many calls up


def literal(expr: cst.BaseExpression | None):
    """The value of a literal (`0`, `-1`, `"x"`, `None`, `True`); UNKNOWN for anything else."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return expr.evaluated_value
    if isinstance(expr, cst.Name) and expr.value in _NAMED:
        return _NAMED[expr.value]
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        value = literal(expr.expression)
        return -value if type(value) in (int, float) else UNKNOWN
    return UNKNOWN


def _strings(sequence: cst.BaseExpression | None) -> tuple[str, ...] | None:
    """The strings of a literal list, tuple or set of strings (`["lr", "epochs"]`); None otherwise."""
    if not isinstance(sequence, (cst.List, cst.Tuple, cst.Set)):
        return None
    values = [element.value.evaluated_value if isinstance(element.value, cst.SimpleString) else None for element in sequence.elements]
    return tuple(values) if all(isinstance(value, str) for value in values) else None  # type: ignore[arg-type]


def _binds(body: cst.CSTNode, name: str) -> bool:
    """Whether `body` binds `name` (an assignment, a loop's or `with`'s target, `:=`)."""
    targets = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.WithItem, cst.CompFor, cst.Param)
    bound = (
        found.asname if isinstance(found, cst.WithItem) else found.name if isinstance(found, cst.Param) else found.target  # type: ignore[union-attr]
        for found in descendants(body) if isinstance(found, targets)
    )
    return any(isinstance(node, cst.Name) and node.value == name for target in bound if target is not None for node in descendants(target))


def _sets_own(call: cst.Call) -> bool:
    """`setattr(self, k, v)`: an object setting its own attributes, not a parsed namespace's."""
    first = call.args[0].value if call.args else None
    return isinstance(first, cst.Name) and first.value == "self"


class ParserOptions(Analysis):
    """Read `default_for`, `holds_in_every_run` and `never_runs` after the walk."""

    requires = (Branches,)

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        # the attribute argparse stores an option under -> (its option strings, the value it gets unless passed)
        self._options: dict[str, tuple[list[str], object]] = {}
        self._rebound: set[str] = set()  # attributes the file assigns (`args.seed = cfg.seed`)
        # attributes the file only appends to (`args.dist_url = args.dist_url + str(port)`): their
        # documented values are still what each starts with
        self._extended: set[str] = set()
        self._dynamic = False  # options set by name (`setattr(args, k, v)`, `vars(args).update(cfg)`)
        self._frames: dict[int, Frame] = {}  # a function's scope (id) -> its frame
        self._keys: dict[str, Frame | None] = {}  # a function's key (`train`, `Trainer.fit`) -> its frame; None: two

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frame = self.model.frame
        self._frames[id(frame.scope)] = frame
        if frame.key is not None:
            self._keys[frame.key] = None if frame.key in self._keys else frame

    def visit_Call(self, node: cst.Call) -> None:
        """`parser.add_argument("--num-workers", type=int, default=0)`."""
        func = node.func
        if isinstance(func, cst.Name) and func.value == "setattr" and not _sets_own(node):
            names = self._set_names(node)
            if names is None:
                self._dynamic = True
            else:
                self._rebound.update(names)
        if isinstance(func, cst.Attribute) and func.attr.value == "update" and isinstance(func.value, cst.Call) and (
            isinstance(func.value.func, cst.Name) and func.value.func.value == "vars"
        ):
            self._dynamic = True
        if isinstance(func, cst.Attribute) and func.attr.value == "set_defaults":
            self._rebound.update(arg.keyword.value for arg in node.args if arg.keyword is not None)
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return
        options = [arg.value.evaluated_value for arg in node.args if arg.keyword is None and isinstance(arg.value, cst.SimpleString)]
        longs = [option for option in options if isinstance(option, str) and option.startswith("--")]
        dest = keyword_argument(node, "dest")
        name = self.model.string_value(dest.value) if dest is not None else (longs[0][2:].replace("-", "_") if longs else None)
        if name is not None:
            self._options[name] = ([o for o in options if isinstance(o, str)], self._unpassed_value(node))

    def _set_names(self, node: cst.Call) -> tuple[str, ...] | None:
        """The attribute names a `setattr` call may set, where the code spells them out: a
        string (`setattr(layer, "forward", fn)`), or the variable of a loop around it over a
        literal sequence of strings, also through a name bound once to one (`for key in ["lr",
        "epochs"]: setattr(args, key, ...)`), that the loop's body does not rebind; None otherwise."""
        name = node.args[1].value if len(node.args) > 1 and node.args[1].keyword is None else None
        if isinstance(name, cst.SimpleString):
            return (name.evaluated_value,) if isinstance(name.evaluated_value, str) else None
        if not isinstance(name, cst.Name):
            return None
        for loop in reversed(self.model.loops):
            if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == name.value:
                sequence = self.model.constant(loop.iter.value) if isinstance(loop.iter, cst.Name) else loop.iter
                strings = _strings(sequence)
                return strings if strings is not None and not _binds(loop.body, name.value) else None
        return None

    def _unpassed_value(self, node: cst.Call):
        """The value an `add_argument` call's option gets where a run does not pass it."""
        default, action, required = (keyword_argument(node, word) for word in ("default", "action", "required"))
        if required is not None and literal(required.value) is not False:
            return UNKNOWN
        if default is not None:
            value = literal(default.value)
            kind = keyword_argument(node, "type")
            # argparse converts a string default with `type`, which leaves it as it is only for `str`
            converted = isinstance(value, str) and kind is not None and not (isinstance(kind.value, cst.Name) and kind.value.value == "str")
            return UNKNOWN if converted else value
        kind = self.model.string_value(action.value) if action is not None else None
        return _IMPLIED.get(kind, UNKNOWN) if action is None or kind is not None else UNKNOWN

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in (t.target for t in node.targets if isinstance(t.target, cst.Attribute)):
            appended = isinstance(node.value, cst.BinaryOperation) and isinstance(node.value.operator, cst.Add)
            extended = appended and dotted_name(node.value.left) == dotted_name(target)  # type: ignore[union-attr]
            (self._extended if extended and len(node.targets) == 1 else self._rebound).add(target.attr.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Attribute):
            (self._extended if isinstance(node.operator, cst.AddAssign) else self._rebound).add(node.target.attr.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Attribute) and node.value is not None:
            self._rebound.add(node.target.attr.value)

    def documented(self, expr: cst.BaseExpression | None, scope: Scope | None = None):
        """The value every documented run gets for `expr`, an option of this file's parser or,
        failing that, of a project module this file imports, or failing that, of the modules
        that import this one (a helper handed their parsed namespace) (`args.seed`, also through a name
        bound once to it: a module constant, or a local of the function whose `scope` is given):
        the value it has unless passed (its literal default; argparse's own where none is given),
        where no launch command of the project passes it another one and neither this file nor
        the parser's module sets it in another way; UNKNOWN otherwise."""
        return _unless_passed(self.model.project, self._declared(expr, scope))

    def documented_values(self, expr: cst.BaseExpression | None, scope: Scope | None = None, starts: bool = False):
        """Every value a documented run may give `expr` (as `documented` reads it): the option's
        value unless passed, then each value a launch command of the project passes it, as the
        shell hands it over (quotes taken off); UNKNOWN where one is not shown (a document tells
        the user to set it, a command passes the option with no value). With `starts`, what each
        value starts with, also where the file appends to the option (`args.dist_url += port`)."""
        return _run_values(self.model.project, self._declared(expr, scope, starts))

    def _declared(self, expr: cst.BaseExpression | None, scope: Scope | None, starts: bool = False):
        """The option `expr` reads (its option strings, its value unless passed), declared by
        this file's parser or one around it (`documented`); None or UNKNOWN where not shown."""
        if isinstance(expr, cst.Name) and self.model.constant(expr.value, scope) is not None:
            expr = self.model.constant(expr.value, scope)
        if not isinstance(expr, cst.Attribute) or self._dynamic or expr.attr.value in self._rebound:
            return UNKNOWN
        if expr.attr.value in self._extended and not starts:
            return UNKNOWN
        project = self.model.project
        declared = self._options.get(expr.attr.value)
        if declared is None and project is not None:
            declared = _declared_around(project, expr.attr.value, own=False)
        return declared

    def documented_in(self, module: str, expr: cst.BaseExpression):
        """The value every documented run gets for `expr` as another module of the project
        writes it (an integer literal, or `args.accum` of the parser that module declares,
        imports, or is handed by its importers: `documented` seen from there); UNKNOWN otherwise."""
        if isinstance(expr, cst.Integer):
            return int(expr.evaluated_value)
        project = self.model.project
        if project is None or not isinstance(expr, cst.Attribute):
            return UNKNOWN
        view = project.seen_from(module)
        return _unless_passed(view, _declared_around(view, expr.attr.value, own=True))

    def default_for(self, expr: cst.BaseExpression | None, scope: Scope | None = None, depth: int = 0) -> int | None:
        """The integer every documented run gets for `expr`: an integer literal (also through a
        name bound once to one, in `scope` or the module), an option (`documented`), or a
        parameter of the function whose `scope` is given (`parameter_value`); None otherwise."""
        if isinstance(expr, cst.Name) and self.model.constant(expr.value, scope) is not None:
            expr = self.model.constant(expr.value, scope)
        if isinstance(expr, cst.Integer):
            return int(expr.evaluated_value)
        if isinstance(expr, cst.Name) and scope is not None:
            owner = self.model.binding_scope(expr.value, scope)
            frame = self._frames.get(id(owner)) if owner is not None else None
            return self.parameter_value(frame, expr.value, depth) if frame is not None else None
        value = self.documented(expr, scope)
        return value if type(value) is int else None

    def parameter_value(self, frame: Frame, name: str, depth: int = 0) -> int | None:
        """The integer every documented run gives parameter `name` of the function of `frame`:
        the one every call of it in the project gives (`default_for` of what the call passes,
        read where the call is; the parameter's default where a call leaves it out), where every
        call that passes it is in this file (a call of another module may leave it out), and the
        function does not rebind the parameter; for a function no call passes it to but the
        module's command line (`fire.Fire(main)`), the value every documented run gives that option;
        None otherwise (one of its callers' parameters handed on is followed `MAX_CALLERS` up)."""
        project = self.model.project
        function = frame.function
        params = function.params if function is not None else None
        named = params is not None and any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params))
        if project is None or not named or depth >= MAX_CALLERS or self._keys.get(frame.key or "") is not frame:
            return None
        passed = project.context.passed_or_default(project.module, frame.key, name)
        entry = project.entry_parameter(frame.key, name)
        if entry is not None and not passed:  # the module's command line (`fire.Fire(main)`), not a call
            return entry if type(entry) is int else None
        values = set()
        for site, text, default in passed or ():
            here = site.caller == project.module  # a call of another module that leaves it out gives the default
            caller = None if default or not here or site.caller_key is None else self._keys.get(site.caller_key)
            if here and not default and site.caller_key is not None and caller is None:
                return None
            try:
                passed_expr = cst.parse_expression(text)
            except cst.ParserSyntaxError:  # `ast.unparse` text of syntax libcst does not read
                return None
            if default or here:
                values.add(self.default_for(passed_expr, caller.scope if caller is not None else self.model.module_scope, depth + 1))
            else:  # another module's call: a literal, or an option as that module sees it
                value = self.documented_in(site.caller, passed_expr)
                values.add(value if type(value) is int else None)
        return values.pop() if passed and len(values) == 1 else None

    def holds_in_every_run(self, test: cst.BaseExpression) -> bool | None:
        """Whether `test`, made of options of this file's parser (`documented`) and literals
        compared, negated or combined (`args.seed is not None`, `not args.fp16 and args.workers > 0`),
        is true in every documented run (True), false in every one (False); None where not known."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.holds_in_every_run(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            parts = (self.holds_in_every_run(test.left), self.holds_in_every_run(test.right))
            decides = isinstance(test.operator, cst.Or)  # the value one part alone decides the whole by
            return decides if decides in parts else None if None in parts else not decides
        if isinstance(test, cst.Comparison):
            if len(test.comparisons) != 1 or type(test.comparisons[0].operator) not in _COMPARE:
                return None
            left, right = self._value(test.left), self._value(test.comparisons[0].comparator)
            if left is UNKNOWN or right is UNKNOWN:
                return None
            try:
                return bool(_COMPARE[type(test.comparisons[0].operator)](left, right))
            except TypeError:  # `None > 0`: the run fails there, not known
                return None
        value = self._value(test)
        return None if value is UNKNOWN else bool(value)

    def _value(self, expr: cst.BaseExpression):
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo) and self.default_for(expr.right) == 1:
            return 0  # `step % args.accum_steps` with a count of 1: every step
        value = literal(expr)
        return self.documented(expr) if value is UNKNOWN else value

    def branches(self) -> tuple[Branch, ...]:
        """The `if`s around this point of the walk (their tests, and whether it is in their
        `else`), outermost first: keep them and ask `never_runs` after the walk, once every
        option is read."""
        return tuple((node.test, in_else) for node, (_, in_else) in zip(self.model.ifs, self.model.get(Branches).path))

    def never_runs(self, branches: tuple[Branch, ...]) -> bool:
        """Whether code under `branches` runs in no documented run: the test of one of them is
        false in every run (or true, for code in its `else`)."""
        return any(self.holds_in_every_run(test) is in_else for test, in_else in branches)


def declared_option(view, name: str):
    """The option stored under `name` as the parsers seen from `view`'s module declare it, its
    own first (`_declared_around`): (its option strings, the value it gets unless passed); None
    where none shows it, UNKNOWN where one of them may set it another way."""
    return _declared_around(view, name, own=True)


def _declared_around(view, name: str, own: bool):
    """The option stored under `name` (its option strings, the value it gets unless passed) as
    the parsers seen from `view`'s module declare it: its own (`own`), those of the modules it
    imports, those of the modules importing it, those the latter import; None where none shows
    it, UNKNOWN where one of them may set it another way (`args.seed = ...`, `setattr(args, k, v)`)."""
    found = (view.imported_options(), view.importer_options(), view.importer_parser_options())
    for options in ((view.own_options(),) if own else ()) + found:
        if options.dynamic or name in options.rebound:
            return UNKNOWN
        declared = options.shown(name)
        if declared is not None:
            return declared
    return None


def _unless_passed(view, declared):
    """The value a `declared` option gets in every documented run of `view`'s module: its value
    unless passed, where no launch command passes it another and no document tells the user to
    set it; UNKNOWN otherwise."""
    values = _run_values(view, declared)
    if values is UNKNOWN or any(type(values[0]) is not int or passed != str(values[0]) for passed in values[1:]):
        return UNKNOWN
    return values[0]


def _run_values(view, declared):
    """The values a `declared` option gets in the documented runs of `view`'s module: its value
    unless passed, then the text each launch command passes it (quotes taken off); UNKNOWN where
    a command passes it no value or a document tells the user to set it."""
    if declared is None or declared is UNKNOWN:
        return UNKNOWN
    strings, value = declared
    values = [value]
    for command in view.runs() if view is not None else ():
        for option in strings:
            written = rf"(?<![\w-]){re.escape(option)}(?![\w-])(?:(?:=|\s+)(\S+))?"
            for passed in re.finditer(written, command.command):
                if passed.group(1) is None:
                    return UNKNOWN
                values.append(passed.group(1).strip("'\""))
    if view is not None and any(view.describes_option(option, str(value)) for option in strings if option.startswith("--")):
        return UNKNOWN  # the documents tell the user to set it: runs may differ from every command shown
    return tuple(values)
