"""The command-line options a file's argparse parser declares, and the value a run gets for one.

A count read from an option (`num_workers=args.workers`, `for _ in range(args.accum_steps)`) is
what the run passes, or the option's default. Where no launch command of the project passes the
option, every documented run gets the default: a default of 0 workers starts no worker, a default
of 1 micro-batch accumulates nothing. A count written as a literal, or as a name bound once to
one (`grad_step = 1`), is that number on every run.
"""

from __future__ import annotations

import re

import libcst as cst

from ddplint.semantic.edits import keyword_argument
from ddplint.semantic.model import Analysis, Scope, SemanticModel


class ParserOptions(Analysis):
    """Read `default_for` after the walk."""

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        # the attribute argparse stores an option under -> (its option strings, its default)
        self._options: dict[str, tuple[list[str], cst.BaseExpression | None]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        """`parser.add_argument("--num-workers", type=int, default=0)`."""
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument"):
            return
        options = [arg.value.evaluated_value for arg in node.args if arg.keyword is None and isinstance(arg.value, cst.SimpleString)]
        longs = [option for option in options if isinstance(option, str) and option.startswith("--")]
        dest = keyword_argument(node, "dest")
        name = self.model.string_value(dest.value) if dest is not None else (longs[0][2:].replace("-", "_") if longs else None)
        if name is not None:
            default = keyword_argument(node, "default")
            self._options[name] = ([o for o in options if isinstance(o, str)], default.value if default is not None else None)

    def default_for(self, expr: cst.BaseExpression | None, scope: Scope | None = None) -> int | None:
        """The integer every documented run gets for `expr`: an integer literal; an option of
        this file's parser (`args.accum_steps`), its literal default, where no launch command of
        the project passes the option another value; either through a name bound once to it (a
        module constant, or a local of the function whose `scope` is given). None otherwise."""
        if isinstance(expr, cst.Name) and self.model.constant(expr.value, scope) is not None:
            expr = self.model.constant(expr.value, scope)
        if isinstance(expr, cst.Integer):
            return int(expr.evaluated_value)
        if not isinstance(expr, cst.Attribute) or expr.attr.value not in self._options:
            return None
        strings, default = self._options[expr.attr.value]
        if not isinstance(default, cst.Integer):
            return None
        value = int(default.evaluated_value)
        project = self.model.project
        for command in project.launches() if project is not None else ():
            for option in strings:
                for passed in re.finditer(rf"(?<![\w-]){re.escape(option)}(?:=|\s+)(\S+)", command.command):
                    if passed.group(1) != str(value):
                        return None
        return value
