"""`--select` / `--ignore`: which rules are active. Codes may be prefixes (`DDP`, `DDP00`).

The most specific matching prefix decides; on a tie, ignore wins (as in ruff).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ddplint.rules.rule import Rule


class SelectionError(ValueError):
    pass


def parse_codes(text: str | Iterable[str] | None) -> list[str]:
    if text is None:
        return []
    items = text.split(",") if isinstance(text, str) else [part for item in text for part in item.split(",")]
    return [item.strip().upper() for item in items if item.strip()]


def choose_rules(
    rules: Sequence[type[Rule]], select: Sequence[str] | None = None, ignore: Sequence[str] = ()
) -> list[type[Rule]]:
    select = list(select) if select else ["DDP"]
    unknown = unknown_codes(rules, (*select, *ignore))
    if unknown:
        raise SelectionError(f"unknown rule code or prefix: {', '.join(unknown)} (see `ddplint rules`)")
    chosen = []
    for rule in rules:
        selected = max((len(code) for code in select if _matches(rule.code, code)), default=-1)
        ignored = max((len(code) for code in ignore if _matches(rule.code, code)), default=-1)
        if selected >= 0 and selected > ignored:
            chosen.append(rule)
    return chosen


def unknown_codes(rules: Sequence[type[Rule]], codes: Iterable[str]) -> list[str]:
    """The codes that name no rule, not even as a prefix."""
    known = [rule.code for rule in rules]
    return [code for code in codes if code != "ALL" and not any(k.startswith(code) for k in known)]


def without(rules: Sequence[type[Rule]], codes: Sequence[str]) -> list[type[Rule]]:
    """`rules` less those matching any of `codes` (per-file-ignores)."""
    return [rule for rule in rules if not any(_matches(rule.code, code) for code in codes)]


def _matches(rule_code: str, code: str) -> bool:
    return code == "ALL" or rule_code.startswith(code)
