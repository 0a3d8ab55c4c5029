"""decode -> prefilter -> parse once -> all rules in one traversal -> diagnostics.

The expensive steps are paid only where they can matter: a file that contains none of the
active rules' needles is never parsed by libcst, nor is one where CPython's ast shows that no
rule's construct is there (the rules' screens); only the rules that pass both are instantiated,
and positions (a second walk of the tree) are computed only for files with findings.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import contextlib
import contextvars
import functools
import io
import os
import re
import tokenize
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import libcst as cst

from ddplint.analyses.distribution import DistributedEvidence
from ddplint.engine import noqa
from ddplint.core.diagnostics import Diagnostic, Edit, Fix, Step
from ddplint.core.lines import split_lines
from ddplint.core.torch_api import TENSOR_CROSSINGS
from ddplint.semantic.model import SemanticModel, forget_names, with_requirements
from ddplint.rules.rule import Report, Rule
from ddplint.prefilter.screens import Facts, facts_of
from ddplint.prefilter.needles import TextScan
from ddplint.semantic.walk import Layout, VisitorFailed, descendants, positions, render, walk


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


# libcst needs about 850 bytes of memory and, on a slow machine, 30 seconds per megabyte of
# source (measured: 1.7 GB peak and 63 s for a 2 MB generated module), so a larger file
# (generated tables, mostly) is never parsed whole: see `large_file_parts`. The largest file in
# torch itself is 1.4 MB.
MAX_PARSE_CHARS = 2_000_000


def parse(source: str, *, explain: bool = True) -> cst.Module:
    """libcst's tree of `source`, or SourceError; `explain=False` spares the second parse that
    finds CPython's own message (for callers that do not show it)."""
    if len(source) > MAX_PARSE_CHARS:
        raise SourceError(
            f"not checked: too large to parse ({len(source) / 1e6:.1f} million characters; "
            f"the limit is {MAX_PARSE_CHARS / 1e6:g} million)"
        )
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        reason = _syntax_error_text(source, error) if explain else "invalid syntax"
        raise SourceError(f"cannot parse: {reason}") from None
    except (RecursionError, MemoryError) as error:
        raise SourceError(f"cannot parse: {type(error).__name__}") from None


def check_syntax(source: str) -> None:
    """SourceError where `source` is not Python, as `parse` would say, for a file that no
    rule's prefilter admits (and so is not parsed): CPython's `ast` costs about a twelfth of
    libcst's parse, and where it fails libcst decides, as it does for a file rules admit."""
    if len(source) > MAX_PARSE_CHARS:  # too large for libcst: CPython's word is final
        _check_syntax_in_chunks(source)
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            ast.parse(source)
    except SyntaxError:
        parse(source)
    except (ValueError, RecursionError, MemoryError):
        parse(source)


SYNTAX_CHUNK_CHARS = 500_000


def _check_syntax_in_chunks(source: str) -> None:
    """CPython's syntax check of a file over the parse limit, a run of whole top-level
    statements at a time: the ast of a 10 MB module takes 2.5 GB, of each run a few dozen MB."""
    starts, _ = top_level_starts(source)
    lines = split_lines(source, keepends=True)
    bounds = [*(starts if starts and starts[0] == 0 else [0, *starts]), len(lines)]
    first, size = 0, 0
    for index in range(1, len(bounds)):
        size += sum(len(line) for line in lines[bounds[index - 1]:bounds[index]])
        if size < SYNTAX_CHUNK_CHARS and index < len(bounds) - 1:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escape sequences and the like
                ast.parse("".join(lines[bounds[first]:bounds[index]]))
        except SyntaxError as error:
            line = (error.lineno or 1) + bounds[first]
            message = re.sub(r"\bline (\d+)", lambda match: f"line {int(match.group(1)) + bounds[first]}", error.msg)
            raise SourceError(f"cannot parse: {message} (line {line}, column {error.offset})") from None
        except (ValueError, RecursionError, MemoryError) as error:
            raise SourceError(f"cannot parse: {type(error).__name__}") from None
        first, size = index, 0


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
    if issubclass(rule_class, Rule) and rule_class.takes_calls():
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


# The project (ddplint.model.project.ProjectView) of the file being linted, for callers that do not
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
    module: cst.Module, rules: Sequence[type[Rule]], project=None, *, source: str | None = None, tree=None
) -> tuple[SemanticModel, list[Rule]]:
    """The file's semantic model with the analyses the rules need, and the rule instances.
    `source` and `tree` (CPython's ast of it), where the caller has them, spare rules a codegen."""
    project = project if project is not None else _PROJECT.get()
    forget_names()
    model = SemanticModel(module, project=project, source=source, tree=tree)
    for analysis in with_requirements([DistributedEvidence, *(analysis for rule in rules for analysis in rule.analyses)]):
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


def rules_for_text(source: str, rules: Sequence[type[Rule]], hints=None, known=None) -> list[type[Rule]]:
    """The rules whose needles occur in `source`: the first, text-only prefilter. The
    project's `hints` (ddplint.model.project.Hints) say what the module's text does not show;
    `known` are needles the project index already searched this text for."""
    if hints is None:
        scan = TextScan(source, known)
        return [rule for rule in rules if scan.matches(rule.needles)]
    scan = hints.scan(source, known)
    return [
        rule for rule in rules if hints.feeds(rule.code) or hints.passes_needles(rule.opened_by, rule.needles, scan)
    ]


def rules_to_run(
    source: str, rules: Sequence[type[Rule]], facts: Facts | None = None, hints=None
) -> list[type[Rule]]:
    """The rules that can fire on `source`: their needles occur and, where every such rule
    has a screen, the screen holds on the file's `ast` (see ddplint.prefilter.screens; `facts` when the
    caller already has them). When some rule without a screen needs libcst anyway, screening
    the others would not save the parse. The project's `hints` add what other modules bind to
    the screens' facts."""
    return _screened(source, rules, facts, hints)[0]


def _screened(source, rules, facts, hints, view=None) -> tuple[list[type[Rule]], Facts | None]:
    """`rules_to_run`, and the screens' facts where they were gathered: `positions` places
    findings by the same `ast` instead of generating the whole module again. `view`, the
    file's project (ddplint.model.project.ProjectView), answers what the screens ask of other
    modules (the attributes of project base classes)."""
    active = rules_for_text(source, rules, hints)
    if not active or any(rule.screen is None for rule in active) or len(source) > MAX_PARSE_CHARS:
        return active, facts  # (too large: `parse` reports it unchecked, without building any tree)
    if facts is None:
        facts = facts_of(source)
    if facts is None:
        return active, None
    if hints is None:
        return [rule for rule in active if rule.screen.holds(facts)], facts  # type: ignore[union-attr]
    facts = hints.patch(facts)
    if view is not None:
        facts.base_attributes, facts.may_test_rank, facts.may_save_call = (
            view.base_attributes, view.may_test_rank, view.may_save_call
        )
    return [
        rule for rule in active
        if hints.unscreened(rule.unscreened_by) or hints.feeds(rule.code) or rule.screen.holds(facts)  # type: ignore[union-attr]
        or hints.unscreened(rule.screened_by) and rule.project_screen.holds(facts)  # type: ignore[union-attr]
    ], facts


@dataclass
class FileAnalysis:
    """The result of linting one text: its tree, and findings paired with their reports."""

    module: cst.Module | None
    diagnostics: list[Diagnostic]
    reports: list[Report]
    # Warnings about how the file was checked (a large file, in part); they do not fail a run.
    notes: list[str] = field(default_factory=list)


def analyse(
    source: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    honour_noqa: bool = True,
    facts: Facts | None = None,
    parser: Callable[[str], cst.Module] | None = None,
    project=None,
) -> FileAnalysis:
    """Lint one source text. Raises SourceError if it cannot be parsed. `parser` replaces
    `parse` (the language server passes one that reuses the unchanged statements' trees);
    `project` is the file's view of its project index (ddplint.model.project.ProjectView; default:
    the one `using_project` set, or none)."""
    if len(source) > MAX_PARSE_CHARS:
        return analyse_large(source, path, rules, honour_noqa=honour_noqa)
    if project is None:
        project = _PROJECT.get()
    parsed_here = facts is None  # then `facts.tree` is `ast.parse(source)`, which the program may use
    active, facts = _screened(source, rules, facts, project.hints() if project is not None else None, project)
    if not active:
        return FileAnalysis(None, [], [])
    if parsed_here and facts is not None and project is not None:
        project.program.keep_tree(project.module, source, facts.tree)
    if project is None:  # the file alone still has functions that hand each other values
        from ddplint.model.project import alone

        project = alone(source, path)
    if project.single_process:
        active = [rule for rule in active if not rule.needs_ranks]
    if any(rule.needs_peers for rule in active) and project.one_rank:
        active = [rule for rule in active if not rule.needs_peers]
    if any(rule.needs_torch for rule in active) and not project.torch_program:
        active = [rule for rule in active if not rule.needs_torch]
    if not active:
        return FileAnalysis(None, [], [])
    module = (parser or parse)(source)
    model, instances = prepare(module, active, project, source=source, tree=facts.tree if facts is not None else None)
    try:
        traverse(module, model, instances)
    except RecursionError:
        raise SourceError("cannot check: code is nested too deeply") from None
    model.release()
    reports = [report for rule in instances for report in rule.reports]
    if not reports:
        return FileAnalysis(module, [], [])

    replaced = [node for report in reports for node in (report.replacements or ())]
    linked = [link.at for report in reports for link in report.chain if isinstance(link.at, cst.CSTNode)]
    tree = facts.tree if facts is not None else None  # positions of the statements with findings only
    spans, layouts = positions(module, [report.node for report in reports] + replaced + linked, replaced, tree)
    root = project.project.root if project.project.texts == {} else None
    suppressed = noqa.Suppressions(source) if honour_noqa and "noqa" in source else None
    diagnostics: list[Diagnostic] = []
    kept: list[Report] = []
    training = project.project.reach.training
    scopes = _Scopes(source, tree)
    for report in reports:
        (line, col), (end_line, end_col) = spans[id(report.node)]
        col += 1
        if suppressed is not None and suppressed.covers(line, report.rule.code):
            continue
        scope = scopes.around(line)
        if training and project.never_runs(scope):
            continue  # code no entry point of the training project reaches
        if project.replaced(scope, line):
            continue  # a function the module defines again later: calls reach that one
        if training and report.rule.needs_ranks and project.runs_alone(scope):
            continue  # a function that only scripts run as one process call: no ranks to harm
        if project.switched_off(scope, line) is not None:
            continue  # code under `if <parameter>:` of a parameter no call turns on
        if project.runs_reaching(scope, line, col - 1) == []:
            continue  # code under a branch of options that no documented run takes
        fix = None
        if report.replacements and report.applicability is not None:
            emptied = _emptied(module, report)
            edits = tuple(
                _edit(module, original, spans[id(original)], layouts[id(original)], replacement, emptied)
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
                chain=tuple(_step(link, spans, path, root) for link in report.chain),
            )
        )
        kept.append(report)
    order = sorted(range(len(diagnostics)), key=lambda i: diagnostics[i].sort_key)
    return FileAnalysis(module, [diagnostics[i] for i in order], [kept[i] for i in order])


class _Scopes:
    """The definitions around a line of the file, outermost first, as (name, is a class, is
    decorated): what ProjectView.never_runs asks about. Found by going down from the top only
    into the statements whose lines hold the line (a definition is a statement, and its lines
    lie within those of every statement around it), not by a walk of the whole tree: asked
    after every edit with a finding, that walk cost 5-8 % of a language-server edit."""

    _BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")

    def __init__(self, source: str, tree: ast.Module | None) -> None:
        self._source = source
        self._tree = tree
        self._parsed = tree is not None

    def around(self, line: int) -> tuple[tuple[str, bool, bool], ...]:
        if not self._parsed:
            self._parsed = True
            try:
                self._tree = ast.parse(self._source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = None
        found = []
        pending = [self._tree] if self._tree is not None else []
        while pending:
            node = pending.pop()
            for name in self._BLOCKS:
                for child in getattr(node, name, None) or ():
                    if type(child) is ast.match_case:
                        pending.append(child)
                        continue
                    first = getattr(child, "lineno", None)
                    if first is None or not first <= line <= (child.end_lineno or first):
                        continue
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        found.append((first, (child.name, isinstance(child, ast.ClassDef), _registers(child))))
                    pending.append(child)
        return tuple(scope for _, scope in sorted(found))


# Decorators that only change how a method is bound: its callers still name it.
_PLAIN_DECORATORS = frozenset(("staticmethod", "classmethod", "property"))


def _registers(definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """Whether a decorator of `definition` may register it, so that code elsewhere calls it
    without naming it."""
    return any(not (isinstance(d, ast.Name) and d.id in _PLAIN_DECORATORS) for d in definition.decorator_list)


def _step(link, spans, path: str, root: str | None) -> Step:
    """A link of a rule's chain as a step of the finding: a node of this file at its place, a
    Place of the program at its file, written as the finding's own path is (relative to where
    ddplint runs, or absolute); a text linted alone (`root` None) names its own files as given."""
    if isinstance(link.at, cst.CSTNode):
        (line, col), _ = spans[id(link.at)]
        return Step(link.kind, link.message, path, line, col + 1)
    where = link.at.path
    if root is not None:
        where = os.path.join(root, where)
        where = where if os.path.isabs(path) else os.path.relpath(where)
    return Step(link.kind, link.message, where, link.at.line)


def _edit(module: cst.Module, original: cst.CSTNode, span, layout: Layout, replacement, emptied: set[int]) -> Edit:
    """The text edit that puts `replacement` where `original` (at `span`) is, written as a
    rewrite of the tree writes it: a statement is replaced whole (its leading comment lines
    and its newline too), a nested block keeps its indentation on every line, and a block
    left empty gets the `pass` libcst would write (`emptied`: see _emptied)."""
    whole = isinstance(original, cst.BaseStatement)
    (line, col), (end_line, end_col) = layout.whole if whole else span
    if _removes(replacement):
        content = layout.indent + "pass" + module.default_newline if id(original) in emptied else ""
    else:
        nodes = replacement.nodes if isinstance(replacement, cst.FlattenSentinel) else [replacement]
        content = render(nodes, module, layout.indent, whole=whole)
    return Edit(line, col + 1, end_line, end_col + 1, content)


def _emptied(module: cst.Module, report: Report) -> set[int]:
    """The statements (by id) whose removal leaves their indented block empty, one per such
    block: their edit writes the `pass` libcst would. Searched only when the report removes
    a statement (rare: one walk of the tree)."""
    removed = {
        id(original)
        for original, replacement in (report.replacements or {}).items()
        if isinstance(original, cst.BaseStatement) and _removes(replacement)
    }
    return {
        id(node.body[0])
        for node in (descendants(module) if removed else ())
        if isinstance(node, cst.IndentedBlock) and all(id(statement) in removed for statement in node.body)
    }


def _removes(replacement) -> bool:
    return isinstance(replacement, cst.RemovalSentinel) or (
        isinstance(replacement, cst.FlattenSentinel) and not replacement.nodes
    )


# -- files over the parse limit ----------------------------------------------------------------
#
# A file too large to parse whole is checked top-level statement by statement: a scan of its
# text (`top_level_starts`, no tree) finds where each top-level statement begins;
# a statement is kept when, together with the file's imports, it passes some rule's needles
# and screen, as a whole file would; the kept statements and the imports are parsed as one
# module (each set off by a marker comment, so that fixes can be put back where the statements
# came from) and the findings are moved to their lines in the file. What the skipped
# statements define is not seen (a constant a kept statement reads, a base class), so the
# result is reported as a warning that does not fail the run.

_PART_MARKER = "# ddplint: part {}"
_PART_RE = re.compile(r"^# ddplint: part (\d+)\r?\n?$")
_MARKER_LINES = re.compile(r"^# ddplint: part \d+\r?\n", re.M)


@dataclass
class LargeFileParts:
    """A large file's top-level statements (line ranges) and which of them are kept."""

    lines: list[str]  # the file's lines, ends kept
    starts: list[int]  # 0-based first line of each top-level part (the first is 0)
    kept: list[int]  # indices of the kept parts
    total_statements: int
    leading: bool = False  # the first part is the comments and blank lines before any statement

    def part_lines(self, index: int) -> list[str]:
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.lines)
        return self.lines[self.starts[index] : end]

    def reduced(self) -> tuple[str, list[tuple[int, int]]]:
        """The kept parts as one module, each after a marker line, and for each kept part
        (line in the module, line in the file) of its first line, both 1-based."""
        out: list[str] = []
        table = []
        line = 1
        newline = "\r\n" if self.lines and self.lines[0].endswith("\r\n") else "\n"
        for index in self.kept:
            out.append(_PART_MARKER.format(index) + newline)
            line += 1
            table.append((line, self.starts[index] + 1))
            part = self.part_lines(index)
            if part and not part[-1].endswith(("\n", "\r")):
                part = [*part[:-1], part[-1] + newline]
            out.extend(part)
            line += len(part)
        stubs = self.stubs()
        if stubs:
            # Names the kept parts read that skipped statements bind: bound here (last, never
            # written back), so that the rules know the names exist, if not their values.
            out.append(_PART_MARKER.format(len(self.starts)) + newline)
            out.extend(f"{name} = ...{newline}" for name in stubs)
        return "".join(out), table

    def skipped_bindings(self) -> set[str]:
        """Top-level names the skipped statements bind (assignments, defs, classes)."""
        kept = set(self.kept)
        found: set[str] = set()
        for index in range(len(self.starts)):
            if index not in kept:
                found.update(a or b for a, b in _BOUND.findall("".join(self.part_lines(index))))
        return found

    def stubs(self) -> list[str]:
        kept_text = "".join("".join(self.part_lines(index)) for index in self.kept)
        return sorted(self.skipped_bindings() & set(re.findall(r"\b[A-Za-z_]\w*\b", kept_text)))


_BOUND = re.compile(
    r"^(?:(?:async[ \t]+)?def[ \t]+|class[ \t]+)([A-Za-z_]\w*)|^([A-Za-z_]\w*)[ \t]*(?::[^=\r\n]*)?=(?!=)", re.M
)


# What can hide a line start from the top level: strings (a line of a triple-quoted string may
# start at column 0), comments, brackets, and backslash continuations. A scan for just these is
# much faster than `tokenize`, and as exact for valid code: a line at column 0 outside all of
# them is a top-level statement, a clause of one (`else:`), or part of a decorated definition.
_SCAN = re.compile(
    r"""(?P<string>[rRbBuUfF]{0,2}(?:\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'''(?:[^'\\]|\\.|'(?!''))*'''"""
    r"""|"(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*'))"""
    r"|(?P<comment>#[^\r\n]*)|(?P<open>[(\[{])|(?P<close>[)\]}])|(?P<continued>\\\r?\n)|(?P<newline>\r?\n)",
    re.S,
)
_HEAD = re.compile(r"[A-Za-z_]\w*|\S")
_CLAUSES = frozenset({"else", "elif", "except", "finally"})


def top_level_starts(source: str) -> tuple[list[int], list[str]]:
    """0-based first lines of the top-level statements (decorators and `else:`-like clauses
    stay with theirs; comment lines before a statement stay with the one before), and the
    first word of each."""
    starts: list[int] = []
    heads: list[str] = []
    depth = 0
    line = 0
    after_decorator = False

    def line_start(position: int) -> None:
        nonlocal after_decorator
        head_match = _HEAD.match(source, position)
        if head_match is None or head_match.group() == "#":
            return
        head = head_match.group()
        if head in _CLAUSES or (after_decorator and head in ("def", "class", "async", "@")):
            after_decorator = after_decorator and head == "@"
            return
        starts.append(line)
        heads.append(head)
        after_decorator = head == "@"

    line_start(0)
    for match in _SCAN.finditer(source):
        kind = match.lastgroup
        if kind == "newline":
            line += 1
            if depth == 0:
                line_start(match.end())
        elif kind == "string":
            line += match.group().count("\n")
        elif kind == "continued":
            line += 1
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(depth - 1, 0)
    return starts, heads


def _is_import_part(head: str, text: str) -> bool:
    if head in ("import", "from"):
        return True
    # `try: import x / except ImportError: ...`, `if TYPE_CHECKING: import x`: small blocks.
    return head in ("try", "if") and text.count("\n") <= 20 and bool(re.search(r"^\s+(import|from) \S", text, re.M))


def large_file_parts(source: str, rules: Sequence[type[Rule]]) -> LargeFileParts:
    """Which top-level statements of a large file to parse: the imports, a module docstring
    and every statement that some rule's needles and screen admit (with the imports)."""
    starts, heads = top_level_starts(source)
    lines = split_lines(source, keepends=True)
    if not starts or starts[0] != 0:
        starts, heads = [0, *starts], ["", *heads]  # leading comments and blank lines: a part of their own
    parts = LargeFileParts(lines, starts, [], len([h for h in heads if h]), leading=not heads[0])
    texts = ["".join(parts.part_lines(i)) for i in range(len(starts))]
    kept = {i for i, head in enumerate(heads) if not head or _is_import_part(head, texts[i])}
    if len(heads) > 1 and heads[1] and heads[1][0] in "'\"rbufRBUF" and texts[1].lstrip()[:1] in "'\"rbufRBUF":
        kept.add(1)  # a module docstring, if that is what it is; cheap either way
    imports = "".join(texts[i] for i in sorted(kept))
    for index, text in enumerate(texts):
        if index in kept:
            continue
        if any(word in text for word in TENSOR_CROSSINGS):
            kept.add(index)  # the processes the program starts, which rules ask the model about
            continue
        together = imports + text
        candidates = rules_for_text(together, rules)
        if not candidates:
            continue
        if any(rule.screen is None for rule in candidates):
            kept.add(index)
            continue
        facts = facts_of(together)
        if facts is None or any(rule.screen.holds(facts) for rule in candidates):  # type: ignore[union-attr]
            kept.add(index)
    parts.kept = sorted(kept)
    return parts


def _mover(table: list[tuple[int, int]]):
    """Line in the reduced module -> line in the file."""
    firsts = [reduced for reduced, _ in table]

    def move(line: int) -> int:
        at = bisect.bisect_right(firsts, line) - 1
        if at < 0:
            return line
        reduced, original = table[at]
        return original + (line - reduced)

    return move


def move_diagnostics(diagnostics: list[Diagnostic], table: list[tuple[int, int]]) -> list[Diagnostic]:
    move = _mover(table)
    # A statement replaced whole starts at its leading comment lines, which for the first
    # statement of a part include the part's marker line: the file has no such line.
    markers = {reduced - 1 for reduced, _ in table}
    moved = []
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is not None:
            fix = replace(
                fix,
                edits=tuple(
                    replace(
                        edit,
                        line=move(edit.line + 1 if edit.line in markers else edit.line),
                        col=1 if edit.line in markers else edit.col,
                        end_line=move(edit.end_line),
                        content=_MARKER_LINES.sub("", edit.content),
                    )
                    for edit in fix.edits
                ),
            )
        moved.append(replace(diagnostic, line=move(diagnostic.line), end_line=move(diagnostic.end_line), fix=fix))
    return moved


def large_file_note(path: str, source: str, parts: LargeFileParts) -> str:
    checked = len(parts.kept) - (1 if parts.leading else 0)
    return (
        f"{path}: checked in part: {len(source) / 1e6:.1f} million characters is over the "
        f"{MAX_PARSE_CHARS / 1e6:g} million parsed whole; {checked} of {parts.total_statements} "
        "top-level statements (the imports and those a rule could flag) were parsed"
    )


def analyse_large(source: str, path: str, rules: Sequence[type[Rule]], *, honour_noqa: bool = True) -> FileAnalysis:
    """`analyse` for a file over the parse limit: its kept top-level statements only, the
    findings at their lines in the file, and a note that says so."""
    parts = large_file_parts(source, rules)
    reduced, table = reduced_source(source, parts)
    inner = analyse(reduced, path, rules, honour_noqa=honour_noqa)
    note = large_file_note(path, source, parts)
    return FileAnalysis(None, move_diagnostics(inner.diagnostics, table), inner.reports, [note])


def split_parts(text: str) -> tuple[dict[int, str], dict[int, int]] | None:
    """A reduced module's text back into its parts, by marker, and the 1-based line in `text`
    where each part begins; None if a marker went missing or moved."""
    found: dict[int, list[str]] = {}
    firsts: dict[int, int] = {}
    current: list[str] | None = None
    for number, line in enumerate(split_lines(text, keepends=True), start=1):
        match = _PART_RE.match(line)
        if match:
            index = int(match.group(1))
            if index in found:
                return None
            current = found[index] = []
            firsts[index] = number + 1
        elif current is None:
            if line.strip():
                return None  # text before the first marker
        else:
            current.append(line)
    return {index: "".join(lines) for index, lines in found.items()}, firsts


def reduced_source(source: str, parts: LargeFileParts) -> tuple[str, list[tuple[int, int]]]:
    reduced, table = parts.reduced()
    if len(reduced) > MAX_PARSE_CHARS:
        raise SourceError(
            f"not checked: too large to parse ({len(source) / 1e6:.1f} million characters, of which "
            f"{len(reduced) / 1e6:.1f} million may hold findings; the limit is {MAX_PARSE_CHARS / 1e6:g} million)"
        )
    return reduced, table
