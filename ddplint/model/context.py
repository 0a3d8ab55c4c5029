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
import textwrap
from dataclasses import dataclass

from ddplint.core.lines import split_lines
from ddplint.model.records import FunctionContext
from ddplint.prefilter.screens import walk

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_PROPERTIES = frozenset({"property", "cached_property"})
MAX_DEPTH = 6  # predicate helpers and callers followed this deep; deeper is unknown


@dataclass(frozen=True)
class CallSite:
    """A call of a project function: the calling module, the calling function's key (None for
    module code) and the line."""

    caller: str
    caller_key: str | None
    line: int


def _is_self_attribute(node: ast.AST, this: str | None, attribute: str) -> bool:
    """`self.<attribute>`, `self` being the method's first parameter `this`."""
    return (
        isinstance(node, ast.Attribute) and node.attr == attribute
        and isinstance(node.value, ast.Name) and node.value.id == this
    )


class ProcessContext:
    """Process-context questions over a solved Program (ddplint.model.program)."""

    def __init__(self, program) -> None:
        self.program = program
        self._predicates: dict[tuple[str, str], object] = {}
        self._only_zero: dict[tuple[str, str | None, bool], bool] = {}
        # module -> (the function called, the call) of the calls its code makes of project functions
        self._callers: dict[str, list[tuple[tuple[str, str], CallSite]]] = {}
        self._attributes: dict[tuple[str, str, str], list] = {}  # (module, class, attribute) -> values
        self._classes: dict[tuple[str, str], ast.ClassDef | None] = {}  # (module, class) -> its definition

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

    def _resolver(self, module: str, cls: str | None, depth: int):
        """What a name or call in `module` holds as a rank test, through the model: a call of a
        project function is its body's verdict; a project function named without a call is a
        function object, always true. None: nothing known (the name decides)."""
        from ddplint.analyses.ranks import _ALWAYS_TRUE, RankTest
        from ddplint.semantic.model import dotted_name

        def resolve(expr) -> RankTest | None:
            import libcst as cst

            if isinstance(expr, cst.Call):
                name = dotted_name(expr.func)
                return self.predicate(module, name, cls, depth) if name else None
            name = dotted_name(expr)
            target = self.program.resolve(module, name, cls) if name else None
            if target is None or target.key.endswith(".__init__"):
                return None
            record = self._record(target.module, target.key)
            if record is not None and {d.rpartition(".")[2] for d in record.decorators} & _PROPERTIES:
                return self.predicate(module, name, cls, depth)  # a property is read, not named
            return _ALWAYS_TRUE

        return resolve

    # -- rank facts held in a base class's attributes -------------------------------------

    def attribute_values(self, module: str, base: str, attribute: str, depth: int = 0) -> list:
        """The values that the methods of the project class `base` (as written in `module`, a
        base of a class there) and of its project bases assign to `self.<attribute>`, as
        (expression, resolver of its module) for RankFacts to classify: `self._primary =
        self._rank == 0` in `Trainer.__init__` makes `if self._primary:` a rank-0 test in a
        subclass. A binding of unknown value (`+=`, unpacking) is `...`, no rank test. Read on
        demand, from the text of the modules that hold the classes; [] when `base` names no
        project class or none of them assigns it."""
        made = self.program.class_of(module, base) if depth <= MAX_DEPTH else None
        if made is None:
            return []
        key = (*made, attribute)
        if key not in self._attributes:
            self._attributes[key] = []  # a cycle of bases adds nothing
            target, cls = made
            found = [(value, self._resolver(target, cls, depth + 1)) for value in self._assigned(target, cls, attribute)]
            summary = self.program.summary(target)
            record = summary.classes.get(cls) if summary is not None else None
            for inner in record.bases if record is not None else ():
                found += self.attribute_values(target, inner, attribute, depth + 1)
            self._attributes[key] = found
        return self._attributes[key]

    def _assigned(self, module: str, cls: str, attribute: str) -> list:
        """The values (libcst expressions) the methods of class `cls`, defined at the top of
        `module`, assign to `self.<attribute>`."""
        import libcst as cst

        if (module, cls) not in self._classes:
            tree = self.program.tree(module)
            for node in tree.body if tree is not None else ():
                if isinstance(node, ast.ClassDef):
                    self._classes.setdefault((module, node.name), node)
            self._classes.setdefault((module, cls), None)
        node = self._classes[(module, cls)]
        found: list = []
        for method in (n for n in (node.body if node is not None else ()) if isinstance(n, _FUNCTIONS)):
            params = [*method.args.posonlyargs, *method.args.args]
            this = params[0].arg if params else None
            for statement in walk(method):
                if isinstance(statement, ast.Assign):
                    targets, value = statement.targets, statement.value
                elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
                    targets, value = [statement.target], None if isinstance(statement, ast.AugAssign) else statement.value
                else:
                    continue
                for target in targets:
                    if _is_self_attribute(target, this, attribute):
                        try:
                            found.append(cst.parse_expression(ast.unparse(value)) if value is not None else cst.Ellipsis())
                        except Exception:  # noqa: BLE001 - an expression libcst does not read: unknown
                            found.append(cst.Ellipsis())
                    elif isinstance(target, (ast.Tuple, ast.List)) and any(_is_self_attribute(t, this, attribute) for t in walk(target)):
                        found.append(cst.Ellipsis())
        return found

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
                target = self.program.resolve(module, call.callee, cls)
                if target is not None:
                    found.append((target.function, CallSite(module, caller or None, call.line)))
        self._callers[module] = found
        return found

    def call_sites(self, module: str, key: str) -> list[CallSite] | None:
        """Every call of function `key` of `module` in the project; None when some module that
        may call it is not read (past the model's bound, or unparsable)."""
        sites = []
        for caller in dict.fromkeys((module, *self.program.importers_of(module))):
            calls = self._calls_in(caller)
            if calls is None:
                return None
            sites += [site for function, site in calls if function == (module, key)]
        return sites

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

    def guards_around(self, module: str, key: str | None) -> tuple:
        """The `if` tests (ddplint.model.records.Guard) around the code of function `key` of
        `module` (None: its own code), whatever they test."""
        record = self._record(module, key)
        return record.guards if record is not None else ()

    def _guards_at(self, module: str, key: str | None, line: int) -> list:
        """What each guard around `line` of function `key` of `module` says about the rank
        (ddplint.analyses.ranks.RankTest), with the way it is taken there."""
        import libcst as cst

        from ddplint.analyses.ranks import classify

        record = self._record(module, key)
        if record is None:
            return []
        cls = key.rpartition(".")[0] or None if key else None
        summary = self.program.summary(module)
        if cls is not None and (summary is None or cls not in summary.classes):
            cls = None
        found = []
        for guard in record.guards:
            if guard.first <= line <= guard.last:
                try:
                    verdict = classify(cst.parse_expression(guard.test), self._resolver(module, cls, 0))
                except Exception:  # noqa: BLE001 - a test libcst does not read: no guard
                    continue
                found.append((verdict, guard.sense))
        return found

    def only_rank_zero(self, module: str, key: str | None, depth: int = 0, replicas: bool = False) -> bool:
        """Whether only rank 0 runs function `key` of `module`: it is decorated as rank-0-only
        (`@rank_zero_only`), or it is called at least once and every call in the project is
        made where only rank 0 gets (`guarded_at`, or from a function that only rank 0 runs).
        `replicas`: only the first data-parallel replica."""
        from ddplint.analyses.ranks import RANK_ZERO_DECORATORS

        if key is None or depth > MAX_DEPTH:
            return False
        memo = (module, key, replicas)
        if memo in self._only_zero:
            return self._only_zero[memo]
        self._only_zero[memo] = False  # a cycle of calls proves nothing
        record = self._record(module, key)
        if record is None:
            return False
        if any(d.rpartition(".")[2] in RANK_ZERO_DECORATORS for d in record.decorators):
            found = True
        else:
            sites = self.call_sites(module, key)
            found = bool(sites) and all(self._rank_zero_site(site, depth + 1, replicas) for site in sites)  # type: ignore[union-attr]
        self._only_zero[memo] = found
        return found

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
