"""A rule's trigger: what it looks for, declared once, from which its filters are derived.

`CallTrigger(TORCH_LOAD, without_keyword="map_location")` says the rule looks at calls of
`torch.load` (any spelling in `ddplint.core.torch_api`) that do not pass `map_location`. From that one
declaration come the text needles (the API's names and the import forms that can reach it),
the `ast` screen (the same call condition on CPython's tree), and the libcst predicate the
engine checks before it hands a call to the rule's `check`. The three describe one set of
calls, each over-approximating the next, so the filters cannot admit less than the rule flags.

The other kinds describe what a rule that walks the tree itself looks for, and give it its
needles and screen the same way: `SubclassTrigger` (a class of a torch base),
`MentionTrigger` (a name spelt as a string or keyword, as an environment variable is) and
`DefaultCallTrigger` (a parameter default that calls something). Every kind takes `also`:
further needles the rule needs that the construct does not imply (a marker of distributed
code, a keyword the rule reads); they can only narrow what the trigger admits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import libcst as cst

from ddplint.semantic.edits import argument_for, has_star_arguments
from ddplint.prefilter.needles import Needle, call_needle
from ddplint.prefilter.screens import CallInDefault, Calls, DistributedCode, Mentions, Subclasses
from ddplint.core.torch_api import (
    ACCELERATOR, API, DDP, DISTRIBUTED_CALLS, DISTRIBUTED_IMPORTS, DISTRIBUTED_MARKERS, DISTRIBUTED_MODULES, FABRIC,
    FABRIC_LAUNCH, LIGHTNING_DATA_MODULE, LIGHTNING_MODULE, RANK_ENVIRONMENT, SPAWN, START_PROCESSES, TORCH_DISTRIBUTED,
)

NOTHING = API(frozenset())
# A def or lambda with a call as a default (`def f(x=torch.ones(1)):`), as text: one pattern
# per form, each starting with a literal (see ddplint.prefilter.needles).
DEFAULT_CALL = (
    re.compile(r"def\s+\w+\s*\([^)]*?=\s*[\w.]+\s*\("),
    re.compile(r"lambda\b[^)]*?=\s*[\w.]+\s*\("),
)


# Code that shows by itself that ranks run it (ddplint.prefilter.screens.DistributedCode), for
# rules that judge only such files: as the text needles SAVE_EVIDENCE and DISTRIBUTED_EVIDENCE
# of the catalog, a narrower variant for DDP014's saves (calls of the process-group API, DDP, a
# spawn of ranks, a rank variable read, a launch point) and a wider one for DDP004's loads
# (also any name under torch.distributed, an import of one, a DistributedSampler).
SAVE_EVIDENCE_CODE = DistributedCode(
    modules=DISTRIBUTED_MODULES,
    targets=tuple(sorted(DDP | SPAWN | START_PROCESSES | ACCELERATOR | FABRIC)),
    methods=(FABRIC_LAUNCH,),
    bases=tuple(sorted(LIGHTNING_MODULE | LIGHTNING_DATA_MODULE)),
    strings=tuple(sorted(RANK_ENVIRONMENT)),
)
DISTRIBUTED_EVIDENCE_CODE = replace(
    SAVE_EVIDENCE_CODE,
    modules=(),
    packages=(TORCH_DISTRIBUTED.name,),
    targets=tuple(sorted(DISTRIBUTED_CALLS | ACCELERATOR | FABRIC)),
    imports=(TORCH_DISTRIBUTED.name, *sorted(DISTRIBUTED_IMPORTS)),
)


def any_of(names) -> Needle:
    """One needle met by any of `names`: those that contain another are left out (the shorter
    one is met wherever they are), and a single name is a plain string, so that rules asking
    for the same text share one search (ddplint.prefilter.needles.TextScan)."""
    unique = set(names)
    kept = tuple(sorted(name for name in unique if not any(other != name and other in name for other in unique)))
    return kept[0] if len(kept) == 1 else kept


def _names(target: API) -> set[str]:
    return {spelling.rpartition(".")[2] for spelling in target.spellings}


@dataclass(frozen=True)
class CallTrigger:
    """Calls of `target`, or of a method named in `methods` on any receiver; with
    `without_keyword`, those that do not pass that parameter (by keyword or position) and have
    no `*args`/`**kwargs` that might; with `lambda_first`, those whose first argument is a
    lambda. `shipped` narrows only the screen (ddplint.prefilter.screens.Calls): the rule itself
    judges whether the callable it ships can be pickled, and so does `within`, a screen the
    file must pass as well (DISTRIBUTED_CODE). `also` are further needles the rule needs (a
    string the call must contain, a marker of distributed code)."""

    target: API = NOTHING
    without_keyword: str | None = None
    lambda_first: bool = False
    methods: tuple[str, ...] = ()
    shipped: tuple[str, ...] = ()
    within: DistributedCode | None = None
    also: tuple[Needle, ...] = ()

    @property
    def needles(self) -> tuple[Needle, ...]:
        names = any_of(_names(self.target) | set(self.methods))
        # A method on any receiver needs no import, so the import forms are no needle then.
        forms = (call_needle(self.target),) if not self.methods else ()
        lambdas = ("lambda",) if self.lambda_first else ()
        # The distributed markers first: rules share that one search, and it rules out most files.
        shared = tuple(needle for needle in self.also if needle == DISTRIBUTED_MARKERS)
        rest = tuple(needle for needle in self.also if needle != DISTRIBUTED_MARKERS)
        return (*shared, names, *forms, *lambdas, *rest)

    @property
    def screen(self) -> Calls:
        return Calls(
            targets=tuple(self.target),
            methods=self.methods,
            without_keyword=self.without_keyword,
            lambda_first=self.lambda_first,
            shipped=self.shipped,
            within=self.within,
        )

    def matches(self, model, call: cst.Call) -> bool:
        method = isinstance(call.func, cst.Attribute) and call.func.attr.value in self.methods
        if not method and model.qualified(call.func) not in self.target:
            return False
        if self.without_keyword is not None and (
            argument_for(call, self.target, self.without_keyword) is not None or has_star_arguments(call)
        ):
            return False
        if self.lambda_first:
            first = call.args[0] if call.args else None
            return first is not None and first.keyword is None and not first.star and isinstance(first.value, cst.Lambda)
        return True


@dataclass(frozen=True)
class SubclassTrigger:
    """Classes with a base that is `target` (any spelling, any import form)."""

    target: API
    also: tuple[Needle, ...] = ()

    @property
    def needles(self) -> tuple[Needle, ...]:
        return (any_of(_names(self.target)), call_needle(self.target), *self.also)

    @property
    def screen(self) -> Subclasses:
        return Subclasses(targets=tuple(self.target))


@dataclass(frozen=True)
class MentionTrigger:
    """A string literal or keyword argument spelling one of `names`: how code names an
    environment variable it sets."""

    names: tuple[str, ...]
    also: tuple[Needle, ...] = ()

    @property
    def needles(self) -> tuple[Needle, ...]:
        return (any_of(self.names), *self.also)

    @property
    def screen(self) -> Mentions:
        return Mentions(names=self.names)


@dataclass(frozen=True)
class DefaultCallTrigger:
    """A parameter default that calls a method named in `methods`, passes one of `keywords`,
    calls a name ending with one of `suffixes`, or calls a function of the file (see
    ddplint.prefilter.screens.CallInDefault). Its `also` needles come first: a rule's own
    text (a device) is cheaper to rule out than a def with a call as a default."""

    methods: tuple[str, ...]
    keywords: tuple[str, ...]
    suffixes: tuple[str, ...]
    also: tuple[Needle, ...] = ()

    @property
    def needles(self) -> tuple[Needle, ...]:
        return (*self.also, DEFAULT_CALL)

    @property
    def screen(self) -> CallInDefault:
        return CallInDefault(methods=self.methods, keywords=self.keywords, suffixes=self.suffixes)


Trigger = CallTrigger | SubclassTrigger | MentionTrigger | DefaultCallTrigger
