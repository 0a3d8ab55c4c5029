"""Verdicts, the report, and the CLI's argument handling (no torch needed)."""

import json

from ddplint.harness import cli, report, runner
from ddplint.harness.launcher import Topology
from ddplint.harness.measuring import Measurement
from ddplint.harness.runner import RuleOutcome, judge


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
    assert capsys.readouterr().err == "ddplint verify: unknown rule(s): DDP999\n"
    assert cli.main(["--nproc-per-node", "0"]) == 2
    assert cli.main(["--no-such-flag"]) == 2
    assert cli.main(["--help"]) == 0


def test_a_rule_without_a_scenario_is_not_called_unknown(error_line):
    assert cli.main(["DDP014"]) == 2
    err = error_line()
    assert err.startswith("ddplint verify: no scenario for DDP014 (rules with one: DDP001, ")


def test_bad_values_are_one_line_and_exit_2_before_anything_runs(error_line, tmp_path):
    for argv, words in [
        (["DDP003", "--timeout", "0"], "--timeout must be more than 0 seconds"),
        (["DDP003", "--timeout", "-5"], "--timeout must be more than 0 seconds"),
        (["DDP003", "--nnodes", "two"], "--nnodes must be N or MIN:MAX"),
        (["DDP003", "--nnodes", "3:2"], "--nnodes must be N or MIN:MAX"),
        (["DDP003", "--json", str(tmp_path / "missing" / "r.json")], "no such folder"),
        (["DDP003", "--json", str(tmp_path)], "is a folder"),
    ]:
        assert cli.main(argv) == 2, argv
        assert words in error_line(), argv


def test_json_that_cannot_be_written_after_the_run_is_one_line(capsys, tmp_path):
    target = tmp_path / "gone" / "r.json"
    try:
        cli.write_json(str(target), {"ok": True})
    except cli.UsageError as exc:
        assert str(exc).startswith(f"--json {target}: cannot write: ")
    else:
        raise AssertionError("no error for a folder that does not exist")


def test_nnodes_is_a_number_in_the_json():
    outs = [RuleOutcome("DDP003", m(True), m(False), runner.CONFIRMED, "ok", 1.0)]
    assert report.to_json(outs, Topology(2, "gloo"), 1.0)["nnodes"] == 1
    assert report.to_json(outs, Topology(2, "gloo", nnodes="1:2"), 1.0)["nnodes"] == {"min": 1, "max": 2}


def test_readme_verify_table_matches_the_last_run():
    from ddplint.harness import readme

    assert readme.main(["--check"]) == 0, "run `python -m ddplint.harness.readme`"


def test_readme_table_is_made_from_the_json(tmp_path):
    from ddplint.harness import readme

    run = {"backend": "gloo", "nproc_per_node": 2, "gpus": 0, "total_seconds": 12.3,
           "rules": [{"rule": "DDP003", "verdict": "CONFIRMED", "reason": "ok",
                      "before": {"text": "a | b"}, "after": {"text": "c"}},
                     {"rule": "DDP004", "verdict": "FAILED", "reason": "fix did not apply",
                      "before": {"text": "x"}, "after": None}]}
    text = readme.with_table(f"top\n{readme.START}\nold\n{readme.END}\nbottom\n", run)
    assert "| DDP003 | a \\| b | c | CONFIRMED |" in text
    assert "| DDP004 | x | (not run: fix did not apply) | FAILED |" in text
    assert "gloo, 2 ranks per node, 0 GPUs, 12 s" in text and "not your code" in text
    assert text.startswith("top\n") and text.endswith(f"{readme.END}\nbottom\n") and "old" not in text
