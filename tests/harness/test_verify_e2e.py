"""End to end: real DDP programs under torchrun, before and after each fix.

Slow (a few minutes on 2 CPU cores): every launch starts torch in every rank.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

from ddplint.harness import launcher, runner
from ddplint.harness.scenarios import all_scenarios

CPU_RULES = list(all_scenarios())  # every rule with a scenario is observable on CPU
# The hand-made stand-in fixes cover the first six rules (written before ddplint had a fixer).
STANDIN_RULES = ["DDP001", "DDP002", "DDP003", "DDP004", "DDP005", "DDP006"]

pytestmark = pytest.mark.e2e


def _options(fixer):
    pytest.importorskip("torch")
    topo = launcher.choose_topology(launcher.count_gpus())
    return runner.Options(topo, timeout=180, fixer=fixer)


def test_stand_in_fixes_are_confirmed_on_every_rule():
    """Validates the scenarios and the measuring with hand-made fixed copies.

    The stand-ins live in the tests only; the shipped harness calls ddplint.
    """
    from standin_fixes import standin_fixer

    outcomes = runner.verify(STANDIN_RULES, _options(standin_fixer))
    report = {o.rule: (o.verdict, o.reason, o.before.text, o.after and o.after.text)
              for o in outcomes}
    assert all(o.verdict == runner.CONFIRMED for o in outcomes), report
    by_rule = {o.rule: o for o in outcomes}
    # The symptoms are the measured ones, not assumed.
    assert "Can't pickle" in by_rule["DDP002"].before.text
    assert "deserialize object on a CUDA device" in by_rule["DDP004"].before.text
    assert by_rule["DDP005"].before.data["leaked_bytes"] > 10 * 2**20
    assert by_rule["DDP005"].after.data["leaked_files"] <= by_rule["DDP005"].after.data["live"]["workers"]
    # The files the killed job leaked were removed by the harness.
    leaked = by_rule["DDP005"].before.data["leaked_paths"]
    assert leaked and not any(os.path.exists(p) for p in leaked)


def test_a_fix_that_does_not_change_the_file_fails_without_running_after():
    from standin_fixes import identity_fixer

    (outcome,) = runner.verify(["DDP003"], _options(identity_fixer))
    assert outcome.verdict == runner.FAILED
    assert outcome.reason == "fix did not apply"
    assert outcome.before.symptom is True  # the pitfall was still measured
    assert outcome.after is None


def test_verify_from_a_wheel_confirms_every_scenario(installed, tmp_path):
    """A user's install: the wheel in a fresh venv, run outside the checkout."""
    where = subprocess.run([str(installed.bin / "python"), "-c", "import ddplint; print(ddplint.__file__)"],
                           cwd=tmp_path, env=installed.env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(installed.bin.parent), where.stdout
    out = tmp_path / "verify.json"
    proc = installed.run("verify", "--json", str(out), cwd=tmp_path)
    data = json.loads(out.read_text())
    verdicts = {r["rule"]: (r["verdict"], r["reason"]) for r in data["rules"]}
    assert [r["rule"] for r in data["rules"]] == CPU_RULES, proc.stdout + proc.stderr
    # DDP021 has no fix: its "after" program is the recommended pattern, never CONFIRMED.
    assert {r: v for r, (v, _) in verdicts.items()} == {
        r: "SYMPTOM SHOWN, NO FIX" if r == "DDP021" else "CONFIRMED" for r in CPU_RULES}, proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert data["nnodes"] == 1
    # The symptoms of the rules the stand-ins do not cover, as measured.
    before = {r["rule"]: r["before"] for r in data["rules"]}
    after = {r["rule"]: r["after"] for r in data["rules"]}
    seen = before["DDP007"]["data"]["seen"]
    assert all(sorted(s) == list(range(40)) for s in seen)  # every rank read everything
    assert sorted(sum(after["DDP007"]["data"]["seen"], [])) == list(range(40))
    assert len({tuple(v) for v in before["DDP010"]["data"]["val"]}) > 1
    assert 'Unexpected key(s) in state_dict: "module.' in before["DDP009"]["text"]
    assert [r["parsed"] for r in before["DDP012"]["data"]["ranks"]] == [0, 0]
    assert [r["parsed"] for r in after["DDP012"]["data"]["ranks"]] == [0, 1]
    assert sum(after["DDP018"]["data"]["workers"]) < sum(before["DDP018"]["data"]["workers"])
