"""The rule registry: every `Rule` subclass defined in a module of this package.

Adding a rule is adding a module here; nothing is registered by hand.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterable
from types import ModuleType


@functools.cache
def all_rules():
    """Every rule class, sorted by code. (libcst is imported here, not when this package is:
    `ddplint.prefilter.index` must stay importable without it.)"""
    modules = [importlib.import_module(f"{__name__}.{info.name}")
               for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")]
    return rules_defined_in(modules)


def rules_defined_in(modules: Iterable[ModuleType]) -> tuple:
    """The `Rule` subclasses that `modules` define at their top level, sorted by code."""
    from ddplint.rules.rule import Rule

    found: dict[str, type[Rule]] = {}
    for module in modules:
        for value in vars(module).values():
            # `type(value)`, not `isinstance(value, type)`: isinstance believes an object's
            # `__class__`, and on Python 3.10 an alias such as `Ref = tuple[object, str]`
            # passes itself off as a class that way (issubclass then raises on it).
            if (issubclass(type(value), type) and issubclass(value, Rule) and value is not Rule
                    and value.__module__ == module.__name__):
                if value.code in found:
                    raise RuntimeError(f"rule code {value.code} is defined twice")
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def rule_by_code(code: str):
    for rule in all_rules():
        if rule.code == code.upper() or rule.name == code:
            return rule
    return None
