"""decode -> prefilter -> parse once -> all rules in one traversal -> diagnostics.

The expensive steps are paid only where they can matter: a file that contains none of the
active rules' needles is never parsed by libcst, nor is one where CPython's ast shows that no
rule's construct is there (the rules' screens); only the rules that pass both are instantiated,
and positions (a second walk of the tree) are computed only for files with findings.
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import contextvars
import functools
import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from ddplint import noqa
from ddplint.diagnostics import Diagnostic, Edit, Fix
from ddplint.semantic import SemanticModel
from ddplint.rule import Report, Rule
from ddplint.prefilter.screens import Facts, facts_of
from ddplint.walk import VisitorFailed, positions, walk


class SourceError(Exception):
    """A file that cannot be linted; the message is the one line the user sees."""


class RuleCrash(Exception):
    """A rule raised while checking a file: a bug in ddplint, not in the file. The message
    names the rule, so the user can `--ignore` it and report it."""

    def __init__(self, code: str, error: BaseException) -> None:
        super().__init__(f"internal error in {code}: {type(error).__name__}: {error}")
        self.code = code


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str
    bom: bool


def decode(data: bytes) -> DecodedSource:
    """Bytes to text the way Python itself reads a source file (PEP 263 cookie, BOM)."""
    if b"\x00" in data:
        raise SourceError("cannot read: binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"cannot decode: {error.msg if hasattr(error, 'msg') else error}") from None
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8) :]
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise SourceError(
            f"cannot decode: invalid {error.encoding} byte at offset {error.start}"
        ) from None
    return DecodedSource(text, encoding, bom)


def encode(text: str, like: DecodedSource) -> bytes:
    data = text.encode(like.encoding)
    return codecs.BOM_UTF8 + data if like.bom else data


# libcst needs about 800 bytes of memory and, on a slow machine, tens of seconds per megabyte
# of source; larger files (generated tables, mostly) are reported as not checked instead of
# taking gigabytes. The largest file in torch itself is 1.4 MB.
MAX_PARSE_CHARS = 2_000_000


def parse(source: str) -> cst.Module:
    if len(source) > MAX_PARSE_CHARS:
        raise SourceError(
            f"not checked: too large to parse ({len(source) / 1e6:.1f} million characters; "
            f"the limit is {MAX_PARSE_CHARS / 1e6:g} million)"
        )
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise SourceError(f"cannot parse: {_syntax_error_text(source, error)}") from None
    except (RecursionError, MemoryError) as error:
        raise SourceError(f"cannot parse: {type(error).__name__}") from None


def _syntax_error_text(source: str, error: cst.ParserSyntaxError) -> str:
    """CPython's own message where it agrees the code is invalid: it names the right line."""
    try:
        ast.parse(source)
    except SyntaxError as python_error:
        return f"{python_error.msg} (line {python_error.lineno}, column {python_error.offset})"
    except (ValueError, RecursionError, MemoryError):
        pass
    first = str(error.message).splitlines()[0] if error.message else "invalid syntax"
    return f"{first} (line {error.raw_line}, column {error.raw_column + 1})"


@functools.cache
def _visitor_methods(rule_class: type) -> tuple[tuple[str, type, str], ...]:
    """(visit|leave, node class, method name) for a rule class; libcst's own get_visitors()
    inspects every member of the instance, which cost more than some rules' work."""
    found = []
    for method_name in dir(rule_class):
        kind, _, node_name = method_name.partition("_")
        method = getattr(rule_class, method_name)
        # libcst's base visitor defines every visit/leave method as a no-op; skip those.
        if kind not in ("visit", "leave") or not callable(method) or getattr(method, "_is_no_op", False):
            continue
        node_class = getattr(cst, node_name, None)
        if not isinstance(node_class, type):
            raise TypeError(f"{rule_class.__name__}.{method_name}: not a libcst node visitor")
        found.append((kind, node_class, method_name))
    if getattr(rule_class, "trigger", None) is not None:
        found.append(("visit", cst.Call, "on_call"))
    return tuple(found)


def _dispatch_tables(model: SemanticModel, rules: Sequence[Rule]):
    """Per node class, the methods to call on entering and leaving it. The model moves
    before any analysis or rule visits a node and after all have left it, and analyses see
    a node before the rules that read them, so a rule's `leave_FunctionDef` still sees the
    function's own scope and frame."""
    visits: dict[type, list] = {cls: [model.enter] for cls in SemanticModel.TRACKED_NODES}
    leaves: dict[type, list] = {}
    for visitor in (*model.analyses, *rules):
        for kind, node_class, method_name in _visitor_methods(type(visitor)):
            table = visits if kind == "visit" else leaves
            table.setdefault(node_class, []).append(getattr(visitor, method_name))
    for table in leaves.values():
        table.reverse()  # rules leave first, then the analyses they read
    for cls in SemanticModel.TRACKED_NODES:
        leaves.setdefault(cls, []).append(model.leave)
    return visits, leaves


# The project (ddplint.project.ProjectView) of the file being linted, for callers that do not
# pass one (the fixer's passes): set by `using_project` around them. None: one file alone.
_PROJECT: contextvars.ContextVar = contextvars.ContextVar("ddplint_project", default=None)


@contextlib.contextmanager
def using_project(project):
    token = _PROJECT.set(project)
    try:
        yield
    finally:
        _PROJECT.reset(token)


def prepare(
    module: cst.Module, rules: Sequence[type[Rule]], project=None
) -> tuple[SemanticModel, list[Rule]]:
    """The file's semantic model with the analyses the rules need, and the rule instances."""
    model = SemanticModel(module, project=project if project is not None else _PROJECT.get())
    for analysis in dict.fromkeys(analysis for rule in rules for analysis in rule.analyses):
        model.add_analysis(analysis(model))
    return model, [rule(model) for rule in rules]


def traverse(module: cst.Module, model: SemanticModel, rules: Sequence[Rule]) -> None:
    """Run rule instances over `module` in one walk, as `analyse` does after parsing.
    A crashing rule raises RuleCrash naming it."""
    try:
        walk(module, *_dispatch_tables(model, rules))
    except VisitorFailed as failure:
        code = getattr(failure.method.__self__, "code", None) or type(failure.method.__self__).__name__
        raise RuleCrash(code, failure.error) from failure.error


def rules_for_text(source: str, rules: Sequence[type[Rule]], hints=None) -> list[type[Rule]]:
    """The rules whose needles occur in `source`: the first, text-only prefilter. The
    project's `hints` (ddplint.project.Hints) say what the module's text does not show."""
    if hints is None:
        return [rule for rule in rules if rule.matches_text(source)]
    return [rule for rule in rules if hints.passes_needles(rule.code, rule.needles, source)]


def rules_to_run(
    source: str, rules: Sequence[type[Rule]], facts: Facts | None = None, hints=None
) -> list[type[Rule]]:
    """The rules that can fire on `source`: their needles occur and, where every such rule
    has a screen, the screen holds on the file's `ast` (see ddplint.prefilter.screens; `facts` when the
    caller already has them). When some rule without a screen needs libcst anyway, screening
    the others would not save the parse. The project's `hints` add what other modules bind to
    the screens' facts."""
    active = rules_for_text(source, rules, hints)
    if not active or any(rule.screen is None for rule in active) or len(source) > MAX_PARSE_CHARS:
        return active  # (too large: `parse` reports it unchecked, without building any tree)
    if facts is None:
        facts = facts_of(source)
    if facts is None:
        return active
    if hints is None:
        return [rule for rule in active if rule.screen.holds(facts)]  # type: ignore[union-attr]
    facts = hints.patch(facts)
    return [rule for rule in active if rule.code in hints.unscreened or rule.screen.holds(facts)]  # type: ignore[union-attr]


@dataclass
class Analysis:
    """The result of linting one text: its tree, and findings paired with their reports."""

    module: cst.Module | None
    diagnostics: list[Diagnostic]
    reports: list[Report]


def analyse(
    source: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    honour_noqa: bool = True,
    facts: Facts | None = None,
    project=None,
) -> Analysis:
    """Lint one source text. Raises SourceError if it cannot be parsed. `project` is the
    file's view of its project index (ddplint.project.ProjectView; default: the one
    `using_project` set, or none)."""
    if project is None:
        project = _PROJECT.get()
    active = rules_to_run(source, rules, facts, project.hints() if project is not None else None)
    if not active:
        return Analysis(None, [], [])
    module = parse(source)
    model, instances = prepare(module, active, project)
    try:
        traverse(module, model, instances)
    except RecursionError:
        raise SourceError("cannot check: code is nested too deeply") from None
    reports = [report for rule in instances for report in rule.reports]
    if not reports:
        return Analysis(module, [], [])

    wanted = [report.node for report in reports]
    wanted += [node for report in reports for node in (report.replacements or ())]
    spans = positions(module, wanted)
    suppressed = noqa.Suppressions(source) if honour_noqa and "noqa" in source else None
    diagnostics: list[Diagnostic] = []
    kept: list[Report] = []
    for report in reports:
        (line, col), (end_line, end_col) = spans[id(report.node)]
        col += 1
        if suppressed is not None and suppressed.covers(line, report.rule.code):
            continue
        fix = None
        if report.replacements and report.applicability is not None:
            edits = tuple(
                _edit(module, spans[id(original)], replacement)
                for original, replacement in report.replacements.items()
            )
            fix = Fix(report.applicability, edits, report.imports)
        diagnostics.append(
            Diagnostic(
                path=path,
                line=line,
                col=col,
                end_line=end_line,
                end_col=end_col + 1,
                code=report.rule.code,
                name=report.rule.name,
                message=report.message,
                fix=fix,
            )
        )
        kept.append(report)
    order = sorted(range(len(diagnostics)), key=lambda i: diagnostics[i].sort_key)
    return Analysis(module, [diagnostics[i] for i in order], [kept[i] for i in order])


def _edit(module: cst.Module, span, replacement) -> Edit:
    if isinstance(replacement, cst.RemovalSentinel):
        content = ""
    elif isinstance(replacement, cst.FlattenSentinel):
        content = "".join(module.code_for_node(node) for node in replacement.nodes)
    else:
        content = module.code_for_node(replacement)
    (line, col), (end_line, end_col) = span
    return Edit(line, col + 1, end_line, end_col + 1, content)
