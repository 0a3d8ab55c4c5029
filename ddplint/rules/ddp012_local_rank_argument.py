from __future__ import annotations

import ast

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.semantic.edits import keyword_argument, positional_arguments, with_keyword_argument
from ddplint.analyses.ranks import environment_key, strip_int
from ddplint.core.lines import split_lines
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.prefilter.triggers import CallTrigger
from ddplint.semantic.model import dotted_name
from ddplint.core.torch_api import OLD_LAUNCHER, OLD_LAUNCHER_MODULE
from ddplint.model.records import Place
from ddplint.prefilter.screens import walk
from ddplint.semantic.walk import positions

_ENVIRONMENT_DEFAULT = 'os.environ.get("LOCAL_RANK")'
_GROUPS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})


def _option_strings(call: cst.Call) -> list[str]:
    return [
        arg.value.evaluated_value  # type: ignore[misc]
        for arg in positional_arguments(call)
        if isinstance(arg.value, cst.SimpleString)
    ]


def _with_environment_fallback(default: cst.BaseExpression | None, quote: str = '"') -> cst.BaseExpression:
    call = cst.parse_expression(_ENVIRONMENT_DEFAULT.replace('"', quote))
    assert isinstance(call, cst.Call)
    if default is None or isinstance(default, cst.Name) and default.value == "None":
        return call  # os.environ.get's own default is None
    fallback = cst.Arg(value=default)
    return call.with_changes(args=[call.args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), fallback])


def _without(args: list[cst.Arg], dropped: cst.Arg) -> list[cst.Arg]:
    index = args.index(dropped)
    kept = args[:index] + args[index + 1 :]
    if index == len(args) - 1 and kept:
        # The new last argument takes the dropped one's comma (a trailing comma, a newline).
        kept[-1] = kept[-1].with_changes(comma=dropped.comma)
    return kept


_COMMON_LINE_LENGTHS = (79, 88, 99, 100, 119, 120)


def _line_length(lines: list[str]) -> int | None:
    """The line length a file keeps to: the smallest common limit its longest line is within."""
    longest = max((len(line) for line in lines), default=0)
    return next((limit for limit in _COMMON_LINE_LENGTHS if longest <= limit), None)


class LocalRankArgument(Rule):
    """
    Scripts written for the old `python -m torch.distributed.launch` declare
    `parser.add_argument("--local_rank", ...)`, because that launcher appended
    `--local_rank=N` to every process's command line. It no longer does so reliably:
    torchrun (PyTorch >= 1.10) passes no option at all and sets the `LOCAL_RANK` environment
    variable instead, and `torch.distributed.launch` since PyTorch 2.0 passes `--local-rank=N`
    with a hyphen, which such a parser rejects ("unrecognized arguments: --local-rank=0").
    Under torchrun the value silently stays at its default, so every process uses GPU 0
    (or `required=True` stops every rank at start).

    Fires when a parser accepts `--local_rank` but not `--local-rank`, nothing else gives
    the argument torchrun's value, and the program shows that the missing value matters.

    Flagged: an `add_argument` call whose option strings include `--local_rank` but not
    `--local-rank`, when no other `add_argument` of the same parser (or of a group of it)
    declares `--local-rank` and the default does not read `LOCAL_RANK` already
    (`default=int(os.environ.get("LOCAL_RANK", 0))` works under torchrun), and one of:
    - the option is `required=True` (torchrun's ranks stop at parsing);
    - a parsed `local_rank` is read (`args.local_rank`, `getattr(args, "local_rank")`), in
      this file or in a script that imports it (a parser in `config.py`, read in `train.py`:
      the message names the read), and none of them sets it from `LOCAL_RANK`
      (`args.local_rank = int(os.environ["LOCAL_RANK"])`, also through
      `os.environ.get("LOCAL_RANK", args.local_rank)`);
    - `python -m torch.distributed.launch` launches the script: the file names it (a usage
      line, a comment, a command it builds), or a shell script or document of the project
      runs this script, or one that imports it, with it (a path that ends the script's own
      from anywhere, a bare file name from the script's folder, above it or a folder right
      inside it such as `docs/`; the message names the line). Since PyTorch 2.0 that
      launcher passes `--local-rank=N` and the parser exits ("unrecognized arguments"), read
      or not.
    Not flagged otherwise: an option nothing reads, or that is set from `LOCAL_RANK`, is
    harmless under torchrun (it keeps its default and nothing notices). Files that call
    DeepSpeed (`deepspeed.initialize`, `deepspeed.add_config_arguments`), or that the project
    launches with `deepspeed train.py`, are flagged only where the project documents launching
    them with `torch.distributed.launch`: DeepSpeed's own launcher passes `--local_rank=N`.
    Fix (safe): add `"--local-rank"` as the first option string. argparse takes `dest` from
    the first long option with `-` turned into `_`, so it is still `args.local_rank`, and both
    spellings are accepted. The default becomes `os.environ.get("LOCAL_RANK", <old
    default>)`, so torchrun's value is used when no option is passed; argparse runs `type=`
    on string defaults, so `type=int` still gives an int, and with `LOCAL_RANK` unset the
    default is what it was. `required=True` is dropped with it: under torchrun it stopped every
    rank (without the option and without `LOCAL_RANK` the value is now the default, None).
    A default that already reads `LOCAL_RANK` is left alone, and so is a `required=` that is
    not a literal. A call that would pass the file's line length (the smallest of 79, 88, 99,
    100, 119, 120 that its longest line keeps within) is wrapped as black wraps it.
    """

    code = "DDP012"
    needs_ranks = True
    name = "local-rank-argument"
    frameworks = (Framework.DDP, Framework.DEEPSPEED)
    message = (
        "--local_rank only: torchrun passes no option (it sets LOCAL_RANK) and newer launchers pass "
        "--local-rank; accept --local-rank and default to the LOCAL_RANK environment variable"
    )
    fix = Applicability.SAFE
    # `also`: the option it flags (`--local_rank`, `-local_rank`).
    trigger = CallTrigger(methods=("add_argument",), also=("-local_rank",))

    flagged_examples = (
        Flagged(
            """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            ^
            args = parser.parse_args()
            torch.cuda.set_device(args.local_rank)
            """,
            fixed="""
            import argparse
            import os
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument(
                "--local-rank",
                "--local_rank",
                type=int,
                default=os.environ.get("LOCAL_RANK", -1),
            )
            args = parser.parse_args()
            torch.cuda.set_device(args.local_rank)
            """,
        ),
        Flagged(
            # required=True stops every rank under torchrun, whether or not the value is read.
            """
            def make_parser():
                parser = argparse.ArgumentParser(description='training')
                parser.add_argument('--local_rank', type=int, required=True)
                ^
                return parser.parse_args()
            """,
            fixed="""
            import os


            def make_parser():
                parser = argparse.ArgumentParser(description='training')
                parser.add_argument(
                    '--local-rank',
                    '--local_rank',
                    type=int,
                    default=os.environ.get('LOCAL_RANK'),
                )
                return parser.parse_args()
            """,
        ),
        Flagged(
            """
            import os
            group = parser.add_argument_group("distributed")
            group.add_argument(
            ^
                "--local_rank",
                type=int,
                help="set by the launcher",
            )
            device = getattr(parser.parse_args(), "local_rank")
            """,
            fixed="""
            import os
            group = parser.add_argument_group("distributed")
            group.add_argument(
                "--local-rank", "--local_rank",
                type=int,
                help="set by the launcher",
                default=os.environ.get("LOCAL_RANK"),
            )
            device = getattr(parser.parse_args(), "local_rank")
            """,
        ),
        Flagged(
            # `--local-rank` on another parser does not help this one.
            """
            import argparse
            import os
            train = argparse.ArgumentParser()
            train.add_argument("--local-rank", type=int, default=0)
            evaluate = argparse.ArgumentParser()
            evaluate.add_argument("--local_rank", type=int, default=0)
            ^
            rank = evaluate.parse_args().local_rank
            """,
            fixed="""
            import argparse
            import os
            train = argparse.ArgumentParser()
            train.add_argument("--local-rank", type=int, default=0)
            evaluate = argparse.ArgumentParser()
            evaluate.add_argument(
                "--local-rank",
                "--local_rank",
                type=int,
                default=os.environ.get("LOCAL_RANK", 0),
            )
            rank = evaluate.parse_args().local_rank
            """,
        ),
        Flagged(
            # Lines run to 119 columns here: the fixed call stays on one line; required=True goes.
            """
            import argparse
            import os

            parser = argparse.ArgumentParser(description="lines here run past a hundred columns: the fixed call stays on one line")
            parser.add_argument("--local_rank", type=int, default=-1, required=True)
            ^
            """,
            fixed="""
            import argparse
            import os

            parser = argparse.ArgumentParser(description="lines here run past a hundred columns: the fixed call stays on one line")
            parser.add_argument("--local-rank", "--local_rank", type=int, default=os.environ.get("LOCAL_RANK", -1))
            """,
        ),
        Flagged(
            # Never read, but the file documents the old launcher, which passes --local-rank.
            """
            \"\"\"Usage: python -m torch.distributed.launch --nproc_per_node=8 main.py\"\"\"
            import argparse
            import os

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0, help="ignored")
            ^
            args = parser.parse_args()
            rank = int(os.environ["LOCAL_RANK"])
            """,
            fixed="""
            \"\"\"Usage: python -m torch.distributed.launch --nproc_per_node=8 main.py\"\"\"
            import argparse
            import os

            parser = argparse.ArgumentParser()
            parser.add_argument(
                "--local-rank",
                "--local_rank",
                type=int,
                default=os.environ.get("LOCAL_RANK", 0),
                help="ignored",
            )
            args = parser.parse_args()
            rank = int(os.environ["LOCAL_RANK"])
            """,
        ),
    )
    clean_examples = (
        Clean(
            # The default already reads LOCAL_RANK: torchrun's value arrives (formerly flagged).
            """
            import os
            parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
            parser.add_argument("--local_rank", type=int, default=os.environ["LOCAL_RANK"])
            """
        ),
        Clean(
            # Both spellings declared by sibling add_argument calls of one parser (and a group of it).
            """
            import argparse

            def get_args():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=-1)
                parser.add_argument("--local-rank", type=int, dest="local_rank")
                dist = parser.add_argument_group("distributed")
                dist.add_argument("--local_rank", type=int)
                return parser.parse_args()
            """
        ),
        Clean(
            """
            parser.add_argument("--local-rank", "--local_rank", type=int, default=0)
            parser.add_argument("--local_rank", "--local-rank", dest="local_rank", type=int)
            parser.add_argument("--rank", type=int, default=0)
            """
        ),
        Clean(
            """
            import os
            local_rank = int(os.environ["LOCAL_RANK"])
            parser.add_argument("--local_rank_offset", type=int, default=0)
            """
        ),
        Clean(
            # The option is never read (the rank comes from LOCAL_RANK): torchrun leaves it
            # unset and nothing notices (formerly flagged).
            """
            \"\"\"Usage: torchrun --nproc_per_node=8 main.py\"\"\"
            import argparse
            import os
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            args = parser.parse_args()
            local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(local_rank)
            """
        ),
        Clean(
            # Overwritten from LOCAL_RANK right after parsing: torchrun's value is used.
            """
            import argparse
            import os

            def parse():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                args = parser.parse_args()
                args.local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))
                return args

            def main():
                opts = argparse.ArgumentParser()
                opts.add_argument("--local_rank", type=int, default=-1)
                cfg = opts.parse_args()
                if "LOCAL_RANK" in os.environ:
                    cfg.local_rank = int(os.environ["LOCAL_RANK"])
                device = torch.device("cuda", cfg.local_rank)
            """
        ),
        Clean(
            # DeepSpeed's launcher passes --local_rank=N, the spelling this parser accepts.
            """
            import argparse
            import deepspeed

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            parser = deepspeed.add_config_arguments(parser)
            args = parser.parse_args()
            torch.cuda.set_device(args.local_rank)
            engine, *_ = deepspeed.initialize(args=args, model=model)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._pending: list[tuple[cst.Call, tuple]] = []  # `--local_rank` only, with its parser
        self._hyphenated: set[tuple] = set()  # parsers that declare `--local-rank` somewhere
        self._assigned: set[int] = set()  # `x.local_rank` attributes that are assignment targets
        self._read = False  # the file reads a parsed `local_rank` (`args.local_rank`)
        self._from_environment = False  # it sets `x.local_rank` from LOCAL_RANK
        self._deepspeed = False  # it calls DeepSpeed, whose launcher passes `--local_rank`
        self._old_launcher: bool | None = None  # it names torch.distributed.launch
        self._launch_line: Place | None = None  # where the project launches it so ("run.sh:3")
        self._missed: bool | None = None  # the parsed value is read and not set from LOCAL_RANK
        self._reader: Place | None = None  # where another module reads it ("train.py:40")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "local_rank":
                self._assigned.add(id(target.target))
                if self._reads_local_rank(node.value):
                    self._from_environment = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "local_rank" and id(node) not in self._assigned:
            self._read = True

    def visit_Call(self, node: cst.Call) -> None:
        if not self._deepspeed and (self.model.qualified(node.func) or "").partition(".")[0] == "deepspeed":
            self._deepspeed = True
        if dotted_name(node.func) == "getattr" and len(node.args) > 1:
            self._read |= self.model.string_value(node.args[1].value) == "local_rank"
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument"):
            return
        options = _option_strings(node)
        parser = self._parser(node.func.value)
        if "--local-rank" in options:
            self._hyphenated.add(parser)
        elif "--local_rank" in options:
            default = keyword_argument(node, "default")
            if default is None or not self._reads_local_rank(default.value):
                self._pending.append((node, parser))

    def _parser(self, receiver: cst.BaseExpression) -> tuple:
        """The parser an `add_argument` call adds to, through `add_argument_group()` and
        `add_mutually_exclusive_group()`, as (function, dotted name)."""
        for _ in range(3):
            if not isinstance(receiver, cst.Name):
                break
            bound = self.model.constant(receiver.value)
            if not (isinstance(bound, cst.Call) and isinstance(bound.func, cst.Attribute) and bound.func.attr.value in _GROUPS):
                break
            receiver = bound.func.value
        return self.model.frame.key, dotted_name(receiver)

    def leave_Module(self, original_node: cst.Module) -> None:
        pending = [node for node, parser in self._pending if parser not in self._hyphenated]
        if not pending:
            return
        if self._deepspeed or self._deepspeed_launch():
            # DeepSpeed's launcher passes `--local_rank=N`, unless the project documents
            # launching this script with torch.distributed.launch itself.
            if self._launched_by_old_launcher() and self._launch_line is not None:
                for node in pending:
                    self._report(node)
            return
        for node in pending:
            if self._value_missed() or self._required(node) or self._launched_by_old_launcher():
                self._report(node)

    def _deepspeed_launch(self) -> bool:
        """A shell script or document of the project runs this script with `deepspeed`."""
        project = self.model.project
        return project is not None and project.launch_line("deepspeed") is not None

    def _value_missed(self) -> bool:
        """A parsed `local_rank` is read, by this file or by a script that imports its parser
        (`config.local_rank` in `train.py`), and none of them sets it from `LOCAL_RANK`."""
        if self._missed is None:
            read, from_environment = self._read, self._from_environment
            project = self.model.project
            if project is not None and not from_environment:
                reader, from_environment = attribute_uses(project, "local_rank")
                if not read and reader is not None and reader.path != project.path:
                    self._reader = reader
                read = read or reader is not None
            self._missed = read and not from_environment
        return self._missed

    def _launched_by_old_launcher(self) -> bool:
        """The file names `torch.distributed.launch` (a usage line in its docstring, a comment,
        a command it builds), or a shell script or document of the project launches this file
        with it: on PyTorch >= 2.0 that launcher passes `--local-rank=N`, which the parser
        rejects, whether or not the value is read. (Asked only of files with an option to
        report, so rendering the module's text is rare.)"""
        if self._old_launcher is None:
            self._old_launcher = OLD_LAUNCHER.search(self.model.source) is not None
            project = self.model.project
            self._launch_line = project.launch_line(OLD_LAUNCHER_MODULE) if project is not None else None
            self._old_launcher |= self._launch_line is not None
        return self._old_launcher

    @staticmethod
    def _required(node: cst.Call) -> bool:
        """`required=True`: under torchrun, which passes no option, the parser itself stops every rank."""
        required = keyword_argument(node, "required")
        return required is not None and isinstance(required.value, cst.Name) and required.value.value == "True"

    def _report(self, node: cst.Call) -> None:
        # Before `--local_rank` itself: the first long option names `dest`, and both give local_rank.
        index, original = next(
            (i, arg) for i, arg in enumerate(node.args)
            if isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "--local_rank"
        )
        quote = original.value.quote  # type: ignore[attr-defined]
        alias = cst.Arg(
            value=cst.SimpleString(f"{quote}--local-rank{quote}"),
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        args = [*node.args[:index], alias, *node.args[index:]]
        imports: tuple[str, ...] = ()
        default = keyword_argument(node, "default")
        reads_environment = default is not None and self._reads_local_rank(default.value)
        required = keyword_argument(node, "required")
        is_required = required is not None and not (isinstance(required.value, cst.Name) and required.value.value == "False")
        literal_true = required is not None and isinstance(required.value, cst.Name) and required.value.value == "True"
        if not reads_environment and (not is_required or literal_true):
            imports = ("import os",)
            if default is not None:
                args[args.index(default)] = default.with_changes(value=_with_environment_fallback(default.value, quote))
            if required is not None:
                # torchrun sets LOCAL_RANK instead of passing the option: required=True would
                # stop every rank it starts.
                args = _without(args, required)
            if default is not None:
                fixed = node.with_changes(args=args)
            else:
                fixed = with_keyword_argument(node.with_changes(args=args), "default", _with_environment_fallback(None, quote))
        else:
            fixed = node.with_changes(args=args)
        if self._launch_line:
            where = f" ({self._launch_line} launches this script with torch.distributed.launch)"
        elif self._reader and not self._required(node):
            where = f" ({self._reader} reads the parsed local_rank)"
        else:
            where = ""
        self.report(node, self.message + where, replace={node: self._fitted(node, fixed)}, imports=imports)

    def _fitted(self, node: cst.Call, fixed: cst.Call) -> cst.Call:
        """`fixed`, its arguments wrapped as black wraps them when the line would pass the
        file's line length (the smallest common limit its longest line keeps within)."""
        module = self.model.module
        if "\n" in module.code_for_node(node):
            return fixed
        lines = split_lines(self.model.source)
        (line, col), (_, end_col) = self.model.spans([node])[id(node)]
        original = lines[line - 1]
        if len(original) - (end_col - col) + len(module.code_for_node(fixed)) <= (limit := _line_length(lines) or 10**6):
            return fixed
        indent = original[: len(original) - len(original.lstrip())]
        unit = module.default_indent if not module.default_indent.strip(" \t") else "    "
        args = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for arg in fixed.args]
        inner = ", ".join(module.code_for_node(arg) for arg in args)

        def newline(indented: bool) -> cst.ParenthesizedWhitespace:
            # The indentation written out (not the block's), so that the edit reads the same
            # on its own (the JSON and editor edits) as in the file.
            return cst.ParenthesizedWhitespace(
                indent=False, last_line=cst.SimpleWhitespace(indent + unit if indented else indent)
            )

        if len(indent) + len(unit) + len(inner) <= limit:
            spaced = [arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for arg in args[:-1]]
            return fixed.with_changes(
                whitespace_before_args=newline(True),
                args=[*spaced, args[-1].with_changes(whitespace_after_arg=newline(False))],
            )
        wrapped = [arg.with_changes(comma=cst.Comma(whitespace_after=newline(True))) for arg in args[:-1]]
        wrapped.append(args[-1].with_changes(comma=cst.Comma(whitespace_after=newline(False))))
        return fixed.with_changes(whitespace_before_args=newline(True), args=wrapped)

    def _reads_local_rank(self, expr: cst.BaseExpression) -> bool:
        """`os.environ["LOCAL_RANK"]`, `int(os.getenv("LOCAL_RANK", -1))`, either branch of a
        conditional expression, or a name bound once to one of these."""
        expr = strip_int(expr)
        if isinstance(expr, cst.IfExp):
            return self._reads_local_rank(expr.body) or self._reads_local_rank(expr.orelse)
        if isinstance(expr, cst.Name):
            bound = self.model.constant(expr.value)
            return bound is not None and not isinstance(bound, cst.Name) and self._reads_local_rank(bound)
        return isinstance(expr, (cst.Call, cst.Subscript)) and environment_key(expr) == "LOCAL_RANK"


# -- questions only this rule asks of the program model -------------------------------------


def attribute_uses(view, attribute: str):
    """Across `users`: where a module reads `<x>.<attribute>` (the Place in the first such
    module), and whether one assigns it from the environment variable named like it in
    capitals (`args.local_rank = int(os.environ["LOCAL_RANK"])`). A module that does not parse
    reads and assigns nothing."""
    program = view.program
    read, from_environment = None, False
    for module in view.users:
        line, environment = _attribute_uses(program.tree(module), attribute)
        if read is None and line is not None:
            read = program.place(module, line)
        from_environment |= environment
    return read, from_environment


def _attribute_uses(tree: ast.Module | None, attribute: str) -> tuple[int | None, bool]:
    if tree is None:
        return None, False
    variable, read, from_environment = attribute.upper(), None, False
    for node in walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Load):
            read = node.lineno if read is None else min(read, node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Attribute) and target.attr == attribute for target in targets):
                from_environment |= any(isinstance(part, ast.Constant) and part.value == variable for part in walk(node.value))
    return read, from_environment
