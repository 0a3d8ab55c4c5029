"""The rule registry: every `Rule` subclass defined in a module of this package.

Adding a rule is adding a module here; nothing is registered by hand.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil



@functools.cache
def all_rules():
    """Every rule class, sorted by code. (libcst is imported here, not when this package is:
    `ddplint.prefilter.index` must stay importable without it.)"""
    from ddplint.rule import Rule

    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__:
                if value.code in found:
                    raise RuntimeError(f"rule code {value.code} is defined twice")
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def rule_by_code(code: str):
    for rule in all_rules():
        if rule.code == code.upper() or rule.name == code:
            return rule
    return None
