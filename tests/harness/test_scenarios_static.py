"""Each verify scenario holds exactly its own rule's pitfall, and ddplint fixes it.

Cheap (no torch, no launch): the e2e test relies on this, since a scenario
flagged by another rule too would be changed by that rule's fix as well.
"""

import pytest

from ddplint.engine.lint import analyse
from ddplint.fixing.fixer import fix_text
from ddplint.harness.scenarios import all_scenarios
from ddplint.rules import all_rules

SCENARIOS = all_scenarios()


@pytest.mark.parametrize("rule", list(SCENARIOS))
def test_scenario_is_flagged_by_its_rule_only_and_the_fix_removes_it(rule):
    path = SCENARIOS[rule].program
    source = path.read_text()
    rules = list(all_rules())
    codes = [d.code for d in analyse(source, str(path), rules).diagnostics]
    assert codes == [rule]
    recommended = SCENARIOS[rule].recommended
    if recommended is not None:
        # A rule without a fix: the scenario writes the pattern the rule recommends instead.
        assert fix_text(source, str(path), rules, unsafe_fixes=True).fixed_count == 0
        assert recommended(source) != source
        compile(recommended(source), str(path), "exec")
        return
    fixed = fix_text(source, str(path), rules, unsafe_fixes=True)
    assert fixed.fixed_count == 1
    assert fixed.remaining.diagnostics == []


def test_scenarios_are_discovered_from_their_folders():
    # One folder per scenario, named after its rule, each with its program and a measure.
    assert len(SCENARIOS) >= 11
    for code, scenario in SCENARIOS.items():
        assert scenario.program.parent.name == code.lower()
        assert scenario.program.is_file() and callable(scenario.measure)
    assert SCENARIOS["DDP003"].batchable and not SCENARIOS["DDP005"].batchable
    assert set(SCENARIOS["DDP005"].launches(0, "after")) == {"kill", "live"}
    assert set(SCENARIOS["DDP003"].launches(0, "after")) == {"main"}
