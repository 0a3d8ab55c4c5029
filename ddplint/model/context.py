"""Who runs a function: the process context the program model gives across functions and modules.

A rule's per-file analysis (ddplint.analyses.ranks) answers "is this statement reached by rank
0 only" from the guards around it in its own file. What lies in other modules is answered here:

- a project predicate helper (`from utils.dist import is_main_process`, `utils.is_main_process()`)
  is judged by its body, through the model, at any depth (`is_main_process()` -> `get_rank() ==
  0` -> `dist.get_rank()`), never by its name;
- a function whose every call in the project is made under a rank-0 guard (`if
  dist.get_rank() == 0: save_checkpoint(...)`), after an early return on the other ranks (`if
  self.rank != 0: return`), or from a function that only rank 0 runs, runs on rank 0 only.

The module summary (ddplint.model.summary) records what this needs: per function (and "" for
module code, `FunctionContext`) the `if` tests around its calls as source text, the calls, its
decorators, and the lines of a short function that may be a predicate. The tests
are classified on demand with the analyses' own `classify`, so the rank tests the rules know
are the same everywhere. Anything not followed (a call through an object of unknown class, a
module past the model's bound) makes the answer unknown, which keeps a rule's local verdict.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from ddplint.core.fixpoint import DepthMemo
from ddplint.core.torch_api import RANK_ENVIRONMENT, SPAWN, START_PROCESSES
from ddplint.core.lines import split_lines
from ddplint.model.records import FunctionContext
from ddplint.model.summary import super_method
from ddplint.prefilter.screens import dotted, walk

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_PROPERTIES = frozenset({"property", "cached_property"})
MAX_DEPTH = 6  # predicate helpers and callers followed this deep; deeper is unknown


_RANK_WORDS = ("process_index", "local_process_index")  # Accelerate's names for the rank


def holds_rank(expr: ast.expr, tree: ast.Module, line: int) -> bool:
    """Whether `expr`, at `line` of the module `tree`, may hold the rank: it names something
    called like a rank (`args.local_rank`, `get_rank()`, `process_index`) or a rank variable
    (`os.environ["LOCAL_RANK"]`), or a name that the code of the function around it (or of the
    module) binds to such a value (`gpu = int(cfg["gpu"][local_rank])`); a parameter holds
    whatever its callers pass, which is not read."""
    if _names_rank(expr):
        return True
    names = {part.id for part in walk(expr) if isinstance(part, ast.Name)}
    return any(
        _names_rank(node.value) for node in own_nodes(_scope_at(tree, line)) if isinstance(node, ast.Assign)
        and any(isinstance(target, ast.Name) and target.id in names for target in node.targets)
    )


def _names_rank(expr: ast.AST) -> bool:
    for part in walk(expr):
        word = part.id if isinstance(part, ast.Name) else part.attr if isinstance(part, ast.Attribute) else None
        if word is not None and ("rank" in word.lower() or word in _RANK_WORDS):
            return True
        if isinstance(part, ast.Constant) and part.value in RANK_ENVIRONMENT:
            return True
    return False


def own_nodes(scope: ast.AST):
    """The nodes of a module's or function's own code, not of the functions and classes in it."""
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        pending.extend(ast.iter_child_nodes(node))


def _scope_at(tree: ast.Module, line: int) -> ast.AST:
    """The innermost function of `tree` whose lines hold `line`, else the module."""
    around = [node for node in walk(tree) if isinstance(node, _FUNCTIONS) and node.lineno <= line <= (node.end_lineno or node.lineno)]
    return min(around, key=lambda node: (node.end_lineno or node.lineno) - node.lineno, default=tree)


@dataclass(frozen=True)
class CallSite:
    """A call of a project function: the calling module, the calling function's key (None for
    module code) and the line."""

    caller: str
    caller_key: str | None
    line: int


def _default_of(function, name: str):
    """The default of parameter `name` of an `ast` function definition; None where it has none."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = [*zip(positional, defaults), *zip(arguments.kwonlyargs, arguments.kw_defaults)]
    return next((default for argument, default in pairs if argument.arg == name), None)


def _names_of(tree: ast.Module, simple: str) -> set[str]:
    """`simple` and the aliases `tree` imports it under (`from m import f as g`)."""
    return {simple} | {
        alias.asname for node in walk(tree) if isinstance(node, ast.ImportFrom)
        for alias in node.names if alias.name == simple and alias.asname
    }


def _only_called(tree: ast.Module, simple: str) -> bool:
    """Whether every use in `tree` of the function named `simple` (also through an import alias)
    calls it: it is not handed on (`mp.spawn(main_worker, ...)`, `Engine(update)`), kept, or
    named in a string."""
    names = _names_of(tree, simple)
    called = {id(node.func) for node in walk(tree) if isinstance(node, ast.Call)}
    for node in walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.rpartition(".")[2] in names:
            return False
        used = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if used in names and id(node) not in called:
            return False
    return True


def _leaves_out(tree: ast.Module, simple: str, cls: str | None, index: int | None, name: str) -> bool:
    """Whether every use in `tree` of the function named `simple` (also through an import
    alias; `cls`: the class whose `__init__` it is, so that `super().__init__(...)` calls count
    too) is a call with known arguments that leave out parameter `name` (at `index` among the
    positional arguments a call gives, None for keyword-only), or a use that does not call it
    (`super(Class, self)`, `isinstance(x, Class)`)."""
    names = _names_of(tree, simple)
    called: set[int] = set()
    allowed: set[int] = set()
    for node in walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.rpartition(".")[2] in names:
            return False  # named in a string: a registry or a configuration may call it
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        head = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if head in ("super", "isinstance", "issubclass"):
            allowed.update(id(arg) for arg in node.args)
        if head in names or cls is not None and head == "__init__":
            called.add(id(func))
            if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
                return False
            if any(k.arg == name for k in node.keywords) or index is not None and len(node.args) > index:
                return False
    for node in walk(tree):
        used = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if used in names and id(node) not in called and id(node) not in allowed:
            return False  # handed on or kept: called where its arguments are not seen
    return True


def _rebinds(function, name: str) -> bool:
    """Whether the `ast` function binds `name` in its body (its parameter then holds something else)."""
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in walk(function))


def _parameter_place(function, key: str, name: str) -> tuple[str, int | None]:
    """The name a call of function `key` (its `ast` definition) is written with (the class for
    `__init__`), and the position among a call's positional arguments that fills parameter
    `name` (`self` bound for a method); None for a keyword-only one."""
    owner, _, simple = key.rpartition(".")
    if simple == "__init__":
        simple = owner
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    index = positional.index(name) if name in positional else None
    if index is not None and owner and not any(dotted(d) == "staticmethod" for d in function.decorator_list):
        index -= 1  # `self` is bound: a call's first argument fills the next
    return simple, index


def _argument(call: ast.Call, index: int | None, name: str) -> ast.expr | None:
    """What `call` passes for the parameter `name` at positional `index`: by keyword, or by
    position before any `*args`; None where it leaves it out or to a `*args`/`**kwargs`."""
    given = next((k.value for k in call.keywords if k.arg == name), None)
    starred = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), len(call.args))
    if given is None and index is not None and 0 <= index < starred:
        given = call.args[index]
    return given


def _leaves_out_argument(call: ast.Call, index: int | None) -> bool:
    """Whether `call` surely leaves the parameter at positional `index` to its default: no
    `*args` or `**kwargs`, and fewer positional arguments than reach it (by keyword, `_argument`)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    return index is None or 0 <= index and len(call.args) <= index


def _binds_locally(tree: ast.Module, site: CallSite, name: str) -> bool:
    """Whether a function around the call `site` has a parameter `name` (then the name is not
    the module's)."""
    for node in walk(tree):
        if isinstance(node, _FUNCTIONS) and node.lineno <= site.line <= node.end_lineno:
            if any(a.arg == name for a in ast.walk(node.args) if isinstance(a, ast.arg)):
                return True
    return False


def _is_self_attribute(node: ast.AST, this: str | None, attribute: str) -> bool:
    """`self.<attribute>`, `self` being the method's first parameter `this`."""
    return (
        isinstance(node, ast.Attribute) and node.attr == attribute
        and isinstance(node.value, ast.Name) and node.value.id == this
    )


def tested_statements(body: list, tests: tuple):
    """The statements of `body` and of the blocks in it, in the order of the source, each with
    the `if` tests around it there (`ast` expressions) and the way each is taken: (statement,
    ((test, True), ...))."""
    for statement in body:
        yield statement, tests
        if isinstance(statement, ast.If):
            yield from tested_statements(statement.body, (*tests, (statement.test, True)))
            yield from tested_statements(statement.orelse, (*tests, (statement.test, False)))
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list):
                yield from tested_statements(inner, tests)
        for inner in (*(getattr(statement, "handlers", ()) or ()), *(getattr(statement, "cases", ()) or ())):
            yield from tested_statements(inner.body, tests)  # `except` handlers, `match` cases


def _libcst_expression(value: ast.expr | None):
    """`value` as a libcst expression; `...` (unknown) for None or text libcst does not read."""
    import libcst as cst

    if value is None:
        return cst.Ellipsis()
    try:
        return cst.parse_expression(ast.unparse(value))
    except Exception:  # noqa: BLE001 - an expression libcst does not read: unknown
        return cst.Ellipsis()


class ProcessContext:
    """Process-context questions over a solved Program (ddplint.model.program)."""

    def __init__(self, program) -> None:
        self.program = program
        self._predicates: dict[tuple[str, str], object] = {}
        self._only_zero = DepthMemo(none=False)
        # module -> (the function called, the call) of the calls its code makes of project functions
        self._callers: dict[str, list[tuple[tuple[str, str], CallSite]]] = {}
        self._made: dict[tuple[str, str], dict[int, list]] = {}  # (module, caller) -> line -> the invocations there
        self._module_calls: dict[str, list[ast.Call]] = {}  # module -> every call in its text
        self._class_assignments: dict[tuple[str, str], dict[str, list]] = {}  # (module, class) -> `_assignments_in`
        self._expressions: dict[int, tuple] = {}  # id of an `ast` node -> (the node, its libcst form)
        self._attributes: dict[tuple[str, str, str], list] = {}  # (module, class, attribute) -> values
        self._held: dict[tuple[str, str, str], object] = {}  # (module, class, `self.` path) -> what it holds
        # (module, function, "parameter.attribute") -> what it and the functions it hands the
        # parameter to assign that attribute (`_set_by`)
        self._handed: dict[tuple[str, str, str], list] = {}
        self._classes: dict[tuple[str, str], ast.ClassDef | None] = {}  # (module, class) -> its definition
        self._off: dict[tuple[str, str, str], bool] = {}  # (module, function, parameter) -> off_by_default
        # (module, function, parameter) -> passed_arguments: the program's saved texts do not
        # change while it lives, and the rank analysis asks on every lint of an open file
        # (each answer parses the module and its callers' modules)
        self._passed: dict[tuple[str, str, str], tuple[str, ...] | None] = {}
        # (module, function, a guard's test) -> what it says about the rank (`_verdict`), and
        # (module, function) -> the resolver its guards are read with
        self._verdicts: dict[tuple[str, str | None, str], object] = {}
        self._guard_resolvers: dict[tuple[str, str | None], object] = {}
        self._only_called: dict[tuple[str, str], bool] = {}  # (module, function) -> `only_called`

    def _record(self, module: str, key: str | None) -> FunctionContext | None:
        summary = self.program.summary(module)
        return summary.context.get(key or "") if summary is not None else None

    # -- predicate helpers -----------------------------------------------------------------

    def predicate(self, module: str, callee: str, cls: str | None = None, depth: int = 0):
        """What a call of `callee` written in `module` says about the rank when true or false
        (ddplint.analyses.ranks.RankTest), or the rank it returns (RankValue: `def rank(): return
        dist.get_rank()`), judged by the body of the project function it reaches; None when it
        reaches none, or its body is not read (then the name decides)."""
        target = self.program.resolve(module, callee, cls) if depth <= MAX_DEPTH else None
        if target is None or self.program.summary(target.module) is None:
            return None
        key = target.function
        if key not in self._predicates:
            self._predicates[key] = None  # a recursion through it proves nothing
            self._predicates[key] = self._judge(target, depth)
        return self._predicates[key]

    def _judge(self, target, depth: int):
        import libcst as cst

        from ddplint.analyses.ranks import judge_function

        record = self._record(target.module, target.key)
        if record is None or record.lines is None:
            return None  # a long body is not read: its name decides
        text = self.program.read(target.module)
        if text is None:
            return None
        first, last = record.lines
        try:
            function = cst.parse_module(textwrap.dedent("".join(split_lines(text, keepends=True)[first - 1 : last]))).body[0]
        except Exception:  # noqa: BLE001 - the file changed since it was summarised, or syntax libcst does not read
            return None
        if not isinstance(function, cst.FunctionDef):
            return None
        cls = target.key.rpartition(".")[0] or None
        return judge_function(function, self._resolver(target.module, cls, depth + 1))

    def _resolver(self, module: str, cls: str | None, depth: int, module_code: bool = False, this: str | None = None):
        """What a name or call in `module` holds as a rank test, through the model: a call of a
        project function is its body's verdict; a project function named without a call is a
        function object, always true; in the module's own code (`module_code`), a variable the
        module binds once at its top level to a rank (`current_rank = dist.get_rank()`) is that
        rank; in a method of class `cls` whose first parameter is `this`, an attribute of `this`
        is what its class and base classes assign it (`_self_attribute`). None: nothing known
        (the name decides)."""
        from ddplint.analyses.ranks import ALWAYS_TRUE, RankTest
        from ddplint.semantic.model import dotted_name

        def resolve(expr) -> RankTest | None:
            import libcst as cst

            if isinstance(expr, cst.Call):
                name = dotted_name(expr.func)
                return self.predicate(module, name, cls, depth) if name else None
            name = dotted_name(expr)
            target = self.program.resolve(module, name, cls) if name else None
            if target is None and module_code and isinstance(expr, cst.Name):
                return self._module_rank(module, expr.value)
            if target is None and this is not None and cls is not None and name and name.startswith(f"{this}."):
                return self._self_attribute(module, cls, name[len(this) + 1 :], depth)
            if target is None or target.key.endswith(".__init__"):
                return None
            record = self._record(target.module, target.key)
            if record is not None and {d.rpartition(".")[2] for d in record.decorators} & _PROPERTIES:
                return self.predicate(module, name, cls, depth)  # a property is read, not named
            return ALWAYS_TRUE

        return resolve

    def _self_attribute(self, module: str, cls: str, path: str, depth: int):
        """What `self.<path>`, read in a method of class `cls` of `module`, holds
        (ddplint.analyses.ranks.held_in_attribute): `self.verbose` from every assignment of it in
        the class and its project bases, each under the `if`s around it; `self.args.gpu` where
        the class's `__init__` keeps a parameter as `self.args` (`_kept_namespace`). None:
        nothing known."""
        from ddplint.analyses.ranks import held_in_attribute

        head, _, rest = path.partition(".")
        if depth > MAX_DEPTH or "." in rest:
            return None
        memo = (module, cls, path)
        if memo not in self._held:
            self._held[memo] = None  # a flag read in its own tests says nothing
            if rest:
                self._held[memo] = self._kept_namespace(module, cls, head, rest, depth)
            else:
                self._held[memo] = held_in_attribute(self.attribute_assignments(module, cls, head, depth))
        return self._held[memo]

    def _kept_namespace(self, module: str, cls: str, kept: str, attribute: str, depth: int):
        """What `self.<kept>.<attribute>` holds where the `__init__` of class `cls` of `module`
        assigns `self.<kept>` a parameter of its own, and nothing else assigns it: what the code
        that builds the object assigns to that attribute of the object it passes
        (`namespace_attribute`: `args.gpu = gpu` before `Trainer(args)`, `gpu` being the local
        rank its callers pass, makes `self.args.gpu` the rank). None: nothing known."""
        import libcst as cst

        from ddplint.analyses.ranks import held_in_attribute

        key = f"{cls}.__init__"
        init = self.program.definition(module, key)
        assigned = self.attribute_assignments(module, cls, kept, depth)
        if init is None or len(assigned) != 1 or not isinstance(assigned[0][0], cst.Name):
            return None
        name = assigned[0][0].value
        params = [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs]
        this = params[0].arg if params else None
        keeps = any(
            isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name) and statement.value.id == name
            and any(_is_self_attribute(target, this, kept) for target in statement.targets)
            for statement in init.body
        )
        if not keeps or name not in (param.arg for param in params[1:]) or _rebinds(init, name):
            return None
        texts = self.namespace_attribute(module, key, name, attribute, depth)
        values = []
        for text in texts if texts is not None else ():
            try:
                values.append((cst.parse_expression(text), None, ()))
            except Exception:  # noqa: BLE001 - text libcst does not read: unknown
                return None
        return held_in_attribute(values)

    def namespace_attribute(self, module: str, key: str, name: str, attribute: str, depth: int = 0) -> list[str] | None:
        """The source text of what each call in the project of function `key` of `module`
        assigns, in the function that makes the call, to attribute `attribute` of the object it
        passes for parameter `name` (`args.gpu = gpu` then `Trainer(args, ...)`: what the
        callers of that function pass for `gpu`; `args.gpu = 0`: "0"); a caller that hands on a
        parameter of its own untouched answers for its callers, and one that hands the object to
        functions that assign the attribute (`ddp_init(args)`, then `Runner(args)`) by what they
        assign (`_handed_texts`). None where that is not known:
        a call not read, an object passed as anything but a name, one whose attribute the
        caller binds otherwise (`+=`, unpacking) or not at all."""
        function = self.program.definition(module, key)
        sites = self.call_sites(module, key) if depth <= MAX_DEPTH else None
        if function is None or not sites or function.decorator_list:
            return None
        simple, index = _parameter_place(function, key, name)
        found: list[str] = []
        for site in sites:
            call = self._call_at(site, simple, key)
            given = _argument(call, index, name) if call is not None else None
            caller = self.program.definition(site.caller, site.caller_key) if site.caller_key is not None else None
            if not isinstance(given, ast.Name) or caller is None:
                return None
            values, other = [], False
            for node in walk(caller):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                for target in targets:
                    if isinstance(node, ast.Assign) and _is_self_attribute(target, given.id, attribute):
                        values.append(node.value)
                    elif any(_is_self_attribute(part, given.id, attribute) for part in walk(target)):
                        other = True
            if other:
                return None
            if values:
                for value in values:
                    forwarded = self._forwarded(site, value, depth)
                    found.extend(forwarded if forwarded is not None else [ast.unparse(self._local_value(site, value))])
                continue
            handed = self._handed_texts(caller, site.caller, given.id, attribute, depth)
            if handed:
                found.extend(handed)
                continue
            parameters = (*caller.args.posonlyargs, *caller.args.args, *caller.args.kwonlyargs)
            inner = None if _rebinds(caller, given.id) or given.id not in (a.arg for a in parameters) else (
                self.namespace_attribute(site.caller, site.caller_key, given.id, attribute, depth + 1)
            )
            if inner is None:
                return None
            found.extend(inner)
        return found

    def _handed_texts(self, caller: ast.AST, module: str, name: str, attribute: str, depth: int) -> list[str]:
        """The source text of what the functions that `caller` (a function of `module`) hands
        the object `name` holds to assign to its `<attribute>`, through the functions they hand
        it on to (`_set_by`): `ddp_init(args)` before `Runner(args)`, its helper setting
        `args.proc_id = args.local_rank`; [] where none does."""
        import libcst as cst

        texts: list[str] = []
        for call in (node for node in walk(caller) if isinstance(node, ast.Call)):
            target = self.program.resolve(module, dotted(call.func) or "", None)
            if target is not None:
                found = self._set_by(target, call, name, attribute, depth + 1)
                texts += [cst.Module([]).code_for_node(value) for value, _, _ in found]
        return texts

    def kept_attribute(self, module: str, cls: str, path: str):
        """What `self.<path>` (`args.proc_id`), read in a method of class `cls` of `module`,
        holds where the class's `__init__` keeps a parameter as `self.args`: what the code
        that builds the object, or a function it hands the object to, assigns that attribute
        (ddplint.analyses.ranks.held_in_attribute); None: nothing known."""
        return self._self_attribute(module, cls, path, 0) if path.count(".") == 1 else None

    def _module_rank(self, module: str, name: str):
        """The rank (ddplint.analyses.ranks.RankValue) a variable of `module`'s own code holds:
        the module binds it once, at its top level (not in a function or class), to what reads
        a rank by its words (`torch.distributed.get_rank()`); None otherwise."""
        import libcst as cst

        from ddplint.analyses.ranks import RankValue, rank_dimension

        tree = self.program.tree(module)
        if tree is None:
            return None
        values = []
        pending = list(tree.body)
        while pending:
            node = pending.pop()
            if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.Import, ast.ImportFrom)):
                bound = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
                bound += [a for a in ast.walk(node) if isinstance(a, ast.alias) and (a.asname or a.name) == name]
                if bound:
                    values.append(node.value if isinstance(node, ast.Assign) and len(bound) == 1 else None)
            pending.extend(child for field in ("body", "orelse", "finalbody", "handlers") for child in getattr(node, field, ()) or ())
        if len(values) != 1 or values[0] is None:
            return None
        try:
            dimension = rank_dimension(cst.parse_expression(ast.unparse(values[0])))
        except Exception:  # noqa: BLE001 - text libcst does not read: unknown
            return None
        return RankValue(dimension) if dimension is not None else None

    # -- rank facts held in a base class's attributes -------------------------------------

    def attribute_assignments(self, module: str, base: str, attribute: str, depth: int = 0) -> list:
        """The values that the methods of the project class `base` (as written in `module`, a
        base of a class there) and of its project bases assign to `self.<attribute>`, as
        (expression, resolver of its module, the `if` tests around the assignment in its method,
        outermost first, as (libcst test, the way taken) pairs), in the order of the source, for
        RankFacts to classify: `self._primary = self._rank == 0` in `Trainer.__init__` makes `if
        self._primary:` a rank-0 test in a subclass. A binding of unknown value (`+=`,
        unpacking) is `...`, no rank test. Read on demand, from the text of the modules that hold
        the classes; [] when `base` names no project class or none of them assigns it."""
        made = self.program.class_of(module, base) if depth <= MAX_DEPTH else None
        if made is None:
            return []
        key = (*made, attribute)
        if key not in self._attributes:
            self._attributes[key] = []  # a cycle of bases adds nothing
            target, cls = made
            found = [
                (value, self._resolver(target, cls, depth + 1, this=this), tests)
                for value, tests, this in self._assigned(target, cls, attribute)
            ]
            summary = self.program.summary(target)
            record = summary.classes.get(cls) if summary is not None else None
            for inner in record.bases if record is not None else ():
                found += self.attribute_assignments(target, inner, attribute, depth + 1)
            self._attributes[key] = found
        return self._attributes[key]

    def handed_attribute(self, module: str, name: str, attribute: str) -> list:
        """The values that the functions of other modules, handed the object `name` holds by a
        call in `module`'s code, assign to its `<attribute>` (through the functions they hand
        their parameter on to): `init_dist(opt)`, whose helper sets `opt.log = True` under `if
        opt.rank % ngpus == 0:` and `opt.log = False` otherwise. As `attribute_assignments`,
        for RankFacts to classify; [] where none does. `module`'s own functions are left out:
        RankFacts reads its assignments itself."""
        memo = (module, f"{name}.", attribute)
        if memo not in self._attributes:
            self._attributes[memo] = []
            found: list = []
            for call in self._text_calls(module):
                target = self.program.resolve(module, dotted(call.func) or "", None)
                if target is not None and target.module != module:
                    found += self._set_by(target, call, name, attribute, 0)
            self._attributes[memo] = found
        return self._attributes[memo]

    def _set_by(self, target, call: ast.Call, name: str, attribute: str, depth: int) -> list:
        """`handed_attribute` in the function `target` that `call` reaches, handed `name`."""
        function = self.program.definition(target.module, target.key) if depth <= MAX_DEPTH and not target.bound else None
        if function is None or function.decorator_list:
            return []
        positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        given = [positional[i] for i, a in enumerate(call.args[: len(positional)]) if isinstance(a, ast.Name) and a.id == name]
        given += [k.arg for k in call.keywords if k.arg is not None and isinstance(k.value, ast.Name) and k.value.id == name]
        if len(given) != 1 or _rebinds(function, given[0]):
            return []
        parameter, found = given[0], []
        memo = (target.module, target.key, f"{parameter}.{attribute}")
        if memo in self._handed:
            return self._handed[memo]
        self._handed[memo] = []  # a cycle of calls adds nothing
        for statement, tests in tested_statements(function.body, ()):
            if isinstance(statement, ast.Assign) and any(_is_self_attribute(t, parameter, attribute) for t in statement.targets):
                tested = tuple((self._expression(test), way) for test, way in tests)
                found.append((self._expression(statement.value), self._resolver(target.module, None, depth + 1), tested))
        for inner in (node for node in walk(function) if isinstance(node, ast.Call)):
            callee = self.program.resolve(target.module, dotted(inner.func) or "", None)
            if callee is not None and callee.function != target.function:
                found += self._set_by(callee, inner, parameter, attribute, depth + 1)
        self._handed[memo] = found
        return found

    def _text_calls(self, module: str) -> list[ast.Call]:
        """Every call in `module`'s text."""
        if module not in self._module_calls:
            tree = self.program.tree(module)
            self._module_calls[module] = [node for node in walk(tree) if isinstance(node, ast.Call)] if tree is not None else []
        else:
            self.program.mark_read(module)  # as `tree` would: an answer depends on that text
        return self._module_calls[module]

    def _assigned(self, module: str, cls: str, attribute: str) -> list:
        """The values (libcst expressions) the methods of class `cls`, defined at the top of
        `module`, assign to `self.<attribute>`, in the order of the source, each with the `if`
        tests around it (`tested_statements`) and the method's name for `self`."""
        expression = self._expression
        return [
            (expression(value), tuple((expression(test), way) for test, way in tests), this)
            for value, tests, this in self._assignments_in(module, cls).get(attribute, ())
        ]

    def _assignments_in(self, module: str, cls: str) -> dict[str, list]:
        """Every `self.<attribute>` assignment in the methods of class `cls` of `module`, read
        once per class, by attribute: (value `ast`, None where unknown, its `if` tests as (`ast`
        test, way) pairs, the method's name for `self`). libcst forms are made only for the
        attributes asked (`_assigned`): most classes' tests are never needed."""
        if (module, cls) not in self._classes:
            tree = self.program.tree(module)
            for node in tree.body if tree is not None else ():
                if isinstance(node, ast.ClassDef):
                    self._classes.setdefault((module, node.name), node)
            self._classes.setdefault((module, cls), None)
        if (module, cls) in self._class_assignments:
            return self._class_assignments[(module, cls)]
        node = self._classes[(module, cls)]
        found: dict[str, list] = {}
        for method in (n for n in (node.body if node is not None else ()) if isinstance(n, _FUNCTIONS)):
            params = [*method.args.posonlyargs, *method.args.args]
            this = params[0].arg if params else None
            for statement, tests in tested_statements(method.body, ()):
                if isinstance(statement, ast.Assign):
                    targets, value = statement.targets, statement.value
                elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
                    targets, value = [statement.target], None if isinstance(statement, ast.AugAssign) else statement.value
                else:
                    continue
                for target in targets:
                    if _is_self_attribute(target, this, getattr(target, "attr", None)):
                        found.setdefault(target.attr, []).append((value, tests, this))
                    elif isinstance(target, (ast.Tuple, ast.List)):
                        unpacked = {t.attr for t in walk(target) if _is_self_attribute(t, this, getattr(t, "attr", None))}
                        for attribute in sorted(unpacked):
                            found.setdefault(attribute, []).append((None, tests, this))
        self._class_assignments[(module, cls)] = found
        return found

    def _expression(self, value: ast.expr | None):
        """`_libcst_expression` of `value`, made once per node (the trees are kept)."""
        if value is None:
            return _libcst_expression(None)
        if id(value) not in self._expressions:
            self._expressions[id(value)] = (value, _libcst_expression(value))  # the node is held: its id stays its own
        return self._expressions[id(value)][1]

    def names_function(self, module: str, name: str | None) -> bool:
        """Whether `name`, written in `module` outside a class, names a project function (not a
        class): named without a call, it is a function object, always true."""
        target = self.program.resolve(module, name, None) if name else None
        return target is not None and not target.key.endswith(".__init__")

    # -- who calls a function --------------------------------------------------------------

    def _calls_in(self, module: str) -> list[tuple[tuple[str, str], CallSite]] | None:
        """Every call `module`'s code makes that reaches a project function, with that function
        (module, key); None when unread."""
        if module in self._callers:
            return self._callers[module]
        summary = self.program.summary(module)
        if summary is None:
            return None
        found = []
        for caller, record in summary.context.items():
            function = summary.functions.get(caller) if caller else None
            cls = function.cls if function is not None else None
            for call in record.calls:
                # also a method of the object a parameter or `self` attribute holds (`self.actor_critic.save_parameters()`)
                target = self.program.target(module, caller or None, cls, call.callee) or self._on_local(module, caller, function, call, cls)
                if target is not None:
                    found.append((target.function, CallSite(module, caller or None, call.line)))
        self._callers[module] = found
        return found

    def _on_local(self, module: str, caller: str, function, call, cls: str | None):
        """The project method a call on a local object reaches (`saver.save(...)` where `saver =
        Saver(...)`, also `None` the other way of an `if`): the function's invocation at that line
        names its maker (`Saver().save`, ddplint.model.summary); None where it names none."""
        if "." not in call.callee:
            return None
        method = call.callee.rpartition(".")[2]
        if (module, caller) not in self._made:
            function = function if caller else self.program.module_code(module)  # read only for a dotted call not resolved
            by_line: dict[int, list] = {}
            for made in function.invocations if function is not None else ():
                by_line.setdefault(made.line, []).append(made)
            self._made[(module, caller)] = by_line
        for made in self._made[(module, caller)].get(call.line, ()):
            if made.callee != call.callee and made.callee.endswith(f"().{method}"):
                return self.program.resolve(module, made.callee, cls)
        return None

    def call_sites(self, module: str, key: str, read_only: bool = False) -> list[CallSite] | None:
        """Every call of function `key` of `module` in the project; None when some module that
        may call it is not read (past the model's bound, or unparsable). `read_only`: the calls
        in the modules read, leaving out those unread."""
        sites = []
        for caller in self.possible_callers(module):
            calls = self._calls_in(caller)
            if calls is None and read_only:
                continue
            if calls is None:
                return None
            sites += [site for function, site in calls if function == (module, key)]
        return sites

    def only_called(self, module: str, key: str) -> bool:
        """Whether function `key` of `module` runs only where the project calls it (`call_sites`
        then says where it runs): every module that may call it is read and uses its name only
        in calls (`_only_called`)."""
        if (module, key) not in self._only_called:
            simple = key.rpartition(".")[2]
            trees = [self.program.tree(caller) for caller in self.possible_callers(module)]
            self._only_called[module, key] = all(tree is not None and _only_called(tree, simple) for tree in trees)
        return self._only_called[module, key]

    def possible_callers(self, module: str) -> list[str]:
        """`module` and the modules that import from it, directly or through the packages that
        re-export its names (`from .datasets import get_trainset` in `data/__init__.py`, then
        `from data import get_trainset`), three packages up."""
        program = self.program
        found, packages = [module], [module]
        seen = {module}  # beside the list: a module of utilities has thousands of importers
        for _ in range(3):
            reexporting = []
            for imported in packages:
                for importer in program.importers_of(imported):
                    if importer not in seen:
                        seen.add(importer)
                        found.append(importer)
                        if program.project.relpaths[importer].endswith("__init__.py"):
                            reexporting.append(importer)
            packages = reexporting
        return found

    # -- code no call turns on --------------------------------------------------------------

    def guards_at(self, module: str, key: str, line: int) -> list[Guard]:
        """The `if`s of function `key` of `module` ("": the module's own code) around `line`."""
        record = self._record(module, key)
        return [guard for guard in record.guards if guard.first <= line <= guard.last] if record is not None else []

    def branches_like(self, module: str, key: str, guard: Guard) -> list[tuple[int, int]]:
        """The lines of each branch of function `key` of `module` ("": the module's own code) that
        an `if` with `guard`'s test takes the same way (`if config.resume:` twice: the load in
        one, the restore in the other), `guard`'s own among them."""
        record = self._record(module, key)
        found = [(other.first, other.last) for other in record.guards if (other.test, other.sense) == (guard.test, guard.sense)] if record is not None else []
        return found or [(guard.first, guard.last)]

    def switched_off_at(self, module: str, key: str | None, line: int) -> str | None:
        """The parameter of function `key` of `module` whose `if <parameter>:` is around `line`
        when that code never runs (`off_by_default`); None where that is not known."""
        record = self._record(module, key) if key else None
        if record is None:
            return None
        around = [guard for guard in record.guards if guard.first <= line <= guard.last]
        tests = {guard.test for guard in around if guard.sense}
        off = next((test for test in sorted(tests) if test.isidentifier() and self.off_by_default(module, key, test)), None)  # type: ignore[arg-type]
        off = off or next((test for test in sorted(tests) if self._never_equal(module, key, test)), None)  # type: ignore[arg-type]
        return off or next((guard.test for guard in around if self._never_none(module, key, guard.test, guard.sense)), None)  # type: ignore[arg-type]

    def _never_none(self, module: str, key: str, test: str, sense: bool) -> bool:
        """Whether the code `test` guards (true there: `sense`) runs only when a parameter is None
        (`if map_location is None:`, the `else:` of `if map_location is not None:`) and every
        call in the project passes it something else."""
        try:
            compared = ast.parse(test, mode="eval").body
        except SyntaxError:
            return False
        if not (
            isinstance(compared, ast.Compare) and len(compared.ops) == 1 and isinstance(compared.left, ast.Name)
            and isinstance(compared.comparators[0], ast.Constant) and compared.comparators[0].value is None
        ):
            return False
        if isinstance(compared.ops[0], ast.IsNot) == sense or not isinstance(compared.ops[0], (ast.Is, ast.IsNot)):
            return False  # the code runs when it is not None
        name = compared.left.id
        function = self.program.definition(module, key)
        if function is None or _rebinds(function, name):
            return False
        passed = self.passed_arguments(module, key, name)
        return bool(passed) and all(text != "None" for text in passed)

    def _never_equal(self, module: str, key: str, test: str) -> bool:
        """Whether `test` is `<parameter> == <literal>` and every call in the project passes
        another literal, or a module constant bound once to another (`model_name =
        "NeuMF-pre"` under `if __name__ == "__main__":`, then `benchmark(model_name)`)."""
        try:
            compared = ast.parse(test, mode="eval").body
        except SyntaxError:
            return False
        if not (isinstance(compared, ast.Compare) and len(compared.ops) == 1 and isinstance(compared.ops[0], ast.Eq)):
            return False
        name, literal = compared.left, compared.comparators[0]
        if isinstance(name, ast.Constant):
            name, literal = literal, name
        if not isinstance(name, ast.Name) or not isinstance(literal, ast.Constant):
            return False
        function = self.program.definition(module, key)
        if function is None or _rebinds(function, name.id):
            return False
        passed = self.passed_arguments(module, key, name.id)
        values = [self._literal_in(site, text) for site, text in zip(self.call_sites(module, key) or (), passed or ())]
        return bool(passed) and all(value is not None and value[0] != literal.value for value in values)

    def _literal_in(self, site: CallSite, text: str) -> tuple | None:
        """The literal `text`, passed at `site`, is (as a 1-tuple), or the one a module constant
        of the caller's module so named is bound to, once in the whole module; None otherwise."""
        try:
            expr = ast.parse(text, mode="eval").body
        except SyntaxError:
            return None
        if isinstance(expr, ast.Constant):
            return (expr.value,)
        tree = self.program.tree(site.caller)
        if not isinstance(expr, ast.Name) or tree is None:
            return None
        bindings = [
            node for node in walk(tree)
            if isinstance(node, ast.Name) and node.id == expr.id and not isinstance(node.ctx, ast.Load)
        ]
        assigned = [
            node for node in walk(tree)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == expr.id and isinstance(node.value, ast.Constant)
        ]
        if len(bindings) != 1 or len(assigned) != 1 or site.caller_key is not None and _binds_locally(tree, site, expr.id):
            return None
        return (assigned[0].value.value,)

    def off_by_default(self, module: str, key: str, name: str) -> bool:
        """Whether parameter `name` of function `key` of `module` is always left to a falsy
        literal default (`re_train=False`, `None`, `0`, `""`), so that code under `if <name>:`
        never runs: the function never rebinds it and no call in the project passes it
        (`unpassed`). False where that is not known."""
        memo = (module, key, name)
        if memo not in self._off:
            function = self.program.definition(module, key)
            default = _default_of(function, name) if function is not None else None
            self._off[memo] = (
                isinstance(default, ast.Constant) and not default.value
                and not _rebinds(function, name)
                and self.unpassed(module, key, function, name)
            )
        return self._off[memo]

    def unpassed(self, module: str, key: str, function, name: str) -> bool:
        """Whether no call in the project passes parameter `name` of function `key` of `module`
        (`function`: its `ast` definition): it is called at least once, every module that may
        call it is read, each call there of its name (or of an import alias; `__init__` calls
        too, for a class) has known arguments (no `*args`, `**kwargs`) that leave it out, and
        the name is used in no other way (handed on, kept, named in a string) than a call,
        `super(Class, self)` or `isinstance(x, Class)`. False where any of that is not known."""
        sites = self.call_sites(module, key)
        if not sites or function.decorator_list:
            return False
        owner, _, simple = key.rpartition(".")
        method = bool(owner) and not any(dotted(d) == "staticmethod" for d in function.decorator_list)
        if simple == "__init__":
            simple = owner
        arguments = function.args
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        index = positional.index(name) if name in positional else None
        if index is not None and method:
            index -= 1  # `self` (or the class) is bound: a call's first argument fills the next
        if index is not None and index < 0:
            return False
        for caller in dict.fromkeys((module, *self.program.importers_of(module))):
            tree = self.program.tree(caller)
            if tree is None:
                return False
            if not _leaves_out(tree, simple, owner if key.endswith(".__init__") else None, index, name):
                return False
        return True

    def passed_arguments(self, module: str, key: str, name: str, depth: int = 0) -> list[str] | None:
        memo = (module, key, name)
        if memo not in self._passed:
            self._passed[memo] = None  # a cycle of calls passes nothing known
            found = self._passed_arguments(module, key, name, depth)
            self._passed[memo] = None if found is None else tuple(found)
        known = self._passed[memo]
        return None if known is None else list(known)

    def _passed_arguments(self, module: str, key: str, name: str, depth: int) -> list[str] | None:
        """The source text of what each call in the project passes for parameter `name` of
        function `key` of `module` (`Trainer(model, device=rank)`: "rank"); None where that
        is not known: no call, a call not found, one that leaves the parameter to its default or
        to a `*args`/`**kwargs`, or a module that may call it unread. A call that hands on a
        parameter of its own function untouched (`is_main(device)` in `train(model, device)`)
        passes what that function's callers pass for it, where they are known. The first
        parameter of a function its module starts processes with (`mp.spawn(main_worker, ...)`)
        holds the process index, "local_rank", and no call where no rank of a distributed run
        gets counts for it (the one-process fallback `else: main_worker(args.gpu, ...)`)."""
        function = self.program.definition(module, key)
        sites = self.call_sites(module, key)
        spawned = function is not None and self._process_index(module, key, function) == name
        if spawned:
            sites = [site for site in sites or () if not self._one_process_site(site)]
        if function is None or not sites and not spawned or function.decorator_list:
            return None
        simple, index = _parameter_place(function, key, name)
        found = ["local_rank"] if spawned else []
        for site in sites:
            call = self._call_at(site, simple, key)
            given = _argument(call, index, name) if call is not None else None
            if given is None:
                return None
            forwarded = self._forwarded(site, given, depth)
            found.extend(forwarded if forwarded is not None else [ast.unparse(self._local_value(site, given))])
        return found

    def passed_or_default(self, module: str, key: str, name: str) -> list[tuple[CallSite, str, bool]] | None:
        """What each call in the project passes for parameter `name` of function `key` of
        `module`: (the call, the source text, whether that text is the parameter's default, the
        call leaving it out: `train(model)` for `def train(model, accum=1)`: "1"). None where
        that is not known: no call, a call not found, one whose `*args`/`**kwargs` may fill it,
        a decorated function, one that rebinds the parameter, or a module that may call it unread."""
        function = self.program.definition(module, key)
        sites = self.call_sites(module, key)
        if function is None or not sites or function.decorator_list or _rebinds(function, name):
            return None
        simple, index = _parameter_place(function, key, name)
        default = _default_of(function, name)
        found = []
        for site in sites:
            call = self._call_at(site, simple, key)
            given = _argument(call, index, name) if call is not None else None
            if given is not None:
                found.append((site, ast.unparse(given), False))
            elif call is not None and default is not None and _leaves_out_argument(call, index):
                found.append((site, ast.unparse(default), True))
            else:
                return None
        return found

    def _process_index(self, module: str, key: str, function) -> str | None:
        """The first parameter of top-level function `key` of `module` where the module starts
        processes with it (`mp.spawn(main_worker, ...)` passes each process its index first:
        `def main_worker(gpu, ...)`); None otherwise."""
        params = [*function.args.posonlyargs, *function.args.args]
        text = self.program.read(module) if params and "." not in key else None
        # The call hands `key` first, right after its parenthesis: most modules show no such text.
        passed_first = text is not None and re.search(r"\(\s*(?:#.*\n\s*)*" + re.escape(key) + r"\b", text)
        tree = self.program.tree(module, text) if passed_first else None
        for node in walk(tree) if tree is not None else ():
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == key:
                if self.program.qualify(module, dotted(node.func) or "") in SPAWN | START_PROCESSES:
                    return params[0].arg
        return None

    def _one_process_site(self, site: CallSite) -> bool:
        """Whether no rank of a distributed run gets to the call `site`: a guard around it is
        taken only where none runs (the `else:` of `if args.multiprocessing_distributed:`)."""
        return any(
            verdict.true_only_zero and verdict.true_never_zero if sense else verdict.false_only_zero and verdict.false_never_zero
            for verdict, sense in self._guards_at(site.caller, site.caller_key, site.line)
        )

    def _call_at(self, site: CallSite, simple: str, key: str) -> ast.Call | None:
        """The one call of a function named `simple` (also as an attribute) at `site`, or of
        method `key` through `super()` (`super().__init__(model, save_to_disk)` in a subclass's
        `__init__`); None where there is none or more than one."""
        inherited = f"super().{key.rpartition('.')[2]}"
        calls = [
            node for node in self._text_calls(site.caller) if node.lineno <= site.line <= node.end_lineno
            and ((dotted(node.func) or "").rpartition(".")[2] == simple or super_method(node.func) == inherited)
        ]
        return calls[0] if len(calls) == 1 else None

    def _local_value(self, site: CallSite, given: ast.expr) -> ast.expr:
        """What a call at `site` passes as `given`: where that is a name the function around the
        call binds once, by a plain assignment before the call, and nowhere else (no parameter,
        loop, `global` or second binding: `save_to_disk = get_rank() == 0`, then
        `Checkpointer(model, save_to_disk=save_to_disk)`), the value assigned; else `given`."""
        caller = self.program.definition(site.caller, site.caller_key) if site.caller_key is not None else None
        if caller is None or not isinstance(given, ast.Name):
            return given
        name = given.id
        if any(isinstance(a, ast.arg) and a.arg == name for a in ast.walk(caller.args)) or any(
            isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in walk(caller)
        ):
            return given
        bindings = [n for n in walk(caller) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
        assigned = [
            n for n in walk(caller) if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] in bindings
            and n.lineno < site.line
        ]
        return assigned[0].value if len(bindings) == 1 and len(assigned) == 1 else given

    def _forwarded(self, site: CallSite, given: ast.expr, depth: int) -> list[str] | None:
        """What the callers of the function around `site` pass for its parameter that the call
        hands on as `given`; None where `given` is not such a parameter or they are not known."""
        if not isinstance(given, ast.Name) or site.caller_key is None or depth >= MAX_DEPTH:
            return None
        caller = self.program.definition(site.caller, site.caller_key)
        arguments = caller.args if caller is not None else None
        if arguments is None or _rebinds(caller, given.id):
            return None
        if not any(a.arg == given.id for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)):
            return None
        return self.passed_arguments(site.caller, site.caller_key, given.id, depth + 1)

    def guarded_at(self, module: str, key: str | None, line: int, replicas: bool = False) -> bool:
        """Whether only rank 0 of a distributed run reaches `line` of function `key` (None:
        module code) of `module`, by the guards around it there; `replicas`: only the first
        data-parallel replica (`if mpu.get_data_parallel_rank() == 0:`)."""
        if replicas:
            return any(verdict.true_first_replica if sense else verdict.false_first_replica
                       for verdict, sense in self._guards_at(module, key, line))
        return any(verdict.true_only_zero if sense else verdict.false_only_zero for verdict, sense in self._guards_at(module, key, line))

    def every_rank_at(self, module: str, key: str | None, line: int) -> bool:
        """Whether every rank of a distributed run that runs function `key` (None: module code)
        of `module` reaches `line` of it: no guard around it is a rank test that rank 0 alone,
        or the other ranks alone, pass (`if rank == 0:`, `if rank != 0: return` before it)."""
        return not any(
            verdict.true_only_zero or verdict.true_never_zero if sense else verdict.false_only_zero or verdict.false_never_zero
            for verdict, sense in self._guards_at(module, key, line)
        )

    def rank_guards_at(self, module: str, key: str | None, line: int) -> list:
        """The guards (ddplint.model.records.Guard) around `line` of function `key` of `module`
        that tell ranks apart: rank 0 alone, or the other ranks alone, pass them one way."""
        return [
            guard for guard, verdict in self._judged(module, key, line)
            if verdict.true_only_zero or verdict.false_only_zero or verdict.true_never_zero or verdict.false_never_zero
        ]

    def guards_around(self, module: str, key: str | None) -> tuple:
        """The `if` tests (ddplint.model.records.Guard) around the code of function `key` of
        `module` (None: its own code), whatever they test."""
        record = self._record(module, key)
        return record.guards if record is not None else ()

    def _guards_at(self, module: str, key: str | None, line: int) -> list:
        """What each guard around `line` of function `key` of `module` says about the rank
        (ddplint.analyses.ranks.RankTest), with the way it is taken there."""
        return [(verdict, guard.sense) for guard, verdict in self._judged(module, key, line)]

    def _judged(self, module: str, key: str | None, line: int) -> list:
        """Each guard around `line` of function `key` of `module` that can be read, with what it
        says about the rank."""
        record = self._record(module, key)
        if record is None:
            return []
        found = []
        for guard in record.guards:
            if guard.first <= line <= guard.last:
                verdict = self._verdict(module, key, guard.test)
                if verdict is not None:
                    found.append((guard, verdict))
        return found

    def _verdict(self, module: str, key: str | None, test: str):
        """What the guard `test` (its source text) in function `key` of `module` says about the
        rank; None where libcst does not read it. Judged once per function: every question about
        a line under it judged it again (the pip packages: 15,863 parses and classifications
        for 5,810 questions, a tenth of a run)."""
        import libcst as cst

        from ddplint.analyses.ranks import classify

        memo = (module, key, test)
        if memo not in self._verdicts:
            resolve = self._guard_resolver(module, key)
            try:
                self._verdicts[memo] = classify(cst.parse_expression(test), resolve)
            except Exception:  # noqa: BLE001 - a test libcst does not read: no guard
                self._verdicts[memo] = None
        return self._verdicts[memo]

    def _guard_resolver(self, module: str, key: str | None):
        """The resolver (`_resolver`) for the guards of function `key` of `module`: a method's
        first parameter is its instance, except in a static or class method."""
        memo = (module, key)
        if memo not in self._guard_resolvers:
            cls = key.rpartition(".")[0] or None if key else None
            summary = self.program.summary(module)
            if cls is not None and (summary is None or cls not in summary.classes):
                cls = None
            method = self.program.definition(module, key) if cls is not None else None
            if method is not None and {dotted(d) for d in method.decorator_list} & {"staticmethod", "classmethod"}:
                method = None  # no instance in its first parameter
            params = [*method.args.posonlyargs, *method.args.args] if method is not None else []
            self._guard_resolvers[memo] = self._resolver(
                module, cls, 0, module_code=key is None, this=params[0].arg if params else None
            )
        return self._guard_resolvers[memo]

    def only_rank_zero(self, module: str, key: str | None, depth: int = 0, replicas: bool = False) -> bool:
        """Whether only rank 0 runs function `key` of `module`: it is decorated as rank-0-only
        (`@rank_zero_only`), or it is called at least once and every call in the project is
        made where only rank 0 gets (`guarded_at`, or from a function that only rank 0 runs).
        `replicas`: only the first data-parallel replica."""
        from ddplint.analyses.ranks import RANK_ZERO_DECORATORS

        if key is None or depth > MAX_DEPTH:
            return False
        memo = (module, key, replicas)
        hit, known = self._only_zero.get(memo, depth)
        if hit:
            return known
        self._only_zero.start(memo)
        record = self._record(module, key)
        if record is None:
            return False
        if any(d.rpartition(".")[2] in RANK_ZERO_DECORATORS for d in record.decorators):
            found = True
        else:
            sites = self.call_sites(module, key)
            found = bool(sites) and all(self._rank_zero_site(site, depth + 1, replicas) for site in sites)  # type: ignore[union-attr]
        return self._only_zero.put(memo, found, depth)

    def called_elsewhere_only_on_rank_zero(self, module: str, key: str, replicas: bool = False) -> bool | None:
        """For a rule that judges `module`'s own calls itself: None when no other module calls
        function `key`, or when a module that may call it is not read (unknown: the rule's own
        verdict stands); True when some do and only rank 0 (`replicas`: the first replica)
        gets to each such call; False when one is not guarded."""
        sites = self.call_sites(module, key)
        if sites is None:
            return None
        outside = [site for site in sites if site.caller != module]
        if not outside:
            return None
        return all(self._rank_zero_site(site, 1, replicas) for site in outside)

    def _rank_zero_site(self, site: CallSite, depth: int, replicas: bool = False) -> bool:
        """Only rank 0 gets to the call `site`: a guard around it, or a caller only rank 0 runs."""
        return self.guarded_at(site.caller, site.caller_key, site.line, replicas) or self.only_rank_zero(
            site.caller, site.caller_key, depth, replicas
        )
