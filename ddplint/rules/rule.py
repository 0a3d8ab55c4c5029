"""What a rule is. One module in `ddplint/rules/` per rule, one `Rule` subclass per module.

A rule declares everything about itself as class attributes: its code and name, the message,
its docstring (the explanation `ddplint rule CODE` prints), the fix it offers, its trigger (what
it looks for, from which come the text needles that must occur in a file before it can fire and
the screen its file's `ast` must pass), the facts of other modules under which it runs without
them, and examples that must and must not be flagged.
The tests and the rules reference are generated from those examples.

A rule is a libcst visitor. The engine calls its `visit_<Node>`/`leave_<Node>` methods during
one traversal shared by all rules, with `self.model` (ddplint.semantic.model) positioned at the
current node: names, scope, frame, loops. Analyses it shares with other rules it names in
`analyses` and reads with `self.model.get(...)`. A rule never reads files or prints: it calls
`self.report(...)`.
"""

from __future__ import annotations

import enum
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.model.records import Place
from ddplint.analyses.distribution import DistributedEvidence
from ddplint.semantic.model import Analysis, SemanticModel
from ddplint.prefilter.needles import Needle, needles_match
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.screens import Screen
from ddplint.prefilter.triggers import CallTrigger, Trigger

Replacement = cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel


class Framework(str, enum.Enum):
    """A way of training on several processes whose code a rule reads: what `ddplint rules`, the
    README's table and docs/rules.md say each rule understands."""

    DDP = "torch DDP"  # torch.distributed, DistributedDataParallel, torchrun or mp.spawn, by hand
    FSDP = "FSDP"
    ACCELERATE = "Accelerate"
    LIGHTNING = "Lightning"
    FABRIC = "Fabric"
    DEEPSPEED = "DeepSpeed"
    HUGGING_FACE = "Hugging Face"
    TIMM = "timm"


@dataclass(frozen=True)
class Flagged:
    """Code the rule must flag, each finding marked by a caret line under the line it is
    reported on: a line of only `^` and spaces, one `^` under the first character of each
    finding on the line above. The caret lines are taken out of `code` (so the docs, the fix
    and every other test see the code alone) and kept in `at` as (line, column) pairs, 1-based
    as ddplint prints them. `fixed` is the golden output of fixing the code (with
    `--unsafe-fixes` if the rule's fix is unsafe), or None when no fix is offered. `messages`
    is the golden message of each finding, in the order of their places (one string: every
    finding's); None when every finding says the rule's own `message`. Where the fix changes
    a few lines of many, `fix_edits` gives `fixed` instead, as the (old text, new text) edits
    the fix makes to `code`, each old text found exactly once in it."""

    code: str
    fixed: str | None = None
    messages: tuple[str, ...] | str | None = None
    fix_edits: tuple[tuple[str, str], ...] = ()
    at: tuple[tuple[int, int], ...] = field(init=False)

    def __post_init__(self) -> None:
        code, at = _take_carets(_dedent(self.code))
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "at", at)
        if self.fix_edits:
            if self.fixed is not None:
                raise ValueError("give the fixed code or the edits that make it, not both")
            object.__setattr__(self, "fixed", _edited(code, self.fix_edits))
        elif self.fixed is not None:
            object.__setattr__(self, "fixed", _dedent(self.fixed))
        if isinstance(self.messages, str):
            object.__setattr__(self, "messages", (self.messages,) * len(self.at))
        if self.messages is not None and len(self.messages) != len(self.at):
            raise ValueError(f"{len(self.messages)} messages for {len(self.at)} marked findings")

    @property
    def count(self) -> int:
        return len(self.at)


@dataclass(frozen=True)
class Clean:
    """Code the rule must not flag (a correct idiom or a look-alike)."""

    code: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _dedent(self.code))


def harm_of(message: str) -> str:
    """What a message says is wrong and why it harms: the message without the advice after its
    last "; " outside parentheses (ddplint's messages say what is wrong, its effect, then what
    to do), keeping a note in parentheses that ends the message (where the other half is)."""
    depth, cut, note = 0, None, ""
    for index, char in enumerate(message):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and message.startswith("; ", index):
            cut = index
    if cut is None:
        return message
    tail = message[cut:]
    if tail.endswith(")"):
        start = _last_note(tail)
        note = tail[start:] if tail.startswith(" (", start) else ""  # not the call of `manual_seed(0)`
    return message[:cut] + note


def _last_note(text: str) -> int:
    """Where the parenthesised note that ends `text` starts (its " (")."""
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[index], 0)
        if depth == 0:
            return index - 1
    return len(text)


def _dedent(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def _edited(code: str, edits: tuple[tuple[str, str], ...]) -> str:
    for old, new in edits:
        if code.count(old) != 1:
            raise ValueError(f"the edit of {old!r} needs it once in the code, not {code.count(old)} times")
        code = code.replace(old, new)
    return code


def _take_carets(code: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The code without its caret lines, and the (line, column) each `^` marks."""
    kept: list[str] = []
    at: list[tuple[int, int]] = []
    for text in code.split("\n"):
        if "^" in text and not text.strip(" ^"):
            if not kept:
                raise ValueError("a caret line marks the line above it; this one is first")
            at += [(len(kept), column + 1) for column, char in enumerate(text) if char == "^"]
        else:
            kept.append(text)
    return "\n".join(kept), tuple(at)


@dataclass(frozen=True)
class Link:
    """A step of the chain that makes a finding a bug (ddplint.core.diagnostics.Step), as a rule
    states it: what it establishes, and where: a Place of the program model (another module, or
    this one), or a node of this file's tree."""

    kind: StepKind
    message: str
    at: Place | cst.CSTNode


def wrap_links(name: str | None, site) -> tuple[Link, ...]:
    """The steps that say where the DDP model `name` was wrapped, from
    ddplint.analyses.ranks.WrappedModels.wrap_site: the `DistributedDataParallel(...)` call of
    this file, or the program's Wrapped with the call that hands it on; none when unknown."""
    if isinstance(site, cst.Call):
        return (Link(StepKind.MADE, f"`{name}` is wrapped in DDP here", site),)
    if site is None:
        return ()
    made = Link(StepKind.MADE, f"the DDP model `{name}` holds is wrapped here", site.wrapped_at)
    if site.passed_at is None:
        return (made,)
    return made, Link(StepKind.REACHES, f"it is handed on here, to become `{name}`", site.passed_at)


@dataclass
class Report:
    """A finding as a rule makes it: the node, the fix as node replacements, and its chain."""

    rule: type[Rule]
    node: cst.CSTNode
    message: str
    replacements: Mapping[cst.CSTNode, Replacement] | None
    applicability: Applicability | None
    imports: tuple[str, ...]
    chain: tuple[Link, ...] = ()


class Rule(cst.BatchableCSTVisitor):
    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    # The fix this rule offers at best; a single report may still come without one.
    fix: ClassVar[Applicability | None] = None
    # "error" for a finding that breaks or corrupts training; "warning" for one that only costs
    # performance or whose harm depends on what the file cannot show (SARIF's levels).
    level: ClassVar[str] = "error"
    # What the rule looks for (ddplint.prefilter.triggers): its needles and screen are derived
    # from it. A rule whose `check` it feeds declares a CallTrigger: the engine calls
    # `check(call)` only for calls it matches; other rules visit the tree themselves.
    trigger: ClassVar[Trigger | None] = None
    # A rule no trigger kind can express declares `needles` and `screen` by hand and says why
    # here (a test holds every rule to one or the other).
    hand_screen_reason: ClassVar[str] = ""
    # Every entry must occur in the source text for the rule to run: a string as a substring,
    # a tuple if any one of its strings does, a compiled pattern if it matches somewhere.
    # They decide which files are parsed at all (see benchmarks/needles.py).
    needles: ClassVar[tuple[Needle, ...]]
    # A condition on the file's `ast` (ddplint.prefilter.screens) that holds wherever the rule can fire;
    # checked after the needles, before libcst parses. None: the needles decide alone.
    screen: ClassVar[Screen | None] = None
    # Examples that must be flagged (with the golden fixed output) and that must not be.
    flagged_examples: ClassVar[Sequence[Flagged]] = ()
    clean_examples: ClassVar[Sequence[Clean]] = ()
    # The ways of training whose code the rule reads (their APIs in its trigger, its analyses or
    # its model questions), in Framework's order: `ddplint rules`, the README's table and
    # docs/rules.md show them.
    frameworks: ClassVar[tuple[Framework, ...]] = ()
    # The pitfall exists only where several ranks of a distributed job run the code: the rule
    # is not run in a module that only ever runs as one process (a test module that starts no
    # processes, a demo script no distributed code reaches, a module only such scripts import;
    # ddplint.model.project.ProjectView.single_process).
    needs_ranks: ClassVar[bool] = False
    # The harm needs a second rank, not only a launcher (a forward that skips DDP's all-reduce):
    # the rule is not run either in a module that runs in a world of one rank, launched as one
    # process included (ddplint.model.project.ProjectView.one_rank).
    needs_peers: ClassVar[bool] = False
    # The harm is torch's: the rule is not run in a module outside any torch program (one that
    # imports no torch and that no torch module imports or runs: a TensorFlow evaluator;
    # ddplint.model.project.ProjectView.torch_program).
    needs_torch: ClassVar[bool] = False
    # Shared analyses (ddplint.analyses) this rule reads through `self.model.get(cls)`.
    analyses: ClassVar[tuple[type[Analysis], ...]] = ()
    # Facts the project index knows about a module (ddplint.prefilter.project_facts) under which
    # the rule runs there though the module's text lacks its needles: the other half of the
    # pitfall is in another module. `unscreened_by`: those of them under which the file is
    # parsed for the rule though its `ast` screen fails (the screen cannot see that other half).
    # `screened_by`: those under which `project_screen`, the part of the construct that stays in
    # the module, admits it where `screen` fails.
    opened_by: ClassVar[frozenset[ProjectFact]] = frozenset()
    unscreened_by: ClassVar[frozenset[ProjectFact]] = frozenset()
    screened_by: ClassVar[frozenset[ProjectFact]] = frozenset()
    project_screen: ClassVar[Screen | None] = None

    def __init__(self, model: SemanticModel) -> None:
        super().__init__()
        self.model = model
        self.reports: list[Report] = []

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        trigger = cls.__dict__.get("trigger")
        if trigger is not None:
            cls.needles = trigger.needles
            cls.screen = trigger.screen
        if cls.takes_calls() and not isinstance(cls.trigger, CallTrigger):
            raise TypeError(f"{cls.__name__} implements check(call) but declares no CallTrigger")

    @classmethod
    def takes_calls(cls) -> bool:
        """Whether the engine hands the rule the calls its trigger matches (it implements `check`)."""
        return cls.check is not Rule.check

    def on_call(self, node: cst.Call) -> None:
        """The engine's entry for a rule with a trigger: every call, filtered by it."""
        if self.trigger.matches(self.model, node):  # type: ignore[union-attr]
            self.check(node)

    def check(self, node: cst.Call) -> None:
        """A call the rule's trigger matched; rules with a trigger implement this."""
        raise NotImplementedError

    def runs_link(self) -> Link | None:
        """The step "every rank runs this" of a chain, the one answer to whether ranks run this
        file: what in this file starts or joins the ranks (ddplint.analyses.distribution), else
        where a script that runs this module does (ProjectView.ranks_started), else a launch
        command of the project that runs it with a launcher (ProjectView.launch_line), else,
        for a module that is no script (`if __name__ == "__main__":`), what in it shows it runs
        distributed (an import of torch.distributed: its callers are elsewhere). A script that
        only imports torch.distributed or asks `dist.is_initialized()`, and that nothing
        launches as ranks, runs as one process: None, as when nothing shows it. So is a script
        of a test folder that no command runs (ProjectView.unrun_test_script): a test runner
        imports it, one process, whatever process group its code would form."""
        view = self.model.project
        if view is not None and view.unrun_test_script:
            return None
        evidence = self.model.get(DistributedEvidence)
        if evidence.starts is not None:
            how, node = evidence.starts
            return Link(StepKind.RUNS, f"every rank runs this file: it {how}", node)
        started = view.ranks_started() if view is not None else None
        if started is not None:
            place, how = started
            return Link(StepKind.RUNS, f"every rank runs this module: {place.path} {how}", place)
        launched = view.launch_line() if view is not None else None
        if launched is not None:
            return Link(StepKind.RUNS, f"every rank runs this script: {launched} launches it", launched)
        if evidence.node is not None and not evidence.script:
            return Link(StepKind.RUNS, f"this file runs distributed: it {evidence.where}", evidence.node)
        return None

    @classmethod
    def matches_text(cls, source: str) -> bool:
        return needles_match(cls.needles, source)

    @classmethod
    def explanation(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        *,
        replace: Mapping[cst.CSTNode, Replacement] | None = None,
        imports: Sequence[str] = (),
        chain: Sequence[Link] | None = None,
    ) -> None:
        """Record a finding at `node`. `replace` maps original nodes of this tree to their
        replacements; `imports` are statements (`import functools`) the fix needs at the top;
        `chain` the steps that make it a bug, in order (by default: who runs it, `runs_link`,
        and the harm the message names, at the node)."""
        applicability = self.fix if replace else None
        message = message or self.message
        if chain is None:
            runs = self.runs_link()
            chain = ([runs] if runs is not None else []) + [Link(StepKind.HARM, harm_of(message), node)]
        self.reports.append(Report(type(self), node, message, replace, applicability, tuple(imports), tuple(chain)))
