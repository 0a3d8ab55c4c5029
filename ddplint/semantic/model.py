"""The semantic model: what a name means and where the traversal is, for every rule.

The engine owns one model per file and moves it through the tree before any rule visits a
node and after every rule has left it, so a rule (or an analysis) asks the model instead of
keeping stacks of its own:

- names: `qualified(expr)` resolves through the file's imports, in the current scope;
  `string_value(expr)` reads literals and module constants bound once;
- place: the current `frame` (module, class body or function, with its key `Class.method`,
  the class `self` belongs to and `self`'s name), the open loops of the frame (`for` and
  `while`), the enclosing statement line and `if` statements, whether the walk is inside a
  parameter list;
- shared analyses (`ddplint.analyses`): a rule names the ones it needs in `analyses`; the
  engine builds each once per file, feeds it in the same walk, and `model.get(cls)` returns it.

`QualifiedNameProvider` answers the name question for every node of the tree and costs
several times the parse. Rules only ever ask about a handful of call targets, so names are
resolved cheaply instead:

1. Before the traversal, a walk over *statements only* (never into expressions) records every
   binding of every scope: imports with their qualified origin, and local bindings (assignments,
   parameters, `def`, `class`, `for`/`with`/`except` targets) that shadow them.
2. During the traversal the model knows which scope it is in, and a rule asks
   `qualified(expr)` for the few expressions it cares about.

Because all bindings are known before any rule runs, a module-level import that appears after
a function body still resolves inside that body, as it does at run time.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar, TypeVar

import libcst as cst

from ddplint.semantic.walk import Span, positions


_LOCAL = None  # a binding that is not an import: it shadows whatever was imported


class Scope:
    __slots__ = ("parent", "bindings", "constants", "values")

    def __init__(self, parent: Scope | None) -> None:
        # For a function scope, `parent` skips enclosing class scopes, as Python's lookup does.
        self.parent = parent
        self.bindings: dict[str, str | None] = {}
        # Names bound exactly once, by `NAME = <expression>`, with that expression.
        self.constants: dict[str, cst.BaseExpression | None] = {}
        # Every binding of each name, in order: the expression of a plain `NAME = <expression>`,
        # None for any other kind of binding (an import, a loop target, a parameter, ...).
        self.values: dict[str, list[cst.BaseExpression | None]] = {}

    def bind(self, name: str, origin: str | None, *, in_handler: bool = False) -> bool:
        """Bind `name`; False where the binding is ignored (see below)."""
        if origin is _LOCAL and in_handler and self.bindings.get(name) is not _LOCAL:
            # `try: import torch` / `except ImportError: torch = None` keeps the import's meaning.
            return False
        self.bindings[name] = origin
        self.values.setdefault(name, []).append(None)
        return True

    def owner(self, name: str) -> Scope | None:
        """The scope whose binding of `name` is seen from this one; None for a builtin or a
        name bound nowhere in the file."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings:
                return scope
            scope = scope.parent
        return None

    def lookup(self, name: str) -> tuple[bool, str | None]:
        """(whether `name` is bound in the file as seen from here, the origin it is bound to)."""
        owner = self.owner(name)
        return (True, owner.bindings[name]) if owner is not None else (False, None)


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of attributes ending in a name; None for anything else."""
    # Asked of nearly every expression by most rules: `type(...) is` (an `isinstance` against
    # a libcst class that does not match goes through ABCMeta's check, several times slower),
    # and a chain's answer is kept for the file being linted (`forget_names`).
    kind = type(expr)
    if kind is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if kind is not cst.Attribute:
        return None
    known = _chains.get(id(expr))
    if known is not None and known[0] is expr:
        return known[1]
    parts: list[str] = []
    node = expr
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    name = ".".join([node.value, *reversed(parts)]) if type(node) is cst.Name else None  # type: ignore[attr-defined]
    _chains[id(expr)] = (expr, name)
    return name


_chains: dict[int, tuple[cst.CSTNode, str | None]] = {}  # id of an Attribute -> (it, its dotted name)


def forget_names() -> None:
    """Drop the dotted names kept for the file linted last (the engine calls this per file)."""
    _chains.clear()


def _module_name(node: cst.BaseExpression | None) -> str:
    return dotted_name(node) or "" if node is not None else ""


def _unpacked(target: cst.BaseExpression, value: cst.BaseExpression) -> Iterator[tuple[str, cst.BaseExpression]]:
    """Each name of `target` with the expression it is bound to, where a tuple or list target
    takes a tuple or list of as many elements, none starred (`print_freq, accum = 20,
    args.accum`: `accum` is `args.accum`), at any depth; every name with `value` otherwise."""
    elements = target.elements if isinstance(target, (cst.Tuple, cst.List)) else None
    values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
    pairs = elements is not None and values is not None and len(elements) == len(values)
    if pairs and not any(isinstance(e, cst.StarredElement) for e in (*elements, *values)):  # type: ignore[misc]
        for element, bound in zip(elements, values):  # type: ignore[arg-type]
            yield from _unpacked(element.value, bound.value)
    else:
        yield from ((name, value) for name in _target_names(target))


def _target_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


@dataclass(eq=False)
class Frame:
    """The module, a class body or a function body, while the traversal is in it."""

    node: cst.Module | cst.ClassDef | cst.FunctionDef
    scope: Scope
    parent: Frame | None
    # The key same-module calls use: `Class.name` for a method, `name` for other functions,
    # None for the module and class bodies.
    key: str | None = None
    # The class whose instance `self` is here (methods and functions nested in them), and
    # the name of `self` (the method's first parameter).
    self_class: cst.ClassDef | None = None
    self_name: str | None = None
    loops: list[cst.For | cst.While] = field(default_factory=list)

    @property
    def is_function(self) -> bool:
        return isinstance(self.node, cst.FunctionDef)

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, cst.ClassDef)

    @property
    def function(self) -> cst.FunctionDef | None:
        return self.node if isinstance(self.node, cst.FunctionDef) else None

    @property
    def method(self) -> Frame | None:
        """The method this function frame is, or is nested in (a `def` directly in a class
        body); None outside methods."""
        frame: Frame = self
        while frame.is_function and frame.parent is not None and frame.parent.is_function:
            frame = frame.parent
        if frame.is_function and frame.parent is not None and frame.parent.is_class:
            return frame
        return None


class Analysis:
    """Facts several rules share (`ddplint.analyses`), gathered in the engine's one walk.

    Like a rule, an analysis has `visit_<Node>`/`leave_<Node>` methods; the engine builds one
    per file when an active rule names it in `analyses`, and calls its methods after the model
    moved and before any rule (on leaving: after every rule). It reads the model for names
    and place, and answers rules' questions through its own methods.
    """

    # Analyses this one reads (built before it, in the same walk).
    requires: ClassVar[tuple[type[Analysis], ...]] = ()

    def __init__(self, model: SemanticModel) -> None:
        self.model = model


def with_requirements(analyses) -> list[type[Analysis]]:
    """The analyses and those they require, each once, every one after those it requires."""
    ordered: list[type[Analysis]] = []

    def add(analysis: type[Analysis]) -> None:
        if analysis not in ordered:
            for required in analysis.requires:
                add(required)
            ordered.append(analysis)

    for analysis in analyses:
        add(analysis)
    return ordered


AnalysisT = TypeVar("AnalysisT", bound=Analysis)


class SemanticModel:
    """Scopes of one module, built once before the traversal, and the traversal's position."""

    # The nodes whose entering and leaving move the model; the engine calls `enter`/`leave`
    # around these only, before the rules' visits and after their leaves.
    TRACKED_NODES = (
        cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.If, cst.SimpleStatementLine, cst.Parameters,
    )

    def __init__(self, module: cst.Module, project=None, *, source: str | None = None, tree: ast.Module | None = None) -> None:
        self.module = module
        # The text `module` was parsed from and CPython's ast of it, where the engine has them:
        # a rule reads them instead of generating the module's code again (a codegen pass over
        # the whole file, which in an editor would be paid on every keystroke).
        self._source = source
        self._tree = tree
        # The file's view of its project index (ddplint.model.project.ProjectView), or None when
        # the file is linted alone: what other modules of the program define.
        self.project = project
        self.module_scope = Scope(None)
        self._scopes: dict[int, Scope] = {}
        self._stack: list[Scope] = [self.module_scope]
        # qualified's answers by (expression, scope): the bindings are all collected before
        # the walk, and most rules ask of the same call's function in the same scope
        self._qualified: dict[tuple[int, int], tuple[cst.BaseExpression, str | None]] = {}
        self._class_scopes: set[Scope] = set()
        self._collect(module.body, self.module_scope, in_handler=False)
        self.frame = Frame(module, self.module_scope, None)
        self.ifs: list[cst.If] = []
        self.statement: cst.SimpleStatementLine | None = None
        self._statements: list[cst.SimpleStatementLine] = []
        self.in_parameters = 0
        self._analyses: dict[type, Analysis] = {}

    @property
    def source(self) -> str:
        """The module's text."""
        if self._source is None:
            self._source = self.module.code
        return self._source

    def spans(self, nodes: Iterable[cst.CSTNode]) -> dict[int, Span]:
        """Where each of `nodes` is in the module (ddplint.semantic.walk.positions), by id:
        with the engine's ast, only the statements that hold them are generated."""
        return positions(self.module, nodes, tree=self._tree)[0]

    # -- names ------------------------------------------------------------------------------

    @property
    def scope(self) -> Scope:
        return self._stack[-1]

    def binding_scope(self, name: str, scope: Scope | None = None) -> Scope | None:
        """The scope whose binding of `name` is seen from `scope` (default: the current one);
        None for a builtin or a name bound nowhere in this file."""
        return (self.scope if scope is None else scope).owner(name)

    def qualified(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name `expr` refers to through this file's imports, or None."""
        kind = type(expr)
        if kind is not cst.Name and kind is not cst.Attribute:
            return None
        scope = self._stack[-1]
        key = (id(expr), id(scope))
        known = self._qualified.get(key)
        if known is not None and known[0] is expr:
            return known[1]
        answer = None
        name = dotted_name(expr)
        if name is not None:
            head, _, rest = name.partition(".")
            found, origin = scope.lookup(head)
            if found and origin is not None:
                answer = f"{origin}.{rest}" if rest else origin
        self._qualified[key] = (expr, answer)
        return answer

    def string_value(self, expr: cst.BaseExpression) -> str | None:
        """The value of a string literal, or of a module constant bound once to one."""
        if isinstance(expr, cst.Name):
            found, origin = self.scope.lookup(expr.value)
            if not found or origin is not None:
                return None
            expr = self.constant(expr.value)
            if expr is None:
                return None
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            value = expr.evaluated_value
            return value if isinstance(value, str) else None
        return None

    def string_prefix(self, expr: cst.BaseExpression) -> str | None:
        """The text a string expression starts with: its value (`string_value`), or the literal
        text before the first placeholder of `"tcp://{}:{}".format(...)`, `f"tcp://{host}"`,
        `"tcp://h:" + port` and `"tcp://h:%d" % port`, also through a name bound once to one;
        None when it starts with anything else."""
        value = self.string_value(expr)
        if value is not None:
            return value
        if isinstance(expr, cst.Name):
            bound = self.constant(expr.value) if self.qualified(expr) is None else None
            return None if bound is None else self.string_prefix(bound)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format":
            template = self.string_value(expr.func.value)
            return None if template is None else template.partition("{")[0]
        if isinstance(expr, cst.FormattedString):
            text = [part.value for part in itertools.takewhile(lambda part: isinstance(part, cst.FormattedStringText), expr.parts)]
            return "".join(text)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return self.string_prefix(expr.left)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo):
            template = self.string_value(expr.left)
            return None if template is None else template.partition("%")[0]
        return None

    def constant(self, name: str, scope: Scope | None = None) -> cst.BaseExpression | None:
        """The expression `name` (as seen from `scope`, default the current one) is bound to,
        where it is bound once by a plain assignment."""
        where = self.binding_scope(name, scope)
        return where.constants.get(name) if where is not None else None

    def assigned_values(self, name: str, scope: Scope | None = None) -> list[cst.BaseExpression] | None:
        """Every expression `name` (as seen from `scope`) is assigned, where each of its bindings
        in its scope is a plain `NAME = <expression>` (`path = "a/pretrained/x.pt"` in one branch,
        `path = "b/pretrained/y.pt"` in the other); None otherwise."""
        where = self.binding_scope(name, scope)
        values = where.values.get(name) if where is not None else None
        return list(values) if values and all(value is not None for value in values) else None  # type: ignore[arg-type]

    # -- place ------------------------------------------------------------------------------

    @property
    def function(self) -> Frame | None:
        """The innermost function frame around the current node (through class bodies)."""
        frame: Frame | None = self.frame
        while frame is not None and not frame.is_function:
            frame = frame.parent
        return frame

    @property
    def at_module_level(self) -> bool:
        return self.frame.parent is None

    @property
    def loops(self) -> list[cst.For | cst.While]:
        """The loops open in the current frame, outermost first."""
        return self.frame.loops

    # -- shared analyses --------------------------------------------------------------------

    def get(self, analysis: type[AnalysisT]) -> AnalysisT:
        """The file's instance of a shared analysis a rule declared it needs."""
        return self._analyses[analysis]  # type: ignore[return-value]

    def add_analysis(self, instance: Analysis) -> None:
        self._analyses[type(instance)] = instance

    def release(self) -> None:
        """Drop the analyses once the rules have reported. Each holds the model, which holds
        it: left so, the cycle keeps the file's tree alive until the cyclic collector finds
        it, and in a batch run collecting those trees cost about a tenth of the CPU."""
        self._analyses.clear()

    @property
    def analyses(self) -> list[Analysis]:
        return list(self._analyses.values())

    # -- traversal hooks, called by the engine around every rule --------------------------

    def enter(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.SimpleStatementLine:
            self._statements.append(node)  # type: ignore[arg-type]
            self.statement = node  # type: ignore[assignment]
        elif kind is cst.If:
            self.ifs.append(node)  # type: ignore[arg-type]
        elif kind is cst.For or kind is cst.While:
            self.frame.loops.append(node)  # type: ignore[arg-type]
        elif kind is cst.Parameters:
            self.in_parameters += 1
        else:
            self._enter_definition(node)  # type: ignore[arg-type]

    def leave(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.SimpleStatementLine:
            self._statements.pop()
            self.statement = self._statements[-1] if self._statements else None
        elif kind is cst.If:
            self.ifs.pop()
        elif kind is cst.For or kind is cst.While:
            self.frame.loops.pop()
        elif kind is cst.Parameters:
            self.in_parameters -= 1
        else:
            if id(node) in self._scopes:
                self._stack.pop()
            self.frame = self.frame.parent  # type: ignore[assignment]

    def _enter_definition(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        scope = self._scopes.get(id(node))
        if scope is not None:
            self._stack.append(scope)
        outer = self.frame
        frame = Frame(node, self.scope, outer, self_class=outer.self_class, self_name=outer.self_name)
        if isinstance(node, cst.FunctionDef):
            if outer.is_class:
                params = node.params.posonly_params or node.params.params
                frame.self_class = outer.node  # type: ignore[assignment]
                frame.self_name = params[0].name.value if params else None
                frame.key = f"{outer.node.name.value}.{node.name.value}"  # type: ignore[union-attr]
            else:
                frame.key = node.name.value
        else:
            frame.self_class = frame.self_name = None
        self.frame = frame

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
                if self.project is not None:  # the project knows what a star import of it binds
                    for name, origin in self.project.star_bindings().items():
                        scope.bind(name, origin)
                return
            # Relative imports keep their dots (`.utils.load`): never mistaken for torch's.
            module = "." * len(small.relative) + _module_name(small.module)
            for alias in small.names:
                imported = _module_name(alias.name)
                bound = alias.asname.name.value if alias.asname is not None else imported  # type: ignore[union-attr]
                scope.bind(bound, f"{module}.{imported}" if not module.endswith(".") else module + imported)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                for name, value in _unpacked(target.target, small.value):
                    first = name not in scope.bindings
                    bound = scope.bind(name, _LOCAL, in_handler=in_handler)
                    scope.constants[name] = value if first and len(small.targets) == 1 else None
                    if bound and len(small.targets) == 1 and isinstance(target.target, cst.Name):
                        scope.values[name][-1] = small.value
        elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
            # `NAME: Final[str] = value` binds as `NAME = value` does; the annotation adds nothing
            name = small.target.value
            first = name not in scope.bindings
            if scope.bind(name, _LOCAL, in_handler=in_handler):
                scope.values[name][-1] = small.value
            scope.constants[name] = small.value if first else None
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
