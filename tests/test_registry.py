"""The rule registry: each rule module's rule class, and nothing that only looks like one."""

import pkgutil
import types

import pytest

from ddplint import rules
from ddplint.rules import all_rules, rules_defined_in
from ddplint.rules.ddp004_torch_load_without_map_location import TorchLoadWithoutMapLocation


class PassesForAClass:
    """What a module-level alias such as `Ref = tuple[object, str]` is on Python 3.10:
    `isinstance(alias, type)` holds, and `issubclass(alias, ...)` raises TypeError."""

    __class__ = type


def module_with(**names) -> types.ModuleType:
    module = types.ModuleType("ddplint_registry_example")
    vars(module).update(names)
    return module


def test_aliases_beside_a_rule_are_skipped():
    look_alike = PassesForAClass()
    assert isinstance(look_alike, type)
    with pytest.raises(TypeError):
        issubclass(look_alike, TorchLoadWithoutMapLocation)
    module = module_with(Ref=tuple[object, str], look_alike=look_alike)
    rule = type("Variant", (TorchLoadWithoutMapLocation,), {"__module__": module.__name__})
    vars(module)["Variant"] = rule
    assert rules_defined_in([module]) == (rule,)


def test_a_rule_imported_from_another_module_is_not_registered_again():
    module = module_with(TorchLoadWithoutMapLocation=TorchLoadWithoutMapLocation)
    assert rules_defined_in([module]) == ()


def test_every_rule_module_gives_one_rule():
    modules = [info.name for info in pkgutil.iter_modules(rules.__path__) if not info.name.startswith("_") and info.name != "rule"]
    assert sorted(rule.__module__.rpartition(".")[2] for rule in all_rules()) == sorted(modules)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_the_facts_that_lift_a_rule_screen_also_open_it(rule):
    # Hints.unscreened is asked only of rules the needles let through.
    assert rule.unscreened_by <= rule.opened_by
    assert rule.screened_by <= rule.opened_by
    # a project screen where facts lower the screen to it, and only there
    assert (rule.project_screen is not None) == bool(rule.screened_by)
