"""Every rule's own examples, turned into tests: flagged code is flagged exactly where its
caret lines mark (`ddplint.rules.rule.Flagged`) and fixes to the golden output; clean code is not
flagged; fixes re-parse and are idempotent."""

import libcst as cst
import pytest

from ddplint.engine.lint import analyse
from ddplint.fixing.fixer import fix_text
from ddplint.fixing.quickfix import apply_fix
from ddplint.rules.rule import Flagged, Framework, harm_of
from ddplint.rules import all_rules
from ddplint.prefilter.screens import facts_of

FLAGGED = [
    pytest.param(rule, example, id=f"{rule.code}-flagged-{index}")
    for rule in all_rules()
    for index, example in enumerate(rule.flagged_examples)
]
CLEAN = [
    pytest.param(rule, example, id=f"{rule.code}-clean-{index}")
    for rule in all_rules()
    for index, example in enumerate(rule.clean_examples)
]


def codes(source, rules):
    return [d.code for d in analyse(source, "example.py", rules).diagnostics]


def places(source, rule):
    """Where `rule` reports in `source`: sorted (line, column) pairs, as `Flagged.at` holds them."""
    return sorted((d.line, d.col) for d in analyse(source, "example.py", [rule]).diagnostics if d.code == rule.code)


@pytest.mark.parametrize("rule, example", FLAGGED)
def test_flagged_examples_are_reported_where_marked(rule, example):
    assert example.at, "mark each finding with a caret line: a `^` under its first character"
    assert places(example.code, rule) == sorted(example.at)


@pytest.mark.parametrize("rule, example", FLAGGED)
def test_flagged_examples_say_their_golden_message(rule, example):
    """What each finding says is pinned as where it is: the rule's own message unless the
    example gives its findings' messages (`Flagged.messages`, in the order of their places)."""
    found = sorted((d for d in analyse(example.code, "example.py", [rule]).diagnostics if d.code == rule.code),
                   key=lambda d: (d.line, d.col))
    expected = example.messages if example.messages is not None else (rule.message,) * example.count
    assert [d.message for d in found] == list(expected)


def test_caret_lines_mark_the_line_above_and_leave_the_code():
    example = Flagged(
        """
        total = f(x) + g(y)
        ^       ^      ^
        h(
            z,  # noqa: DDP004
            ^
        )
        """
    )
    assert example.code == "total = f(x) + g(y)\nh(\n    z,  # noqa: DDP004\n)\n"
    assert example.at == ((1, 1), (1, 9), (1, 16), (3, 5)) and example.count == 4
    with pytest.raises(ValueError):
        Flagged("  ^\nx = 1\n")


def test_fix_edits_make_the_fixed_code_from_the_flagged_code():
    example = Flagged(
        """
        model = DDP(model, find_unused_parameters=True)
                ^
        for epoch in range(3):
            train()
        """,
        fix_edits=((", find_unused_parameters=True", ""), ("range(3):\n", "range(3):\n    sampler.set_epoch(epoch)\n")),
    )
    assert example.fixed == "model = DDP(model)\nfor epoch in range(3):\n    sampler.set_epoch(epoch)\n    train()\n"
    with pytest.raises(ValueError, match="not 0 times"):
        Flagged("x = f(a)\n^\n", fix_edits=(("g(a)", "g(b)"),))
    with pytest.raises(ValueError, match="not 2 times"):
        Flagged("x = f(a) + f(a)\n^\n", fix_edits=(("f(a)", "f(b)"),))
    with pytest.raises(ValueError, match="not both"):
        Flagged("x = f(a)\n^\n", fixed="x = f(b)\n", fix_edits=(("f(a)", "f(b)"),))


@pytest.mark.parametrize("rule, example", FLAGGED)
def test_flagged_examples_fix_to_golden_output(rule, example):
    outcome = fix_text(example.code, "example.py", [rule], unsafe_fixes=True)
    expected = example.code if example.fixed is None else example.fixed
    assert outcome.source == expected
    assert outcome.problems == []
    cst.parse_module(outcome.source)
    compile(outcome.source, "example.py", "exec")
    again = fix_text(outcome.source, "example.py", [rule], unsafe_fixes=True)
    assert again.source == outcome.source
    if example.fixed is not None:
        assert outcome.fixed_count >= 1


@pytest.mark.parametrize("rule, example", [p for p in FLAGGED if p.values[1].fixed is not None])
def test_each_findings_own_edits_make_the_same_change_as_fix(rule, example):
    """What editors, JSON and SARIF get (each finding's edits, applied one finding at a time)
    must write what `--fix` writes, the indentation of nested blocks and comment lines
    included; only the imports a fix orphans are left for `--fix` to remove."""
    expected = fix_text(example.code, "example.py", [rule], unsafe_fixes=True, used_elsewhere=lambda name: True)
    source = example.code
    for _ in range(len(rule.flagged_examples) + example.count + 5):  # one fix a round, bounded
        fixable = [d for d in analyse(source, "example.py", [rule]).diagnostics if d.fix is not None]
        if not fixable:
            break
        source = apply_fix(source, fixable[-1])  # last first: definitions a fix adds keep --fix's order
    assert source == expected.source


@pytest.mark.parametrize("rule, example", FLAGGED)
def test_fix_needs_unsafe_flag_when_unsafe(rule, example):
    outcome = fix_text(example.code, "example.py", [rule], unsafe_fixes=False)
    if rule.fix is not None and rule.fix.value == "safe" and example.fixed is not None:
        assert outcome.source == example.fixed
    else:
        assert outcome.source == example.code


@pytest.mark.parametrize("rule, example", CLEAN)
def test_clean_examples_are_not_reported(rule, example):
    assert rule.code not in codes(example.code, [rule])


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_rule_is_documented(rule):
    assert rule.code.startswith("DDP") and len(rule.code) == 6
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert len(rule.explanation()) > 200, "explain why it breaks DDP"
    assert rule.flagged_examples and rule.clean_examples, "every rule has examples that must and must not be flagged"
    assert rule.needles, "every rule declares the text it needs, so other files are not parsed"
    assert rule.screen is not None, "every rule declares what its file's ast must contain"
    for example in rule.flagged_examples:
        assert rule.matches_text(example.code), "needles must admit the rule's own examples"
        assert rule.screen.holds(facts_of(example.code)), "the screen must admit the rule's own examples"
    order = list(Framework)
    assert rule.frameworks, "every rule says whose code it reads (Rule.frameworks)"
    assert list(rule.frameworks) == sorted(set(rule.frameworks), key=order.index), "each framework once, in Framework's order"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_the_harm_step_is_the_messages_first_half(rule):
    """A chain's harm step is the message up to its advice ("; ..."), plus the note in parentheses
    that closes the message when there is one; the brackets of a call that ends the advice
    (`manual_seed(0)`) are no note."""
    message, harm = rule.message, harm_of(rule.message)
    cuts = [k for k in range(len(message)) if message.startswith("; ", k)]
    notes = [j for j in range(len(message)) if message.startswith(" (", j)]
    assert harm.strip() and (harm == message or any(
        harm == message[:k] + note for k in cuts for note in ("", *(message[j:] for j in notes if j > k))
    )), harm


def test_codes_and_names_are_unique():
    rules = all_rules()
    assert len({rule.code for rule in rules}) == len(rules)
    assert len({rule.name for rule in rules}) == len(rules)


STRICT = [
    pytest.param(rule, example, id=f"{rule.code}-strict-{index}")
    for rule in all_rules()
    for index, example in enumerate(getattr(rule, "strict_examples", ()))
]


@pytest.mark.parametrize("rule, example", STRICT)
def test_strict_examples_are_flagged_only_in_strict_mode(rule, example):
    """`[tool.ddplint] strict`: the rule's strict variant flags these, fixes them to the golden
    output, and its needles and screen admit them; the rule itself does not flag them."""
    strict = rule.strict_variant()
    assert strict.code == rule.code and strict.strict
    assert example.at and places(example.code, strict) == sorted(example.at)
    assert rule.code not in codes(example.code, [rule])
    assert strict.matches_text(example.code) and strict.screen.holds(facts_of(example.code))
    outcome = fix_text(example.code, "example.py", [strict], unsafe_fixes=True)
    assert outcome.source == (example.code if example.fixed is None else example.fixed)


@pytest.mark.parametrize("rule, example", [param for param in FLAGGED if hasattr(param.values[0], "strict_variant")])
def test_strict_mode_keeps_every_finding(rule, example):
    strict = rule.strict_variant()
    assert places(example.code, strict) == sorted(example.at)
    assert fix_text(example.code, "example.py", [strict], unsafe_fixes=True).source == (example.fixed or example.code)
