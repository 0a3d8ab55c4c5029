"""Properties that must hold for every input: no crash, fixes re-parse and are idempotent.

Programs come from hypothesmith (grammar-based and CST-based), each followed by snippets that
make every rule's needles occur, so the rules really run on them. HYPOTHESIS_PROFILE=long runs
many more examples (nightly); CI uses the default, modest budget.
"""

import os

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ddplint.engine.lint import SourceError, analyse
from ddplint.fixing.fixer import fix_text
from ddplint.rules import all_rules

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

# CI is deterministic (a fixed seed per test), so a run fails only on a change; "long" explores.
settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
settings.register_profile("long", max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# One flagged example of each rule: appended to generated code so every rule's needles occur.
SNIPPETS = [example.code for rule in all_rules() for example in rule.flagged_examples[:1]]

programs = st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node())
snippets = st.lists(st.sampled_from(SNIPPETS), max_size=3)


def _check(source: str) -> None:
    rules = all_rules()
    try:
        analysis = analyse(source, "gen.py", rules)
    except SourceError:
        return
    lines = source.splitlines() or [""]
    for diagnostic in analysis.diagnostics:
        assert 1 <= diagnostic.line <= len(lines) + 1
    outcome = fix_text(source, "gen.py", rules, unsafe_fixes=True)
    cst.parse_module(outcome.source)
    assert fix_text(outcome.source, "gen.py", rules, unsafe_fixes=True).source == outcome.source


@given(programs, snippets)
def test_generated_program_with_pitfalls_appended(program, extra):
    _check(program.rstrip("\n") + "\n" + "\n".join(extra))


@given(programs, snippets)
def test_pitfalls_followed_by_generated_program(program, extra):
    _check("\n".join(extra) + "\n" + program)
