"""Each verify scenario holds exactly its own rule's pitfall, and ddplint fixes it.

Cheap (no torch, no launch): the e2e test relies on this, since a scenario
flagged by another rule too would be changed by that rule's fix as well.
"""

import pytest

from ddplint.engine import analyse
from ddplint.fixer import fix_text
from ddplint.harness import runner
from ddplint.rules import all_rules


@pytest.mark.parametrize("rule", runner.RULE_CODES)
def test_scenario_is_flagged_by_its_rule_only_and_the_fix_removes_it(rule):
    path = runner.FIXTURES / rule / "scenario.py"
    source = path.read_text()
    rules = list(all_rules())
    codes = [d.code for d in analyse(source, str(path), rules).diagnostics]
    assert codes == [rule]
    fixed = fix_text(source, str(path), rules, unsafe_fixes=True)
    assert fixed.fixed_count == 1
    assert fixed.remaining.diagnostics == []


@pytest.mark.parametrize("rule", runner.RULE_CODES)
def test_every_scenario_has_a_measure(rule):
    assert rule in runner.MEASURE
