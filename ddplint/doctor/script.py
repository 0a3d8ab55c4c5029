"""What the training script says that the launch depends on, read the way the linter reads code.

One walk of the script's libcst tree with the linter's semantic model (names through imports,
module constants) and its rank analysis (`ddplint.analyses.ranks.RankRegions`: which code rank
0 alone runs) gathers: its DataLoaders' workers, the sharing strategy it sets, the backend,
timeout and init method of `init_process_group`, whether it uses CUDA or starts its own ranks,
the work rank 0 does alone while the other ranks wait in a collective, and its argparse
parsers (the options each accepts, with their defaults, and whether it tolerates others).

What two rules know comes through the linter's public API (`ddplint.api.lint_source`), the
rule chosen by its name: local-rank-argument (a `--local_rank` that a launcher's way of
passing the rank misses) and rank-from-local-rank (`init_process_group(rank=LOCAL_RANK)`,
wrong on several nodes). local-rank-argument decides from the launcher the file names, so
the launch command's launcher is handed to it as a usage comment appended to the text, as a
script's own docstring would name it.

The script is read, never imported or run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst

from ddplint.analyses.ranks import RankRegions, last_name
from ddplint.analyses.roles import EVALUATION_WORDS
from ddplint.core.torch_api import (
    ARGUMENT_PARSER, COLLECTIVES, CPU_COUNT, CUDA_IS_AVAILABLE, DATALOADER, INIT_PROCESS_GROUP, SET_SHARING_STRATEGY,
    SPAWN, START_PROCESSES, TIMEDELTA, TORCH_CUDA,
)
from ddplint.doctor.checks import Unknown, Where
from ddplint.engine.lint import SourceError, parse, traverse
from ddplint.semantic.edits import argument_for, keyword_argument, positional_arguments
from ddplint.semantic.model import SemanticModel, dotted_name
from ddplint.semantic.walk import positions

NOT_LITERAL = object()  # an option's default that is not a literal
_GROUPS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})
_WRAPPING_CALLS = frozenset({"enumerate", "tqdm", "iter", "zip"})
# The rules whose knowledge the launch checks use, by name (a code is named only in its rule).
LOCAL_RANK_ARGUMENT = "local-rank-argument"
RANK_FROM_LOCAL_RANK = "rank-from-local-rank"


@dataclass(frozen=True)
class Option:
    strings: tuple[str, ...]
    dest: str
    default: object  # the literal default; NOT_LITERAL otherwise; None where none is given


@dataclass
class Parser:
    """An argparse parser of the script. `where` is where it is built (None: not in this
    file); `extended`: built with `parents=` or handed to code of another module, which may
    add options ddplint does not see."""

    where: Where | None = None
    options: list[Option] = field(default_factory=list)
    strict: bool = False  # parse_args() is called on it: an unknown option stops the script
    tolerant: bool = False  # parse_known_args() is called on it
    extended: bool = False

    @property
    def complete(self) -> bool:
        return self.where is not None and not self.extended

    def accepts(self, option: str) -> bool:
        return any(option in known.strings for known in self.options)


@dataclass(frozen=True)
class Setting:
    """A value the script passes (a DataLoader's `num_workers=`, `init_process_group`'s
    `backend=`), as far as reading tells: a literal (or a constant bound to one), the option
    of its parser it reads (`args.workers`), or this machine's CPU count (`os.cpu_count()`)."""

    where: Where
    name: str  # the parameter: num_workers, backend
    text: str  # its value as written
    value: object = NOT_LITERAL
    dest: str | None = None
    counts_cpus: bool = False


@dataclass(frozen=True)
class RankZeroWait:
    """Work rank 0 does alone (`what`, at `work`) before a collective every rank calls."""

    work: Where
    what: str
    collective: Where
    collective_name: str


@dataclass
class ScriptFacts:
    path: str
    loaders: list[Setting] = field(default_factory=list)  # each DataLoader's num_workers
    parsers: list[Parser] = field(default_factory=list)
    sharing_strategy: str | Unknown = "file_descriptor"  # torch's default on Linux
    backends: list[Setting] = field(default_factory=list)  # init_process_group's backend=
    init_calls: list[Where] = field(default_factory=list)
    timeout: float | None | Unknown = None  # seconds; None: torch's default
    init_method: str | None = None  # how it starts (its text up to a placeholder); None: env://
    uses_cuda: bool = False
    cpu_fallback: bool = False  # it asks torch.cuda.is_available(): without a GPU it may run on the CPU
    spawns: bool = False
    waits: list[RankZeroWait] = field(default_factory=list)
    # The linter's findings of the rules above, by rule name: (where, message).
    findings: dict[str, list[tuple[Where, str]]] = field(default_factory=dict)

    def option(self, dest: str) -> Option | None | Unknown:
        """The one option of the script's parsers stored as `dest`; None where none is."""
        found = [option for parser in self.parsers for option in parser.options if option.dest == dest]
        if len({(option.strings, repr(option.default)) for option in found}) > 1:
            return Unknown(f"{self.path} declares --{dest.replace('_', '-')} in several parsers")
        return found[0] if found else None


def _literal(expr: cst.BaseExpression, model: SemanticModel) -> object:
    """The value of a literal (also negative, or a string), or of a module constant bound once
    to one; NOT_LITERAL otherwise."""
    if isinstance(expr, cst.Name) and model.qualified(expr) is None:
        if expr.value in ("None", "True", "False"):
            return {"None": None, "True": True, "False": False}[expr.value]
        bound = model.constant(expr.value)
        return _literal(bound, model) if bound is not None and not isinstance(bound, cst.Name) else NOT_LITERAL
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(expr))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_LITERAL


class _Reader:
    """The walk's visitor (the engine's `traverse` runs it like a rule, after the model moved)."""

    def __init__(self, model: SemanticModel, path: str) -> None:
        self.model = model
        self.regions = model.get(RankRegions)
        self.facts = ScriptFacts(path)
        self._parsers: dict[tuple, Parser] = {}
        self._built: dict[tuple, cst.Call] = {}  # where each parser of this file is built
        self._aliases: dict[tuple, tuple] = {}  # an argument group -> its parser
        # What the walk found to pass to a setting: (where it is kept, parameter, call, value or None).
        self._settings: list[tuple[list, str, cst.CSTNode, cst.BaseExpression | None]] = []
        self._waits: list[tuple[cst.CSTNode, str, cst.CSTNode, str]] = []
        self._work: dict[str | None, tuple[cst.CSTNode, str]] = {}  # per frame: rank 0's pending work
        # add_argument, parse_args and parse_known_args calls, with the parser each is made on.
        self._parser_calls: list[tuple[cst.CSTNode, tuple | None]] = []
        self._init_calls: list[cst.Call] = []

    # -- the walk ---------------------------------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        if not isinstance(node.value, cst.Call) or len(node.targets) != 1:
            return
        name = dotted_name(node.targets[0].target)
        call = node.value
        if name is None:
            return
        key = (self.model.frame.key, name)
        if self.model.qualified(call.func) in ARGUMENT_PARSER:
            parser = self._parsers.setdefault(key, Parser())
            self._built[key] = call
            parser.extended |= keyword_argument(call, "parents") is not None
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value in _GROUPS:
            owner = self._parser_key(call.func.value)
            if owner is not None:
                self._aliases[key] = owner

    def visit_For(self, node: cst.For) -> None:
        iterated = node.iter
        while isinstance(iterated, cst.Call) and dotted_name(iterated.func) in _WRAPPING_CALLS and iterated.args:
            iterated = iterated.args[0].value
        name = last_name(iterated) if isinstance(iterated, (cst.Name, cst.Attribute)) else None
        if name and ("loader" in name.lower() or "dataset" in name.lower()):
            self._rank_zero_work(node, f"a loop over {dotted_name(iterated) or name}")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if isinstance(value, str) and (value == "nccl" or re.match(r"cuda(:\d+)?$", value)):
            self.facts.uses_cuda = True

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        if qualified in TORCH_CUDA or method == "cuda":
            self.facts.uses_cuda = True
        self.facts.cpu_fallback |= qualified in CUDA_IS_AVAILABLE
        if qualified in DATALOADER:
            argument = argument_for(node, DATALOADER, "num_workers")
            self._settings.append((self.facts.loaders, "num_workers", node, argument.value if argument is not None else None))
        elif qualified in SET_SHARING_STRATEGY:
            argument = argument_for(node, SET_SHARING_STRATEGY, "new_strategy")
            value = self.model.string_value(argument.value) if argument is not None else None
            self.facts.sharing_strategy = value if value is not None else Unknown(
                f"{self.facts.path} sets a sharing strategy that is not a literal")
        elif qualified in INIT_PROCESS_GROUP:
            self._init_process_group(node)
        elif qualified in SPAWN or qualified in START_PROCESSES:
            self.facts.spawns = True
        elif qualified in COLLECTIVES and not self.regions.only_rank_zero and not self.regions.never_rank_zero:
            pending = self._work.pop(self.model.frame.key, None)
            if pending is not None:
                self._waits.append((pending[0], pending[1], node, COLLECTIVES[qualified]))
        elif method in ("add_argument", "parse_args", "parse_known_args"):
            self._parser_call(node, method)
        self._handed_parser(node, qualified)
        self._evidence(node)

    # -- what each call says ------------------------------------------------------------------

    def _setting(self, where: Where, name: str, expr: cst.BaseExpression | None) -> Setting:
        if expr is None:  # not given: DataLoader's num_workers is then 0
            return Setting(where, name, "0", 0)
        # `args.workers`: the parsed option of that name (as the linter's local-rank rule reads
        # `args.local_rank`); `cfg.data.workers` is a config's, not a parser's.
        dest = expr.attr.value if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) else None
        counts = isinstance(expr, cst.Call) and not expr.args and self.model.qualified(expr.func) in CPU_COUNT
        return Setting(where, name, cst.Module([]).code_for_node(expr), _literal(expr, self.model), dest, counts)

    def _init_process_group(self, node: cst.Call) -> None:
        self._init_calls.append(node)
        backend = argument_for(node, INIT_PROCESS_GROUP, "backend")
        if backend is not None:
            self._settings.append((self.facts.backends, "backend", node, backend.value))
        method = argument_for(node, INIT_PROCESS_GROUP, "init_method")
        if method is not None:
            self.facts.init_method = self.model.string_prefix(method.value) or cst.Module([]).code_for_node(method.value)
        timeout = argument_for(node, INIT_PROCESS_GROUP, "timeout")
        if timeout is not None:
            self.facts.timeout = self._seconds(timeout.value)

    def _seconds(self, expr: cst.BaseExpression) -> float | Unknown:
        """The seconds of `timedelta(minutes=30)` (also through a constant); Unknown otherwise."""
        if isinstance(expr, cst.Name) and self.model.qualified(expr) is None:
            bound = self.model.constant(expr.value)
            if bound is not None and not isinstance(bound, cst.Name):
                return self._seconds(bound)
        text = cst.Module([]).code_for_node(expr)
        unknown = Unknown(f"{self.facts.path} passes timeout={text}, which is known only when it runs")
        if not isinstance(expr, cst.Call) or self.model.qualified(expr.func) not in TIMEDELTA:
            return unknown
        scale = {"days": 86400, "seconds": 1, "microseconds": 1e-6, "milliseconds": 1e-3, "minutes": 60,
                 "hours": 3600, "weeks": 604800}
        total = 0.0
        for name in TIMEDELTA.params:
            argument = argument_for(expr, TIMEDELTA, name)
            value = _literal(argument.value, self.model) if argument is not None else 0
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                return unknown
            total += value * scale[name]
        return total

    def _parser_key(self, receiver: cst.BaseExpression) -> tuple | None:
        name = dotted_name(receiver)
        if name is None:
            return None
        key = (self.model.frame.key, name)
        key = self._aliases.get(key, key)
        if key in self._parsers:
            return key
        module_level = (None, name)
        return self._aliases.get(module_level, module_level) if module_level in self._parsers else None

    def _parser_call(self, node: cst.Call, method: str) -> None:
        receiver = node.func.value  # type: ignore[attr-defined]
        self._parser_calls.append((node, self._parser_key(receiver) if isinstance(receiver, (cst.Name, cst.Attribute)) else None))

    def _handed_parser(self, node: cst.Call, qualified: str | None) -> None:
        """A parser handed to a function of another module (`deepspeed.add_config_arguments(parser)`)
        may get options there."""
        if qualified is None:
            return  # a same-module helper: its add_argument calls are read here
        for argument in node.args:
            key = self._parser_key(argument.value) if isinstance(argument.value, (cst.Name, cst.Attribute)) else None
            if key is not None:
                self._parsers[key].extended = True

    def _evidence(self, node: cst.Call) -> None:
        """Long work in a call: a download, or a function named for downloading or evaluating."""
        download = keyword_argument(node, "download")
        name = last_name(node.func) or ""
        words = name.lower().split("_") if name != "eval" else []  # `model.eval()` only switches a mode
        if download is not None and _literal(download.value, self.model) is True:
            self._rank_zero_work(node, "a download (download=True)")
        elif "download" in name.lower() or any(word.startswith(EVALUATION_WORDS) for word in words if word):
            self._rank_zero_work(node, f"{name}()")

    def _rank_zero_work(self, node: cst.CSTNode, what: str) -> None:
        if self.regions.reached_by_rank_zero_alone:
            self._work.setdefault(self.model.frame.key, (node, what))

    # -- after the walk -----------------------------------------------------------------------

    def finish(self, module: cst.Module) -> ScriptFacts:
        spans, _ = positions(module, self._asked())
        where = {key: Where(self.facts.path, line, col + 1) for key, ((line, col), _) in spans.items()}
        facts = self.facts
        for key, call in self._built.items():
            self._parsers[key].where = where[id(call)]
        only = next(iter(self._parsers)) if len(self._parsers) == 1 else None
        loose = Parser()  # options of parsers that are not built in this file
        for node, key in self._parser_calls:
            parser = self._parsers[key] if key is not None else (self._parsers[only] if only else loose)
            self._read_parser_call(node, parser)
        facts.parsers = list(self._parsers.values()) + ([loose] if loose.options or loose.strict or loose.tolerant else [])
        for kept, name, node, value in self._settings:
            kept.append(self._setting(where[id(node)], name, value))
        facts.waits = [RankZeroWait(where[id(work)], what, where[id(call)], name) for work, what, call, name in self._waits]
        facts.init_calls = [where[id(call)] for call in self._init_calls]
        return facts

    def _asked(self) -> list[cst.CSTNode]:
        nodes = [node for _, _, node, _ in self._settings] + list(self._init_calls) + list(self._built.values())
        return nodes + [node for waits in self._waits for node in (waits[0], waits[2])]

    def _read_parser_call(self, node: cst.Call, parser: Parser) -> None:
        method = node.func.attr.value  # type: ignore[attr-defined]
        if method == "parse_args":
            parser.strict = True
        elif method == "parse_known_args":
            parser.tolerant = True
        else:
            strings = tuple(
                value for value in (self.model.string_value(arg.value) for arg in positional_arguments(node)) if value
            )
            if strings:
                parser.options.append(Option(strings, _dest(node, strings, self.model), self._default(node)))

    def _default(self, node: cst.Call) -> object:
        default = keyword_argument(node, "default")
        return _literal(default.value, self.model) if default is not None else None


def _dest(node: cst.Call, strings: tuple[str, ...], model: SemanticModel) -> str:
    """Where argparse stores an option: `dest=`, else the first long option's name with `-`
    written `_`, else the first short one's, else the positional's name."""
    dest = keyword_argument(node, "dest")
    named = model.string_value(dest.value) if dest is not None else None
    if named:
        return named
    chosen = next((s for s in strings if s.startswith("--")), None) or strings[0]
    return chosen.lstrip("-").replace("-", "_")


def read_script(path: str, text: str) -> ScriptFacts | Unknown:
    """What `text`, the script at `path`, says; Unknown where it does not parse."""
    try:
        module = parse(text)
    except SourceError as error:
        return Unknown(f"{path}: {error}")
    model = SemanticModel(module)
    model.add_analysis(RankRegions(model))
    reader = _Reader(model, path)
    traverse(module, model, [reader])
    facts = reader.finish(module)
    facts.findings = _rule_findings(path, text)
    return facts


_RANKS_RUN = "import torch.distributed  # the launch the doctor checks starts the ranks"


def _rule_findings(path: str, text: str, usage: str = "") -> dict[str, list[tuple[Where, str]]]:
    from ddplint.api import lint_source
    from ddplint.rules import rule_by_code

    findings: dict[str, list[tuple[Where, str]]] = {}
    for name in (LOCAL_RANK_ARGUMENT, RANK_FROM_LOCAL_RANK):
        rule = rule_by_code(name)
        if rule is None:
            continue
        # The doctor is checking a launch that starts this script's ranks; the rules want that
        # shown in the text (a script that only reads an option runs as one process), so it is
        # said there, after the last line, where no finding's line moves.
        source = text.rstrip("\n") + (f"\n# usage: {usage}" if usage else "") + f"\n{_RANKS_RUN}\n"
        findings[name] = [
            (Where(path, found.line, found.col), found.message) for found in lint_source(source, path, select=[rule.code])
        ]
    return findings


def findings_under(path: str, text: str, launcher_usage: str) -> list[tuple[Where, str]]:
    """local-rank-argument's findings with the launch's launcher named in the script, as a
    usage line in its docstring would (the rule decides from the launcher a file names)."""
    return _rule_findings(path, text, launcher_usage).get(LOCAL_RANK_ARGUMENT, [])
