"""Triggers: one declaration gives a call rule its needles, its ast screen and the predicate
the engine applies, and the three agree on every import form that reaches the API. Every rule
declares one, or says why its needles and screen are written by hand."""

import re
import textwrap

import libcst as cst
import pytest

from ddplint.engine.lint import analyse, prepare, rules_to_run
from ddplint.prefilter.needles import TextScan
from ddplint.prefilter.screens import facts_of
from ddplint.prefilter.triggers import CallTrigger, SubclassTrigger, any_of
from ddplint.rules.rule import Clean, Flagged, Rule
from ddplint.rules import all_rules
from ddplint.core.torch_api import DATALOADER, INIT_PROCESS_GROUP, SAMPLER, SET_SHARING_STRATEGY, TORCH_LOAD


def import_forms(spelling):
    """Programs that call `spelling` through each way of importing it."""
    module, _, name = spelling.rpartition(".")
    root, _, below = module.partition(".")
    forms = [
        f"import {module}\n{spelling}(x)",
        f"import {module} as alias\nalias.{name}(x)",
        f"from {module} import {name}\n{name}(x)",
        f"from {module} import {name} as renamed\nrenamed(x)",
        f"from {module} import (\n    other,\n    {name},\n)\n{name}(x)",
        f"import os, {module} as alias\nalias.{name}(x)",
        f"import os, \\\n    {module} as alias\nalias.{name}(x)",
        f"def f():\n    return {spelling}(x)\nimport {root}",
    ]
    if below:
        parent, _, last = module.rpartition(".")
        forms.append(f"from {parent} import {last}\n{last}.{name}(x)")
        forms.append(f"from {parent} import {last} as short\nshort.{name}(x)")
    return forms


CASES = [
    pytest.param(api, spelling, source, id=f"{spelling}-{index}")
    for api in (TORCH_LOAD, SET_SHARING_STRATEGY, INIT_PROCESS_GROUP, DATALOADER)
    for spelling in api
    for index, source in enumerate(import_forms(spelling))
]


def resolved_calls(source):
    module = cst.parse_module(source)
    model, _ = prepare(module, [])
    found = []

    class Calls(cst.CSTVisitor):
        def on_visit(self, node):
            model.enter(node) if isinstance(node, model.TRACKED_NODES) else None
            if isinstance(node, cst.Call):
                found.append(model.qualified(node.func))
            return True

        def on_leave(self, node):
            model.leave(node) if isinstance(node, model.TRACKED_NODES) else None

    module.visit(Calls())
    return found


@pytest.mark.parametrize("api, spelling, source", CASES)
def test_needles_and_screen_admit_every_import_form(api, spelling, source):
    trigger = CallTrigger(api)
    assert spelling in resolved_calls(source)
    assert TextScan(source).matches(trigger.needles)
    assert trigger.screen.holds(facts_of(source))


@pytest.mark.parametrize("spelling", list(SAMPLER))
def test_a_subclass_trigger_admits_every_import_form_of_the_base(spelling):
    trigger = SubclassTrigger(SAMPLER)
    forms = import_forms(spelling)
    for form in forms[:7] + forms[8:]:  # not the call inside a def
        source = re.sub(r"([\w.]+)\(x\)$", r"class Mine(\1):\n    pass", form)
        assert TextScan(source).matches(trigger.needles), source
        assert trigger.screen.holds(facts_of(source)), source


def test_any_of_keeps_the_names_no_other_contains():
    assert any_of(["all_gather", "gather", "reduce_scatter", "reduce"]) == ("gather", "reduce")
    assert any_of(["DistributedSampler", "Sampler"]) == "Sampler"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_every_rule_declares_a_trigger_or_says_why_not(rule):
    if rule.trigger is None:
        assert rule.hand_screen_reason.strip(), f"{rule.code}: declare a trigger, or say in hand_screen_reason why none fits"
    else:
        assert not rule.hand_screen_reason, f"{rule.code} has a trigger: its needles and screen are derived"
        assert (rule.needles, rule.screen) == (rule.trigger.needles, rule.trigger.screen)


def test_a_rule_with_check_needs_a_call_trigger():
    with pytest.raises(TypeError):

        class Unfed(Rule):
            code = "DDP998"
            needles = ("x",)
            hand_screen_reason = "an example"

            def check(self, node):
                pass


@pytest.mark.parametrize(
    "source",
    [
        "import torchvision as tv\ntv.io.read_image(p)",
        "import numpy as np\nnp.load(p)",
        "from json import load\nload(f)",
    ],
)
def test_needles_reject_files_that_cannot_call_the_api(source):
    forms = CallTrigger(TORCH_LOAD).needles[1]
    assert not TextScan(source).has(forms)


class SaveCalls(Rule):
    """A rule written as a contributor would: one class, a trigger and `check`. This text is
    here because every rule explains itself; the test only needs the mechanics."""

    code = "DDP999"
    name = "example-save-calls"
    message = "torch.load without map_location"
    trigger = CallTrigger(TORCH_LOAD, without_keyword="map_location")
    flagged_examples = (Flagged("import torch\ntorch.load(p)\n^\n"),)
    clean_examples = (Clean("import torch\ntorch.load(p, 'cpu')\n"),)

    def check(self, node):
        self.report(node)


def test_a_call_rule_is_one_class_with_a_trigger():
    assert SaveCalls.needles and SaveCalls.screen is not None
    flagged = textwrap.dedent(
        """
        import torch as th
        a = th.load(p)
        b = th.load(p, "cpu")
        c = th.load(p, map_location="cpu")
        d = th.load(*args)
        e = th.save(p)
        """
    )
    assert [d.line for d in analyse(flagged, "x.py", [SaveCalls]).diagnostics] == [3]
    assert rules_to_run("import numpy as np\nnp.load(p)\n", [SaveCalls]) == []
