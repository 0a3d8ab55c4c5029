"""A rule's trigger: what it looks for, declared once, from which its filters are derived.

`CallTrigger(TORCH_LOAD, without_keyword="map_location")` says the rule looks at calls of
`torch.load` (any spelling in `ddplint.torch_api`) that do not pass `map_location`. From that one
declaration come the text needles (the API's names and the import forms that can reach it),
the `ast` screen (the same call condition on CPython's tree), and the libcst predicate the
engine checks before it hands a call to the rule's `check`. The three describe one set of
calls, each over-approximating the next, so the filters cannot admit less than the rule flags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.edits import argument_for, has_star_arguments
from ddplint.prefilter.needles import Needle
from ddplint.prefilter.screens import Calls
from ddplint.torch_api import API


def call_needle(target: API) -> tuple[re.Pattern[str], ...]:
    """Text that occurs in every file that can call `target` through an import: an attribute
    ending in the last two parts of a spelling (`torch.load`, `serialization.load`), a module
    of a spelling imported under an alias (`import torch as th`, then `th.load`), or the next
    part imported from such a module (`from torch import load as restore`, `from torch import
    multiprocessing`). Only the modules a spelling passes through count: `import torch.nn as
    nn` cannot reach `torch.load`. One pattern per form, each starting with a literal (see
    ddplint.prefilter.needles)."""
    attributes, aliased, imported_from = set(), set(), []
    for spelling in target.spellings:
        parts = spelling.split(".")
        attributes.add(re.escape(".".join(parts[-2:])))
        for end in range(1, len(parts)):
            module = re.escape(".".join(parts[:end]))
            aliased.add(module)
            imported_from.append((module, re.escape(parts[end])))
    rest_of_statement = r"(?:[^\n]|\\\n)*?"  # to the end of the line, across backslash continuations
    return (
        *(re.compile(rf"{attribute}\b") for attribute in sorted(attributes)),
        re.compile(rf"import\s{rest_of_statement}\b(?:{'|'.join(sorted(aliased))})\s+as\b"),
        *(
            re.compile(rf"from\s+{module}\s+import\s+(?:\([^)]*|{rest_of_statement})\b{name}\b")
            for module, name in sorted(set(imported_from))
        ),
    )


@dataclass(frozen=True)
class CallTrigger:
    """Calls of `target`; with `without_keyword`, those that do not pass that parameter (by
    keyword or position) and have no `*args`/`**kwargs` that might; with `lambda_first`,
    those whose first argument is a lambda. `also` are further needles the rule needs (a
    string the call must contain, a marker of distributed code)."""

    target: API
    without_keyword: str | None = None
    lambda_first: bool = False
    also: tuple[Needle, ...] = ()

    @property
    def needles(self) -> tuple[Needle, ...]:
        names = tuple(sorted({spelling.rpartition(".")[2] for spelling in self.target.spellings}))
        return (names, call_needle(self.target), *self.also)

    @property
    def screen(self) -> Calls:
        return Calls(
            targets=tuple(self.target), without_keyword=self.without_keyword, lambda_first=self.lambda_first
        )

    def matches(self, model, call: cst.Call) -> bool:
        if model.qualified(call.func) not in self.target:
            return False
        if self.without_keyword is not None and (
            argument_for(call, self.target, self.without_keyword) is not None or has_star_arguments(call)
        ):
            return False
        if self.lambda_first:
            first = call.args[0] if call.args else None
            return first is not None and first.keyword is None and not first.star and isinstance(first.value, cst.Lambda)
        return True
