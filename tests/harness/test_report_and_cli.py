"""Verdicts, the report, and the CLI's argument handling (no torch needed)."""

import json

from ddplint.harness import cli, report, runner
from ddplint.harness.launcher import Topology
from ddplint.harness.runner import Measurement, RuleOutcome, judge


def m(symptom, completed=True, text="t"):
    return Measurement(symptom, text, completed)


def test_confirmed_needs_symptom_before_absence_after_and_completion():
    assert judge(m(True), m(False), None)[0] == runner.CONFIRMED
    assert judge(m(True), m(True), None) == (runner.FAILED, "symptom still present after the fix")
    assert judge(m(True), m(False, completed=False), None) == (
        runner.FAILED, "fixed program did not complete")
    assert judge(m(False), m(False), None) == (runner.FAILED, "symptom not present before the fix")
    assert judge(m(None), m(False), None)[0] == runner.FAILED
    assert judge(m(True), None, "fix did not apply") == (runner.FAILED, "fix did not apply")
    assert judge(m(True), m(None), None)[0] == runner.FAILED
    gpu = Measurement(None, "t", needs_gpu=True)
    assert judge(gpu, None, None)[0] == runner.NEEDS_GPU


def test_table_and_json_carry_every_rule():
    outs = [
        RuleOutcome("DDP003", m(True, text="same order"), m(False, text="new order"),
                    runner.CONFIRMED, "ok", 6.0),
        RuleOutcome("DDP004", m(True, text="error"), None, runner.FAILED, "fix did not apply", 3.0),
    ]
    topo = Topology(2, "gloo")
    text = report.table(outs, topo, 9.0)
    assert "DDP003" in text and "CONFIRMED" in text and "same order" in text
    assert "(not run: fix did not apply)" in text
    data = report.to_json(outs, topo, 9.0)
    assert data["ok"] is False
    assert [r["verdict"] for r in data["rules"]] == ["CONFIRMED", "FAILED"]
    json.dumps(data)


def test_cli_rejects_unknown_rules_and_bad_options(capsys):
    assert cli.main(["DDP999"]) == 2
    assert "unknown rule" in capsys.readouterr().err
    assert cli.main(["--nproc-per-node", "0"]) == 2
    assert cli.main(["--no-such-flag"]) == 2
    assert cli.main(["--help"]) == 0
