"""Matching a rule's needles against source text, without importing libcst.

A rule's `needles` are all required: a string must occur as a substring, a tuple is met by any
one of its strings, a compiled pattern by a match anywhere. The flake8 plugin checks a file
against every rule's needles (from the generated `ddplint.prefilter.index`) before it imports
libcst, so files that no rule can flag cost flake8 next to nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# A string must occur as a substring, a tuple by any one of its strings, a pattern somewhere.
Needle = str | tuple[str, ...] | re.Pattern[str]


# The needle of a rule that only matters in distributed code: text that names a DDP entry point
# (see ddplint.analyses.distributed_context, which the rules import it from).
DISTRIBUTED_MARKERS = (
    "torch.distributed",
    "from torch import distributed",
    "DistributedDataParallel",
    "init_process_group",
    "DistributedSampler",
    "LOCAL_RANK",
)


def needles_match(needles: Iterable[Needle], source: str, *, distributed: bool = False) -> bool:
    """With `distributed` (the file's project is distributed), the DISTRIBUTED_MARKERS needle
    is met whatever the file's own text."""
    for needle in needles:
        if distributed and needle == DISTRIBUTED_MARKERS:
            continue
        if isinstance(needle, str):
            if needle not in source:
                return False
        elif isinstance(needle, re.Pattern):
            if needle.search(source) is None:
                return False
        elif not any(alternative in source for alternative in needle):
            return False
    return True


def render_index(rules) -> str:
    """Python source of `ddplint/prefilter/index.py`: every rule's needles as literals, and
    its screen (ddplint.prefilter.screens) as the constructor call that rebuilds it."""
    screen_classes = sorted({type(rule.screen).__name__ for rule in rules if rule.screen is not None})
    lines = [
        '"""Every rule\'s needles and screen, for checks that must not import libcst (the flake8',
        "plugin).",
        "",
        "Generated from the rule modules by `python -m ddplint.docs`; do not edit. A test fails",
        'when it is stale."""',
        "",
        "import re",
        "",
        f"from ddplint.prefilter.screens import {', '.join(screen_classes)}",
        "",
        "NEEDLES = {",
    ]
    for rule in rules:
        items = []
        for needle in rule.needles:
            if isinstance(needle, re.Pattern):
                items.append(f"re.compile({needle.pattern!r}, {int(needle.flags & ~re.UNICODE)})")
            else:
                items.append(repr(needle))
        lines.append(f"    {rule.code!r}: ({', '.join(items)},),")
    lines += ["}", "", "SCREENS = {"]
    lines += [f"    {rule.code!r}: {rule.screen!r}," for rule in rules]
    lines.append("}")
    return "\n".join(lines) + "\n"
