"""--output-format and the flags that shape output: real subprocesses on temporary trees."""

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from ddplint_test_support import cli_env as _env

BROKEN = 'import torch.distributed\nimport torch.multiprocessing as mp\n\nmp.set_sharing_strategy("file_system")\nmodel = torch.load("model.pt")\nloader = torch.utils.data.DataLoader(data, num_workers=2)\n'
SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "train.py").write_text(BROKEN)
    (tmp_path / "clean.py").write_text("print('hi')\n")
    return tmp_path


def test_json_lists_each_finding_with_position_and_fix(run, tree):
    result = run("--output-format", "json", "train.py")
    assert result.returncode == 1
    findings = json.loads(result.stdout)
    assert [f["code"] for f in findings] == ["DDP005", "DDP004"]
    load = findings[1]
    assert load["name"] == "torch-load-without-map-location"
    assert load["filename"] == "train.py"
    assert (load["line"], load["column"], load["end_line"], load["end_column"]) == (5, 9, 5, 31)
    assert load["message"].startswith("torch.load without map_location")
    assert load["fix"]["applicability"] == "safe"
    [edit] = load["fix"]["edits"]
    assert edit["content"] == 'torch.load("model.pt", map_location="cpu")'
    assert (edit["line"], edit["column"], edit["end_line"], edit["end_column"]) == (5, 9, 5, 31)
    assert findings[0]["fix"]["applicability"] == "unsafe" and findings[0]["fix"]["imports"] == ["import resource"]


def test_json_of_a_clean_file_is_an_empty_list_and_exit_0(run, tree):
    result = run("--output-format", "json", "clean.py")
    assert result.returncode == 0 and json.loads(result.stdout) == []


def test_sarif_is_valid_against_the_2_1_0_schema_and_carries_rules_and_fixes(run, tree):
    (tree / "bad.py").write_text("import torch.distributed\ndef f(:\n  torch.load(x)\n")
    result = run("--output-format", "sarif", ".")
    assert result.returncode == 2  # bad.py cannot be parsed
    log = json.loads(result.stdout)
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
    [sarif_run] = log["runs"]
    rules = {rule["id"]: rule for rule in sarif_run["tool"]["driver"]["rules"]}
    assert rules["DDP004"]["name"] == "torch-load-without-map-location"
    assert rules["DDP004"]["shortDescription"]["text"].startswith("torch.load without map_location")
    assert "map_location" in rules["DDP004"]["fullDescription"]["text"]
    assert "ddplint rule DDP004" in rules["DDP004"]["help"]["text"]
    results = sarif_run["results"]
    assert [r["ruleId"] for r in results] == ["DDP005", "DDP004"]
    driver_rules = sarif_run["tool"]["driver"]["rules"]
    assert all(driver_rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    region = results[1]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 5, "startColumn": 9, "endLine": 5, "endColumn": 31}
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train.py"
    replacement = results[1]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == 'torch.load("model.pt", map_location="cpu")'
    [invocation] = sarif_run["invocations"]
    assert invocation["executionSuccessful"] is False
    assert "cannot parse" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_github_prints_workflow_annotations(run, tree):
    result = run("--output-format", "github", "train.py")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[1] == (
        "::error file=train.py,line=5,col=9,endLine=5,endColumn=31,"
        "title=DDP004 torch-load-without-map-location::DDP004 torch.load without map_location loads onto "
        'the saving device (GPU 0 on every rank); pass map_location="cpu"'
    )
    assert len(lines) == 2  # no summary line


def test_github_escapes_property_and_message_characters():
    from ddplint.core.diagnostics import Diagnostic
    from ddplint.commands.output.github import format_diagnostic

    diagnostic = Diagnostic("a,b:c%.py", 1, 2, 1, 3, "DDP004", "name", "50% done\nnext")
    line = format_diagnostic(diagnostic)
    assert line.startswith("::error file=a%2Cb%3Ac%25.py,line=1,")
    assert line.endswith("::DDP004 50%25 done%0Anext")


def test_concise_has_one_line_per_finding_and_no_summary(run, tree):
    result = run("--output-format", "concise", "train.py", "clean.py")
    assert result.returncode == 1
    assert [line.split()[1] for line in result.stdout.splitlines()] == ["DDP005", "DDP004"]


def test_statistics_counts_per_rule(run, tree):
    (tree / "more.py").write_text("import torch.distributed\na = torch.load('a.pt')\nb = torch.load('b.pt')\n")
    result = run("--statistics", ".")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[:2] == ["3  DDP004  torch-load-without-map-location [fix]", "1  DDP005  file-system-sharing-strategy"]
    assert lines[-1].startswith("Found 4 problems")
    as_json = json.loads(run("--statistics", "--output-format", "json", ".").stdout)
    assert as_json[0] == {"code": "DDP004", "name": "torch-load-without-map-location", "count": 3, "fixable": True}


def test_exit_zero_and_quiet(run, tree):
    result = run("--exit-zero", "--quiet", "train.py")
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 2 and "Found" not in result.stdout
    (tree / "bad.py").write_text("import torch.distributed\ndef f(:\n  torch.load(x)\n")
    assert run("--exit-zero", "bad.py").returncode == 2  # files that cannot be checked still fail


def test_show_fixes_and_exit_non_zero_on_fix(run, tree):
    result = run("--fix", "--unsafe-fixes", "--show-fixes", "train.py")
    assert result.returncode == 0
    assert "train.py:\n    1 x DDP004 (torch-load-without-map-location)\n    1 x DDP005 (file-system-sharing-strategy)\n" in result.stdout
    (tree / "again.py").write_text(BROKEN)
    strict = run("--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "again.py")
    assert strict.returncode == 1 and "Fixed 2 problems. No problems found." in strict.stdout
    assert run("--fix", "--exit-non-zero-on-fix", "again.py").returncode == 0  # nothing left to change


def test_colour_follows_force_color_and_no_color(run, tree):
    assert "\033[" not in run("train.py").stdout  # a pipe is not a terminal
    env = {**_env(), "FORCE_COLOR": "1"}
    coloured = subprocess.run([sys.executable, "-m", "ddplint", "train.py"], cwd=tree, env=env, capture_output=True, text=True)
    assert "\033[1;31mDDP004\033[0m" in coloured.stdout
    env["NO_COLOR"] = "1"
    plain = subprocess.run([sys.executable, "-m", "ddplint", "train.py"], cwd=tree, env=env, capture_output=True, text=True)
    assert "\033[" not in plain.stdout
    as_json = subprocess.run(
        [sys.executable, "-m", "ddplint", "--output-format", "json", "train.py"], cwd=tree, env={**_env(), "FORCE_COLOR": "1"},
        capture_output=True, text=True,
    )
    json.loads(as_json.stdout)  # machine formats are never coloured


def _stderr_on_a_terminal(args, cwd):
    """Run ddplint with stderr on a pseudo-terminal; returns (stdout, what the terminal got)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "ddplint", *args], cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=terminal, text=True
    )
    os.close(terminal)
    stdout = process.stdout.read()
    process.wait(timeout=120)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    return stdout, seen.decode()


def test_progress_bar_on_a_terminal_for_long_runs_only(tmp_path):
    for number in range(201):
        (tmp_path / f"m{number:03}.py").write_text("x = 1\n")
    stdout, terminal = _stderr_on_a_terminal(["."], tmp_path)
    assert "201/201 files" in terminal and "No problems found." in stdout
    (tmp_path / "m000.py").unlink()
    _, short_run = _stderr_on_a_terminal(["."], tmp_path)
    assert "files" not in short_run
    plain = subprocess.run([sys.executable, "-m", "ddplint", "."], cwd=tmp_path, env=_env(), capture_output=True, text=True)
    assert plain.stderr == ""  # not a terminal: no bar


CHAINED = {
    "pyproject.toml": "",
    "train.py": "import torch\nimport torch.distributed as dist\nfrom loading import resume\n\n"
    "def main(model, path):\n    dist.init_process_group('nccl')\n    resume(model, path)\n",
    "loading.py": "import torch\nimport torch.distributed as dist\n\n"
    "def resume(model, path):\n    model.load_state_dict(torch.load(path))\n",
}


def test_each_finding_carries_its_chain_in_json_full_and_sarif(run, tmp_path):
    """A finding's steps (who runs it, how it reaches the line, the harm) come with places, also in another module:
    JSON lists them, `full` prints them, SARIF carries them as a code flow ending at it."""
    for name, text in CHAINED.items():
        (tmp_path / name).write_text(text)
    [finding] = json.loads(run("--output-format", "json", "--no-cache", "loading.py").stdout)
    runs, reaches, harm = finding["chain"]
    assert (runs["kind"], runs["filename"], runs["line"]) == ("runs", "train.py", 6)
    assert "init_process_group" in runs["message"]
    assert (reaches["kind"], reaches["filename"], reaches["line"]) == ("reaches", "train.py", 7)
    assert (harm["kind"], harm["filename"], harm["line"], harm["column"]) == ("harm", "loading.py", 5, 27)
    full = run("--output-format", "full", "--no-cache", "loading.py").stdout
    assert "  = runs     train.py:6: every rank runs this module: train.py calls dist.init_process_group" in full
    assert "  = reaches  train.py:7: resume() is called at train.py:7" in full
    log = json.loads(run("--output-format", "sarif", "--no-cache", "loading.py").stdout)
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
    [result] = log["runs"][0]["results"]
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [step["location"]["physicalLocation"]["artifactLocation"]["uri"] for step in steps] == [
        "train.py", "train.py", "loading.py", "loading.py"]
    assert steps[-1]["location"]["message"]["text"] == result["message"]["text"]
