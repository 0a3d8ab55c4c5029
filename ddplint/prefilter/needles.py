"""Matching a rule's needles against source text, without importing libcst.

A rule's `needles` are all required: a string must occur as a substring, a compiled pattern
must match somewhere, a tuple is met by any one of its alternatives (strings or patterns). A
pattern whose branches start with different text is better split into a tuple of patterns
that each start with a literal: the regex engine can then skip ahead to that literal, which
made DDP001's needles three times faster on the benchmark corpus. The flake8 plugin checks a file
against every rule's needles (from the generated `ddplint.prefilter.index`) before it imports
libcst, so files that no rule can flag cost flake8 next to nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ddplint.core.torch_api import API, DISTRIBUTED_MARKERS, SEED_MARKERS

Needle = str | re.Pattern[str] | tuple[str | re.Pattern[str], ...]


class TextScan:
    """The needles of one source text, each searched for at most once: rules share needles
    (the distributed markers, `DistributedSampler`, the import forms of torch), and a search is
    a pass over the whole file. Patterns, the slowest needles, are tried only once every
    string needle of a rule has matched."""

    __slots__ = ("source", "_found")

    def __init__(self, source: str, known: dict[Needle, bool] | None = None) -> None:
        """`known`: needles already searched for in this same text (by the project index)."""
        self.source = source
        self._found: dict[Needle, bool] = dict(known) if known else {}

    @property
    def found(self) -> dict[Needle, bool]:
        """The needles searched for so far, and whether each occurs."""
        return self._found

    def has(self, needle: Needle) -> bool:
        found = self._found.get(needle)
        if found is None:
            if isinstance(needle, str):
                found = in_code(self.source, needle)
            elif isinstance(needle, re.Pattern):
                found = needle.search(self.source) is not None
            else:  # strings before patterns: they are the cheaper searches
                found = any(self.has(a) for a in needle if isinstance(a, str)) or any(
                    self.has(a) for a in needle if isinstance(a, re.Pattern)
                )
            self._found[needle] = found
        return found

    def matches(self, needles: Iterable[Needle], *, distributed: bool = False, met: Iterable[Needle] = ()) -> bool:
        """With `distributed` (the file's project is distributed), the DISTRIBUTED_MARKERS
        needle (and a wider group holding all of it, WIDER_MARKERS) is met whatever the file's own text; so are the needles in `met` (what the
        project knows of the module stands for them: ddplint.model.project.Hints)."""
        met = {DISTRIBUTED_MARKERS, *met} if distributed else set(met)
        costly = []
        for needle in needles:
            if met and (needle in met or needle in WIDER_MARKERS and DISTRIBUTED_MARKERS in met):  # (most calls meet none)
                continue
            if isinstance(needle, str) or (isinstance(needle, tuple) and all(isinstance(a, str) for a in needle)):
                if not self.has(needle):
                    return False
            else:
                costly.append(needle)
        return all(self.has(needle) for needle in costly)


# Needle groups that hold every one of DISTRIBUTED_MARKERS and more: what meets that group meets them.
WIDER_MARKERS = frozenset((SEED_MARKERS,))


def in_code(source: str, needle: str) -> bool:
    """Whether `needle` occurs in `source` on a line that is not a comment line. A licence
    header ("distributed under the License") or a commented-out `# torch.save(...)` is no
    evidence for any rule, and it is in most files of the large libraries. (A line of a
    string that starts with `#` is skipped too: no rule reads what a string holds as code.)"""
    start = source.find(needle)
    while start != -1:
        line = source.rfind("\n", 0, start) + 1
        line = source.rfind("\r", line, start) + 1 or line  # a lone `\r` ends a line too
        if not source[line:start].lstrip().startswith("#"):
            return True
        end = source.find("\n", start)
        carriage = source.find("\r", start, None if end == -1 else end)
        end = end if carriage == -1 else carriage
        if end == -1:
            return False
        start = source.find(needle, end)
    return False


def call_needle(target: API) -> tuple[re.Pattern[str], ...]:
    """Text that occurs in every file that can call `target` through an import: an attribute
    ending in the last two parts of a spelling (`torch.load`, `serialization.load`), a module
    of a spelling imported under an alias (`import torch as th`, then `th.load`), or the next
    part imported from such a module (`from torch import load as restore`, `from torch import
    multiprocessing`). Only the modules a spelling passes through count: `import torch.nn as
    nn` cannot reach `torch.load`. One pattern per form and module, each starting with a
    literal (see ddplint.prefilter.needles)."""
    attributes: dict[str, set[str]] = {}  # `serialization.` -> {"load"}
    aliased: set[str] = set()
    imported_from: dict[str, set[str]] = {}  # `torch.serialization` -> {"load"}
    for spelling in target.spellings:
        parts = [re.escape(part) for part in spelling.split(".")]
        attributes.setdefault(parts[-2], set()).add(parts[-1])
        for end in range(1, len(parts)):
            module = r"\.".join(parts[:end])
            aliased.add(module)
            imported_from.setdefault(module, set()).add(parts[end])
    rest_of_statement = r"(?:[^\n]|\\\n)*?"  # to the end of the line, across backslash continuations
    return (
        *(re.compile(rf"{prefix}\.{_either(names)}\b") for prefix, names in sorted(attributes.items())),
        re.compile(rf"import\s{rest_of_statement}\b{_either(aliased)}\s+as\b"),
        *(
            re.compile(rf"from\s+{module}\s+import\s+(?:\([^)]*|{rest_of_statement})\b{_either(names)}\b")
            for module, names in sorted(imported_from.items())
        ),
    )


def _either(alternatives: set[str]) -> str:
    """A regex for any of `alternatives` (already escaped): the names that share a module are
    one pattern, one pass over the text, instead of one each."""
    return next(iter(alternatives)) if len(alternatives) == 1 else f"(?:{'|'.join(sorted(alternatives))})"


def needles_match(needles: Iterable[Needle], source: str, *, distributed: bool = False) -> bool:
    return TextScan(source).matches(needles, distributed=distributed)


def render_index(rules) -> str:
    """Python source of `ddplint/prefilter/index.py`: every rule's needles as literals, its
    screen (ddplint.prefilter.screens) as the constructor call that rebuilds it, the names
    of the analyses it reads, and the project facts that open it (`Rule.opened_by`,
    `Rule.unscreened_by`)."""
    screens = [rule.screen for rule in rules if rule.screen is not None]
    screen_classes = sorted({type(screen).__name__ for screen in screens}
                            | {type(screen.within).__name__ for screen in screens if getattr(screen, "within", None)})
    lines = [
        '"""Every rule\'s needles and screen, for checks that must not import libcst (the flake8',
        "plugin).",
        "",
        "Generated from the rule modules by `python -m ddplint.commands.docs`; do not edit. A test fails",
        'when it is stale."""',
        "",
        "import re",
        "",
        "from ddplint.prefilter.project_facts import ProjectFact",
        f"from ddplint.prefilter.screens import {', '.join(screen_classes)}",
        "",
        "NEEDLES = {",
    ]
    for rule in rules:
        items = [_render(needle) for needle in rule.needles]
        lines.append(f"    {rule.code!r}: ({', '.join(items)},),")
    lines += ["}", "", "SCREENS = {"]
    lines += [f"    {rule.code!r}: {rule.screen!r}," for rule in rules]
    lines += ["}", "", "# The shared analyses each rule reads (by class name): the project may feed them.", "ANALYSES = {"]
    lines += [f"    {rule.code!r}: {tuple(sorted(a.__name__ for a in rule.analyses))!r}," for rule in rules]
    lines.append("}")
    for table, attribute in (("OPENED_BY", "opened_by"), ("UNSCREENED_BY", "unscreened_by"), ("SCREENED_BY", "screened_by")):
        lines += ["", f"# The project facts in each rule's `{attribute}` (rules not named here have none).", f"{table} = {{"]
        for rule in rules:
            facts = sorted(f"ProjectFact.{fact.name}" for fact in getattr(rule, attribute))
            if facts:
                lines.append(f"    {rule.code!r}: frozenset({{{', '.join(facts)}}}),")
        lines.append("}")
    return "\n".join(lines) + "\n"


def _render(needle: Needle) -> str:
    if isinstance(needle, re.Pattern):
        return f"re.compile({needle.pattern!r}, {int(needle.flags & ~re.UNICODE)})"
    if isinstance(needle, tuple):
        rendered = [_render(alternative) for alternative in needle]
        return f"({', '.join(rendered)}{',' if len(rendered) == 1 else ''})"
    return repr(needle)
