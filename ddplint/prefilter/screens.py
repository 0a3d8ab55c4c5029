"""The second prefilter: CPython's `ast` confirms that a rule's construct is really there.

Needles look at text, so `torch.load` in a docstring, `reduce` in `torch.gather`'s neighbour or
a `defaultdict` that never gets a lambda admit a file as surely as a real finding would. On the
files the needles admit, `ast.parse` (about a tenth of libcst's parse) and one walk over the tree
decide which rules can fire at all: a rule whose `screen` does not hold is not run, and a file
where no screen holds is never parsed by libcst.

A screen must hold in every file its rule can flag (it may hold in others): it over-approximates
the rule with the same facts, resolving call targets through every import in the file and
ignoring scopes and shadowing, which can only make it hold more often. The tests check this on
every flagged example, on mutated examples (test_fuzz_mutations) and on real code
(test_real_code: every finding made without screens must pass its rule's screen).

Screens are plain data (frozen dataclasses of strings and tuples), so the generated index
`ddplint.prefilter.index` can carry them to the flake8 plugin, which must not import libcst; the
dataclass repr is the Python that rebuilds them.
"""

from __future__ import annotations

import ast
import bisect
import warnings
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass


class Facts:
    """What screens ask about one module, gathered in a single walk of its ast."""

    __slots__ = (
        "origins", "imported", "calls_by_tail", "functions_with_defaults", "function_names", "classes", "strings",
        "keywords", "project_packages", "base_attributes", "may_test_rank", "may_save_call",
        "_tree", "_defs", "_lambda_names", "_local_callables",
        "_rank_code", "_ifs", "_tests", "_functions", "_returns", "_assignments",
    )

    def __init__(self, tree: ast.AST) -> None:
        # Every name an import binds anywhere in the file, with every qualified origin it gets.
        self.origins: dict[str, set[str]] = {}
        # What import statements name in full: `a.b` for `import a.b` (which binds only `a`).
        self.imported: set[str] = set()
        # Calls keyed by the callee's last name: `f` for `f(...)` and `a.b.f(...)`.
        self.calls_by_tail: dict[str, list[ast.Call]] = {}
        self.functions_with_defaults: list[ast.arguments] = []
        self.function_names: set[str] = set()  # every `def` of the file, at any depth
        self.classes: list[ast.ClassDef] = []
        # String literals (implicit concatenation already joined) and keyword-argument names.
        self.strings: set[str] = set()
        self.keywords: set[str | None] = set()
        # The top-level packages of the file's project (set by its hints): an import from one,
        # or a relative one, may bring a function whose body other modules' rules read.
        self.project_packages: frozenset[str] = frozenset()
        # What the project class an import binds (its origin) and its project bases assign
        # (ddplint.model.project.ProjectView.base_attributes; None: unknown), where the file is
        # screened with its project: None without one.
        self.base_attributes: Callable[[str], frozenset[str] | None] | None = None
        # Whether a call of the project function an import binds (its origin) may test the
        # rank (ddplint.model.project.ProjectView.may_test_rank), with the file's project.
        self.may_test_rank: Callable[[str], bool] | None = None
        # Whether a call through an import (its origin, with the attributes after it) may reach
        # another project module's function that may save (ProjectView.may_save_call).
        self.may_save_call: Callable[[str], bool] | None = None
        self._tree = tree
        self._defs: list[str] = []
        self._lambda_names: set[str] = set()  # names assigned a lambda, anywhere
        self._local_callables: frozenset[str] | None = None
        self._rank_code: _RankCode | None = None
        # What `rank_code` reads, gathered in this same walk (a second walk of the tree for it
        # cost about as much as this one, on the nine in ten files the needles admit that ask).
        self._ifs: list[ast.If] = []
        self._tests: list[ast.expr] = []
        self._functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self._returns: list[ast.Return] = []
        self._assignments: list[ast.stmt | ast.expr] = []
        stack: list = [tree]  # `_nodes`, inlined (no generator): the same nodes in the same order
        while stack:
            node = stack.pop()
            if node is None:
                continue
            kind = type(node)
            fields = _CHILD_FIELDS.get(kind)
            for name in _child_fields(kind) if fields is None else fields:
                value = getattr(node, name)
                if type(value) is list:
                    stack.extend(value)
                elif value is not None:
                    stack.append(value)
            if kind is ast.Call:
                tail = last_name(node.func)  # type: ignore[attr-defined]
                if tail is not None:
                    self.calls_by_tail.setdefault(tail, []).append(node)  # type: ignore[arg-type]
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                if kind is not ast.Lambda:
                    self._defs.append(node.name)  # type: ignore[attr-defined]
                    self._functions.append(node)  # type: ignore[arg-type]
                arguments = node.args  # type: ignore[attr-defined]
                if arguments.defaults or any(arguments.kw_defaults):
                    self.functions_with_defaults.append(arguments)
            elif kind is ast.Assign:
                if type(node.value) is ast.Lambda:  # type: ignore[attr-defined]
                    self._lambda_names.update(t.id for t in node.targets if type(t) is ast.Name)  # type: ignore[attr-defined]
                self._assignments.append(node)  # type: ignore[arg-type]
            elif kind is ast.If:
                self._ifs.append(node)  # type: ignore[arg-type]
                self._tests.append(node.test)  # type: ignore[attr-defined]
            elif kind is ast.IfExp:
                self._tests.append(node.test)  # type: ignore[attr-defined]
            elif kind is ast.Return:
                if node.value is not None:  # type: ignore[attr-defined]
                    self._returns.append(node)  # type: ignore[arg-type]
            elif kind is ast.AnnAssign or kind is ast.AugAssign or kind is ast.NamedExpr:
                self._assignments.append(node)  # type: ignore[arg-type]
            elif kind is ast.Constant:
                if type(node.value) is str:  # type: ignore[attr-defined]
                    self.strings.add(node.value)  # type: ignore[attr-defined]
            elif kind is ast.keyword:
                self.keywords.add(node.arg)  # type: ignore[attr-defined]
            elif kind is ast.ClassDef:
                self.classes.append(node)  # type: ignore[arg-type]
            elif kind is ast.Import:
                for alias in node.names:  # type: ignore[attr-defined]
                    if alias.asname is not None:
                        self._bind(alias.asname, alias.name)
                    else:
                        head = alias.name.partition(".")[0]
                        self._bind(head, head)
                        self.imported.add(alias.name)
            elif kind is ast.ImportFrom:
                module = "." * node.level + (node.module or "")  # type: ignore[attr-defined]
                for alias in node.names:  # type: ignore[attr-defined]
                    if alias.name != "*":
                        origin = module + alias.name if module.endswith(".") else f"{module}.{alias.name}"
                        self._bind(alias.asname or alias.name, origin)

        self.function_names.update(self._defs)

    @property
    def tree(self) -> ast.AST:
        """The ast the facts were gathered from."""
        return self._tree

    @property
    def local_callables(self) -> frozenset[str]:
        """Names that may hold a callable pickle cannot store by reference: a `def` inside a
        function or class body (where some def of that name is not at module level), or a
        name assigned a lambda."""
        if self._local_callables is None:
            nested = Counter(self._defs)
            nested.subtract(
                node.name for node in _walk_outside_classes(self._tree.body, into_functions=False)  # type: ignore[attr-defined]
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
            self._local_callables = frozenset(name for name, count in nested.items() if count > 0) | self._lambda_names
        return self._local_callables

    @property
    def assignments(self) -> list:
        """Every assignment of the file that binds a value (`=`, and annotated ones)."""
        return self._assignments

    @property
    def rank_code(self) -> _RankCode:
        """What RankZeroCalls reads of the module, gathered once (a rule's screen and its project
        screen may both ask)."""
        if self._rank_code is None:
            self._rank_code = _RankCode(self._functions, self._ifs, self._tests, self._returns, self._assignments)
        return self._rank_code

    def _bind(self, name: str, origin: str) -> None:
        self.origins.setdefault(name, set()).add(origin)
        self.imported.add(origin)

    def from_project(self, name: str) -> bool:
        """Whether some import binds `name` to a module of the project (or a relative one)."""
        return any(
            origin.startswith(".") or origin.partition(".")[0] in self.project_packages
            for origin in self.origins.get(name, ())
        )

    def qualified(self, expr: ast.expr) -> set[str]:
        """Every qualified name `expr` may refer to through some import of the file."""
        name = dotted(expr)
        if name is None:
            return set()
        head, _, rest = name.partition(".")
        return {f"{origin}.{rest}" if rest else origin for origin in self.origins.get(head, ())}

    def calls_to(self, targets: tuple[str, ...]) -> list[ast.Call]:
        """Calls whose callee may be one of the qualified `targets`."""
        wanted = set(targets)
        tails = {target.rpartition(".")[2] for target in targets}
        tails.update(name for name, origins in self.origins.items() if origins & wanted)
        return [
            call
            for tail in tails
            for call in self.calls_by_tail.get(tail, ())
            if self.qualified(call.func) & wanted
        ]


# Fields that never hold a child node, or hold only `Load`/`Store` contexts and operators:
# skipping them leaves a third fewer nodes to visit than `ast.walk`, which made screening the
# files the needles admit about a third cheaper.
_LEAF_FIELDS = frozenset({
    "ctx", "op", "id", "attr", "name", "arg", "asname", "module", "level", "type_comment", "kind", "conversion",
    "is_async", "simple", "kwd_attrs", "rest", "tag", "lineno", "ops",
})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    found = _CHILD_FIELDS.get(cls)
    if found is None:
        found = tuple(
            name
            for name in cls._fields  # type: ignore[attr-defined]
            if name not in _LEAF_FIELDS
            and not (name == "value" and cls in (ast.Constant, ast.MatchSingleton))
            and not (name == "names" and cls in (ast.Global, ast.Nonlocal))
        )
        _CHILD_FIELDS[cls] = found
    return found


def _nodes(tree: ast.AST):
    """Every node of `tree` that a screen can ask about, in no particular order."""
    stack: list = [tree]
    while stack:
        node = stack.pop()
        if node is None:  # `None` in a list: a missing default, a `**` dict entry
            continue
        yield node
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if type(value) is list:
                stack.extend(value)
            elif value is not None:
                stack.append(value)


def nodes(tree: ast.AST):
    """Every node of `tree` that `ast.walk` gives, less the contexts and operators, in no
    particular order: for a question that gathers a set."""
    return _nodes(tree)


def walk(tree: ast.AST):
    """The nodes of `tree` in `ast.walk`'s order (breadth first), less the contexts and
    operators `_nodes` skips too: the program model's walks, about twice as fast."""
    queue = deque([tree])
    while queue:
        node = queue.popleft()
        yield node
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if type(value) is list:
                queue.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                queue.append(value)


def _may_be_local_callable(value: ast.expr, facts: Facts) -> bool:
    while isinstance(value, ast.Call) and last_name(value.func) == "partial" and value.args:
        value = value.args[0]
    if isinstance(value, ast.Starred):
        value = value.value
    return isinstance(value, ast.Lambda) or (isinstance(value, ast.Name) and value.id in facts.local_callables)


def _may_be_made(value: ast.expr, facts: Facts) -> bool:
    """A callable passed by keyword that a call makes (`collate_fn=get_collate_fn(keys)`), or a
    name the file binds to a call's result: a function of the project may return a closure."""
    if isinstance(value, ast.Name):
        return any(
            isinstance(t, ast.Name) and t.id == value.id and _is_factory_call(node.value)
            for node in facts.assignments for t in getattr(node, "targets", None) or [getattr(node, "target", None)]
        )
    return _is_factory_call(value)


def _is_factory_call(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and last_name(value.func) != "partial"


def last_name(func: ast.expr) -> str | None:
    """The last name of a callee: `f` of `f(...)`, `step` of `opt.step(...)`; None for any other."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def dotted(expr: ast.expr) -> str | None:
    """`a.b.c` for a chain of attributes ending in a name (CPython's ast); None otherwise."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def facts_of(source: str) -> Facts | None:
    """Facts of a source text, or None when this Python cannot parse it (newer syntax, say):
    then no screen is applied and libcst decides."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            return Facts(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# -- the screens ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DistributedCode:
    """Code of the file that shows by itself that ranks run it: a call of a function of one of
    `modules` (the process-group API), of a name under one of `packages`, or of a qualified
    name in `targets` (DDP, a spawn of ranks, a launcher); a method named in `methods` on any
    receiver (a Fabric's `launch`); a class with a base in `bases` (a LightningModule); a
    string literal in `strings` (a rank environment variable read); or an import of a name
    under one of `imports`."""

    modules: tuple[str, ...]
    targets: tuple[str, ...]
    methods: tuple[str, ...]
    bases: tuple[str, ...]
    strings: tuple[str, ...]
    packages: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()

    def holds(self, facts: Facts) -> bool:
        if any(string in facts.strings for string in self.strings):
            return True
        if any(_under(name, self.imports) for name in facts.imported):
            return True
        if any(isinstance(call.func, ast.Attribute) for method in self.methods for call in facts.calls_by_tail.get(method, ())):
            return True
        if facts.calls_to(self.targets) or Subclasses(self.bases).holds(facts):
            return True
        modules = set(self.modules)
        return any(
            name.rpartition(".")[0] in modules or _under(name, self.packages)
            for calls in facts.calls_by_tail.values() for call in calls for name in facts.qualified(call.func)
        )


def _under(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


@dataclass(frozen=True)
class RankZeroCalls:
    """A call that rank 0 alone may reach (ddplint.analyses.ranks.RankRegions), of a collective
    (a qualified name in `targets`, or a method named in `methods` on any receiver: a
    framework object's), of a function of the file, or of anything where the file builds a
    model of `wrappers` (its forward): in a branch of an `if` whose test may tell rank
    0 from the others, after such an `if` that leaves the block, or in a function with a
    decorator of `decorators`, all in the same function. With `any_call`, a call of anything
    there (a helper of another module may run the collective).

    A test may tell the ranks apart where it names a rank (a name or attribute in `names`, any
    case; a call of `functions`; a string of `keys`, an environment variable or configuration
    key) or a main-process predicate (`predicates`), or a name that holds such a test: one the
    file assigns a value naming one, a function of the file whose body names one (or calls
    such a function), a call of a function imported from the project (its body is read in its
    module), or `self.<attribute>` where a class of the file derives from one the project
    imports (a base class elsewhere may set it)."""

    targets: tuple[str, ...]
    wrappers: tuple[str, ...]
    names: tuple[str, ...]
    predicates: tuple[str, ...]
    functions: tuple[str, ...]
    keys: tuple[str, ...]
    decorators: tuple[str, ...]
    methods: tuple[str, ...] = ()
    any_call: bool = False
    # the calls that start the process group: a flag they run under may be a rank test
    starts: tuple[str, ...] = ()

    def holds(self, facts: Facts) -> bool:
        code = facts.rank_code
        # where the file builds a wrapped model, any call may be its forward
        every_call = self.any_call or bool(facts.calls_to(self.wrappers))
        collectives = set(self.targets)
        names = facts.function_names

        def is_event(call: ast.Call) -> bool:
            func = call.func
            if every_call or facts.qualified(func) & collectives:
                return True
            if isinstance(func, ast.Attribute) and func.attr in self.methods:
                return True
            if isinstance(func, ast.Name):
                return func.id in names and func.id not in facts.origins
            return isinstance(func, ast.Attribute) and _head(func) == "self" and func.attr in names

        # Lines only: a call in a nested def or lambda counts too, which can only admit more.
        events = sorted(call.lineno for calls in facts.calls_by_tail.values() for call in calls if is_event(call))
        if not events:
            return False

        def event_between(first: int, last: int) -> bool:
            index = bisect.bisect_left(events, first)
            return index < len(events) and events[index] <= last

        tells = _RankTests(self, code, facts)
        for function in code.functions:
            if any(_last(d) in self.decorators for d in function.decorator_list) and event_between(function.lineno, function.end_lineno):
                return True
        for statement in code.ifs:
            body, orelse = statement.body, statement.orelse
            reaches = event_between(body[0].lineno, body[-1].end_lineno) or (
                bool(orelse) and event_between(orelse[0].lineno, orelse[-1].end_lineno)
            )
            if not reaches and not orelse and _leaves_block(body):
                # what follows in the block: up to the end of the enclosing function at most
                reaches = event_between(statement.end_lineno + 1, code.frame_end(statement))
            if reaches and tells(statement.test):
                return True
        return False

    def _names_rank(self, node: ast.AST) -> bool:
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = _last(node) or ""
            return name.lower() in self.names or name in self.predicates
        if isinstance(node, ast.Call):
            return _last(node.func) in self.functions or _last(node.func) in self.predicates
        return isinstance(node, ast.Constant) and type(node.value) is str and (
            node.value in self.keys or node.value.lower() in self.names
        )


class _RankCode:
    """What RankZeroCalls reads of a module: its functions, `if`s, assignments and returns
    (with their lines, which say which function holds them), gathered in the walk of `Facts`
    (in its order: the assignments' statements and expressions as it met them)."""

    def __init__(self, functions, ifs, tests, returns, assignments) -> None:
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = functions
        self.ifs: list[ast.If] = ifs
        self.assigned: dict[str, list[ast.expr]] = {}
        self.returns: list[ast.Return] = returns
        self.tests: list[ast.expr] = tests  # of `if`s and conditional expressions
        for node in assignments:
            value = node.value  # type: ignore[attr-defined]
            if value is None:
                continue
            targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
            for target in targets:
                for part in _nodes(target):
                    name = _last(part)
                    if name is not None:
                        self.assigned.setdefault(name, []).append(value)

    def frame_end(self, node: ast.stmt) -> int:
        """The last line of the innermost function around `node` (of the module, without one)."""
        inner = [f.end_lineno for f in self.functions if f.lineno < node.lineno <= f.end_lineno]  # type: ignore[operator]
        return min(inner) if inner else 1 << 30


class _RankTests:
    """Whether a test may tell rank 0 apart (see RankZeroCalls), with the names that may hold
    such a test resolved on demand."""

    def __init__(self, screen: RankZeroCalls, code: _RankCode, facts: Facts) -> None:
        self.screen, self.code, self.facts = screen, code, facts
        inherits = any(facts.from_project(_head(base) or "") for cls in facts.classes for base in cls.bases)
        # The names methods give their instance (`self`): `self.flag` may be set in a project
        # base class, `args.flag` may not.
        self.receivers = {
            _first_parameter(method) for cls in facts.classes for method in cls.body
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
        } if inherits else set()
        # Which flags the project base classes assign at all (None: any may be): the rank
        # analysis reads `self.flag` through the values those classes assign it, and a flag no
        # base assigns holds no test of theirs. Not where the file starts its process group
        # under a flag (`if self.distributed: dist.init_process_group()`), which may be one.
        self.inherited: frozenset[str] | None = None
        if self.receivers and facts.base_attributes is not None and not facts.calls_to(screen.starts):
            self.inherited = _inherited_attributes(facts)
        self._holders: dict[str, bool] = {}
        self._open: set[str] = set()  # names being resolved
        self._cycled = False  # whether the resolution under way met one of them
        self._met: set[str] = set()  # the names the outermost resolution under way has resolved

    def __call__(self, expr: ast.AST) -> bool:
        """`classify` reads a comparison by its sides' words, and resolves a name, an attribute
        or a call that is a whole operand of the test."""
        for atom in _operands(expr):
            if any(self.screen._names_rank(node) for node in _nodes(atom)):
                return True
            if isinstance(atom, (ast.Name, ast.Attribute, ast.Call)) and (
                isinstance(atom, ast.Call) and self.facts.from_project(_head(atom.func) or "") and self._judged(atom.func)
                # `self.flag` (one attribute of the first parameter) may be set in a base class
                or isinstance(atom, ast.Attribute) and isinstance(atom.value, ast.Name) and atom.value.id in self.receivers
                and (self.inherited is None or atom.attr in self.inherited)
                or self._holds(_last(atom))
            ):
                return True
        return False

    def _judged(self, func: ast.expr) -> bool:
        """Whether the body of the project function a call of `func` reaches may make it a test
        of the rank (Facts.may_test_rank; True without the project)."""
        judge = self.facts.may_test_rank
        name = dotted(func)
        if judge is None or name is None:
            return True
        head, _, rest = name.partition(".")
        return any(judge(f"{origin}.{rest}" if rest else origin) for origin in self.facts.origins.get(head, ()))

    def _holds(self, name: str | None) -> bool:
        """Whether `name` may hold a rank test: assigned a value that may be one, or a function
        of the file that may return one (a returned value, or an `if` test in its body)."""
        if name is None:
            return False
        if name in self._holders:
            return self._holders[name]
        if name in self._open:  # a cycle proves nothing, for now
            self._cycled = True
            return False
        outermost = not self._open
        if outermost:
            self._met.clear()
        self._met.add(name)
        code = self.code
        values: list[ast.AST] = list(code.assigned.get(name, ()))
        for function in code.functions:
            if function.name == name:
                first, last = function.lineno, function.end_lineno
                values += [r.value for r in code.returns if first <= r.lineno <= last]  # type: ignore[misc, operator]
                values += [t for t in code.tests if first <= t.lineno <= last]  # type: ignore[operator]
        outer, self._cycled = self._cycled, False
        self._open.add(name)
        found = any(self(value) for value in values)
        self._open.discard(name)
        if found or not self._cycled:  # a "no" that rested on an open name may change: not kept
            self._holders[name] = found
        elif outermost:
            # Nothing was open around it, so the search was whole: no name it met can lead to a
            # test either (`name` would, through it). Kept, or each cycle is searched again.
            self._holders.update(dict.fromkeys(self._met, False))
        self._cycled = outer or self._cycled
        return found


def _inherited_attributes(facts: Facts) -> frozenset[str] | None:
    """The attributes that the project base classes of the file's classes assign, as far as
    the project tells (Facts.base_attributes: every imported base is asked, a library's assigns
    none); None where some base is not found."""
    found: set[str] = set()
    for cls in facts.classes:
        for base in cls.bases:
            name = dotted(base)
            head, _, rest = (name or "").partition(".")
            if name is None:
                continue  # (any imported base: the program may find a project class where the
                # file's imports do not name the project's packages, beside the module or on sys.path)
            for origin in facts.origins.get(head, ()):
                assigned = facts.base_attributes(f"{origin}.{rest}" if rest else origin)  # type: ignore[misc]
                if assigned is None:
                    return None
                found |= assigned
    return frozenset(found)


def _first_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    parameters = [*function.args.posonlyargs, *function.args.args]
    return parameters[0].arg if parameters else None


def _operands(test: ast.AST):
    """The parts of a test `classify` judges one by one: through `not`, `and`, `or` and both
    values of a conditional expression."""
    pending = [test]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            pending.append(node.operand)
        elif isinstance(node, ast.BoolOp):
            pending.extend(node.values)
        elif isinstance(node, ast.IfExp):
            pending += [node.body, node.orelse]
        else:
            yield node


def _last(node: ast.AST) -> str | None:
    """The last name of a name, an attribute or a call's callee (`last_name`)."""
    return last_name(node.func if isinstance(node, ast.Call) else node)  # type: ignore[arg-type]


def _head(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _leaves_block(body: list[ast.stmt]) -> bool:
    """The block ends by leaving its enclosing block: return, raise, continue, break, exit()."""
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and _last(last.value.func) in ("exit", "quit", "_exit")


@dataclass(frozen=True)
class Calls:
    """Some call of a qualified name in `targets`, or of a method named in `methods` on any
    receiver; with `without_keyword`, one that does not pass that keyword; with
    `lambda_first`, one whose first argument is a lambda; with `shipped`, one where a
    positional argument or a keyword named there may be a callable that pickle cannot store
    by reference (a lambda, a local function, a `partial` of one); with `within`, only in a
    file where that screen holds too."""

    targets: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    without_keyword: str | None = None
    lambda_first: bool = False
    shipped: tuple[str, ...] = ()
    within: DistributedCode | RankZeroCalls | None = None

    def holds(self, facts: Facts) -> bool:
        calls = facts.calls_to(self.targets)
        for method in self.methods:
            calls += [call for call in facts.calls_by_tail.get(method, ()) if isinstance(call.func, ast.Attribute)]
        return any(self._matches(call, facts) for call in calls) and (self.within is None or self.within.holds(facts))

    def _matches(self, call: ast.Call, facts: Facts) -> bool:
        if self.without_keyword is not None and any(kw.arg == self.without_keyword for kw in call.keywords):
            return False
        if self.lambda_first and not (call.args and isinstance(call.args[0], ast.Lambda)):
            return False
        if self.shipped:
            named = [kw.value for kw in call.keywords if kw.arg in self.shipped]
            return any(_may_be_local_callable(value, facts) for value in [*call.args, *named]) or any(
                _may_be_made(value, facts) for value in named
            )
        return True


@dataclass(frozen=True)
class WriterOrHelperCalls:
    """A call of `writers` (a Calls screen), or a call through an import of a function that
    another module of the project defines and that may save (Facts.may_save_call; with no
    project, any call through an import)."""

    writers: Calls

    def holds(self, facts: Facts) -> bool:
        if self.writers.holds(facts):
            return True
        judge = facts.may_save_call
        for calls in facts.calls_by_tail.values():
            for call in calls:
                name = dotted(call.func)
                head, _, rest = (name or "").partition(".")
                for origin in facts.origins.get(head, ()) if name is not None else ():
                    if judge is None or judge(f"{origin}.{rest}" if rest else origin):
                        return True
        return False


@dataclass(frozen=True)
class Subclasses:
    """A class with a base that is one of the qualified `targets`."""

    targets: tuple[str, ...]

    def holds(self, facts: Facts) -> bool:
        wanted = set(self.targets)
        return any(facts.qualified(base) & wanted for cls in facts.classes for base in cls.bases)


@dataclass(frozen=True)
class Mentions:
    """A string literal equal to one of `names`, or a keyword argument of that name (as in
    `os.environ.update(NAME=...)`): how code names an environment variable it sets."""

    names: tuple[str, ...]

    def holds(self, facts: Facts) -> bool:
        return any(name in facts.strings or name in facts.keywords for name in self.names)


@dataclass(frozen=True)
class CallInDefault:
    """A parameter default that calls something that may create a tensor on a device: a
    method named in `methods`, a call passing one of `keywords`, a callee whose (qualified)
    name ends with one of `suffixes`, or a function defined in this file (a helper that may)."""

    methods: tuple[str, ...]
    keywords: tuple[str, ...]
    suffixes: tuple[str, ...]

    def holds(self, facts: Facts) -> bool:
        for arguments in facts.functions_with_defaults:
            for default in (*arguments.defaults, *arguments.kw_defaults):
                if default is not None and any(self._may_place(node, facts) for node in ast.walk(default)):
                    return True
        return False

    def _may_place(self, node: ast.AST, facts: Facts) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Name) and (
            func.id in facts.function_names or any(name.endswith(self.suffixes) for name in facts.qualified(func))
        ):
            return True
        if isinstance(func, ast.Attribute) and (func.attr in self.methods or func.attr.endswith(self.suffixes)):
            return True
        if isinstance(func, ast.Attribute) and facts.function_names and dotted(func) in facts.function_names:
            return True  # a helper of another module reached through it (ddplint.model.project)
        return any(keyword.arg in self.keywords for keyword in node.keywords)


@dataclass(frozen=True)
class UnreadSelfAttribute:
    """A class whose `__init__` assigns `self.x = <layer>(...)` and none of whose methods reads
    `self.x` (its first parameter's attribute; nested classes are their own), in a file that
    defines `method`. A layer is a class of this file, or a qualified name under `package`
    whose last part starts with one of `layers`."""

    method: str
    package: str
    layers: tuple[str, ...]

    def holds(self, facts: Facts) -> bool:
        if self.method not in facts.function_names:
            return False
        class_names = {cls.name for cls in facts.classes}

        def is_layer(call: ast.Call) -> bool:
            if isinstance(call.func, ast.Name) and call.func.id in class_names:
                return True
            return any(
                name.startswith(self.package) and name.rpartition(".")[2].startswith(self.layers)
                for name in facts.qualified(call.func)
            )

        return any(_unread_built_attributes(cls, is_layer) for cls in facts.classes)


def _unread_built_attributes(cls: ast.ClassDef, is_layer) -> set[str]:
    built: dict[str, list[ast.Attribute]] = {}
    methods = list(_own_functions(cls.body))
    for method in methods:
        if method.name != "__init__" or (self_name := _self_name(method)) is None:
            continue
        for node in _walk_outside_classes(method.body):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
                target = node.targets[0]
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == self_name
                    and is_layer(node.value)
                ):
                    built.setdefault(target.attr, []).append(target)
    if not built:
        return set()
    targets = {id(target) for found in built.values() for target in found}
    read: set[str] = set()
    for method in methods:
        self_name = _self_name(method)
        for node in _walk_outside_classes(method.body):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == self_name
                and id(node) not in targets
            ):
                read.add(node.attr)
    return built.keys() - read


def _own_functions(body: list[ast.stmt]):
    """The functions defined in a class body (also under `if`/`try`), not inside them."""
    for node in _walk_outside_classes(body, into_functions=False):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _walk_outside_classes(body: list[ast.stmt], *, into_functions: bool = True):
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.ClassDef):
            continue
        if not into_functions and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _self_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    params = function.args.posonlyargs or function.args.args
    return params[0].arg if params else None


Screen = Calls | Subclasses | Mentions | CallInDefault | UnreadSelfAttribute | DistributedCode | RankZeroCalls
