"""Where a value comes from, asked of the process's rank: which attributes the objects of a
project class hold a value made from the rank in, in every documented run.

A file named after the rank (`'checkpoint_r' + str(rank) + '.pth.tar'`) is a file of its own
on each rank: no two ranks write it, and the rank that reads it back wrote it, from its own
device. Where the name is built in a class's constructor and kept in an attribute
(`self.checkpoint_fpath`), the method that saves to it, or the script that loads it
(`torch.load(cmanager.checkpoint_fpath)`), shows no rank; this module follows the attribute
to its values:

- every assignment of `self.<attribute>` in the class's methods is made from the rank: it reads
  (through the method's own variables, and the class's other attributes) a value named like a
  global rank (`rank`, `args.rank`, `dist.get_rank()`); a parameter named so holds the rank
  where every call in the project passes it one (`ClusterManager(rank=args.rank, ...)`), or
  where its calls are not known;
- a variable bound under `if <flag>:` (`if all_workers: model_rank = rank` / `else: model_rank
  = 0`) counts only the bindings that a documented run can reach: a flag that is a parameter of
  the method takes what every call in the project passes (its default where a call leaves it
  out), and an option of the caller's command line takes the value every documented run gives
  it (`ProjectView.documented_value`: `--checkpoint_all` defaults to 'True', which the parser's
  module converts to True), so a branch that no documented run takes says nothing;
- a test of the rank (`rank == 0`) makes no value per rank: it is not followed.

Anything not followed (a value of unknown origin, a binding through unpacking or `+=`, a flag
whose value no documented run shows) keeps the attribute out: the answer is a proof or nothing.
"""

from __future__ import annotations

import ast

from ddplint.model.context import tested_statements
from ddplint.model.parsers import test_value
from ddplint.prefilter.screens import walk

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TESTS = (ast.Compare, ast.BoolOp, ast.Lambda)  # what a rank only tests, or a function: no value of it


class RankedAttributes:
    """The attributes of one project class that hold a value made from the rank (`held`: attribute
    -> the line of its first assignment), read from the class's definition in `module`."""

    def __init__(self, project, module: str, cls: ast.ClassDef) -> None:
        self.project, self.module = project, module
        self.program = project.program
        self.cls = cls
        # method -> (its name for `self`, variable -> [(value or None, tests)]), attribute -> [(value, tests, method)]
        self._methods: dict[str, tuple[str | None, dict[str, list]]] = {}
        self._attributes: dict[str, list] = {}
        for method in (node for node in cls.body if isinstance(node, _FUNCTIONS)):
            self._read_method(method)
        self._asking: set[tuple[str, str]] = set()
        self.held = {
            attribute: next(iter(values))[0].lineno for attribute, values in self._attributes.items()
            if all(value is not None for value, _, _ in values) and self._attribute(attribute)
        }

    def _read_method(self, method) -> None:
        params = [*method.args.posonlyargs, *method.args.args]
        this = params[0].arg if params else None
        variables: dict[str, list] = {}
        for statement, tests in tested_statements(method.body, ()):
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
                targets, value = [statement.target], None  # `+=`, an annotation: not followed
            elif isinstance(statement, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                targets, value = [getattr(statement, "target", None)] + [item.optional_vars for item in getattr(statement, "items", ())], None
            else:
                continue
            for target in (t for t in targets if t is not None):
                plain = len(targets) == 1 and value is not None
                for node in walk(target) if not isinstance(target, (ast.Name, ast.Attribute)) else [target]:
                    bound = value if plain and node is target else None
                    if isinstance(node, ast.Name):
                        variables.setdefault(node.id, []).append((bound, tests))
                    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == this:
                        self._attributes.setdefault(node.attr, []).append((bound, tests, method))
        self._methods[method.name] = (this, variables)

    def _attribute(self, attribute: str) -> bool:
        """Whether every documented run's value of `self.<attribute>` is made from the rank."""
        key = ("", attribute)
        if key in self._asking:
            return False  # a cycle proves nothing
        self._asking.add(key)
        try:
            reached = [(value, method) for value, tests, method in self._attributes.get(attribute, ()) if self._reachable(tests, method)]
            return bool(reached) and all(value is not None and self._made_from_rank(value, method) for value, method in reached)
        finally:
            self._asking.discard(key)

    def _variable(self, name: str, method) -> bool | None:
        """Whether the method's variable `name` holds a value made from the rank in every
        documented run; None where the method does not bind it (a parameter or a global)."""
        bindings = self._methods[method.name][1].get(name)
        if bindings is None:
            return None
        key = (method.name, name)
        if key in self._asking:
            return False
        self._asking.add(key)
        try:
            reached = [value for value, tests in bindings if self._reachable(tests, method)]
            return bool(reached) and all(value is not None and self._made_from_rank(value, method) for value in reached)
        finally:
            self._asking.discard(key)

    def _made_from_rank(self, value: ast.expr, method) -> bool:
        """Whether `value`, in `method`, reads a value made from the rank (not through a test of it)."""
        this = self._methods[method.name][0]
        pending = [value]
        while pending:
            node = pending.pop()
            if isinstance(node, _TESTS):
                continue
            if isinstance(node, ast.Name):
                held = self._variable(node.id, method)
                if held if held is not None else self._parameter(node.id, method):
                    return True
                continue
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == this:
                if node.attr in self._attributes and self._attribute(node.attr):
                    return True
                continue
            if isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)) and _names_rank(node):
                return True
            pending.extend(ast.iter_child_nodes(node))
        return False

    def _parameter(self, name: str, method) -> bool:
        """Whether the parameter `name` of `method` holds the rank: named so (`rank`, `local_rank`),
        and every call in the project that is known passes one (`rank=args.rank`)."""
        arguments = method.args
        if not any(a.arg == name for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)) or not _is_rank_name(name):
            return False
        passed = self.program.context.passed_arguments(self.module, f"{self.cls.name}.{method.name}", name)
        return passed is None or all(_names_rank(_parsed(text)) for text in passed)

    def _reachable(self, tests: tuple, method) -> bool:
        """Whether some documented run may pass all of the `if` tests (`(test, way)`) around a binding."""
        return not any(self._truth(test, method) is (not way) for test, way in tests)

    def _truth(self, test: ast.expr, method) -> bool | None:
        """The truth of `test` in every documented run: a parameter of the method (`if
        all_workers:`) by what every call passes it, else options and literals; None: not known."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._truth(test.operand, method)
            return None if inner is None else not inner
        if not isinstance(test, ast.Name):
            return test_value(test, self.project.module_view(self.module).documented_value)
        if self._methods[method.name][1].get(test.id) is not None:
            return None  # a variable of the method: not followed
        passed = self.program.context.passed_or_default(self.module, f"{self.cls.name}.{method.name}", test.id)
        truths = {self._passed_truth(site.caller, text) for site, text, _ in passed or ()}
        return truths.pop() if passed and len(truths) == 1 else None

    def _passed_truth(self, caller: str, text: str) -> bool | None:
        """The truth, in every documented run, of what a call in module `caller` passes (its text)."""
        expr = _parsed(text)
        return test_value(expr, self.project.module_view(caller).documented_value) if expr is not None else None


def _parsed(text: str) -> ast.expr | None:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _is_rank_name(name: str) -> bool:
    return _names_rank(ast.Name(name))


def _names_rank(expr: ast.expr | None) -> bool:
    """Whether `expr` reads the process's global rank, by its name (`args.rank`, `dist.get_rank()`,
    `os.environ["RANK"]`): ddplint.analyses.ranks.rank_dimension of its libcst form."""
    if expr is None:
        return False
    import libcst as cst

    from ddplint.analyses.ranks import GLOBAL, rank_dimension

    try:
        return rank_dimension(cst.parse_expression(ast.unparse(expr))) == GLOBAL
    except Exception:  # noqa: BLE001 - text libcst does not read: unknown
        return False


def ranked_attributes(project, made: tuple[str, str]) -> dict[str, int]:
    """The attributes (-> the line of the first assignment, in the class's module) that the
    objects of the project class `made` (its module, its name) hold a value made from the rank
    in, in every documented run; {} where none is known or the class is not found."""
    tree = project.program.tree(made[0])
    cls = next((node for node in (tree.body if tree is not None else ()) if isinstance(node, ast.ClassDef) and node.name == made[1]), None)
    return RankedAttributes(project, made[0], cls).held if cls is not None else {}
