"""Command-line behaviour that ruff users expect, and the release plumbing around it."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

import ddplint
from ddplint_test_support import REPO

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

LOAD = "import torch.distributed\nm = torch.load('ckpt.pt')\n"
SAVE = "import torch.distributed\ntorch.save(model.state_dict(), 'ckpt.pt')\n"  # DDP014: no fix
SHM = 'import torch.multiprocessing as mp\n\nmp.set_sharing_strategy("file_system")\nmp.spawn(evaluate, nprocs=2)\n'


def test_help_lists_the_check_options_and_the_commands(run) -> None:
    result = run("--help")
    assert result.returncode == 0
    for option in ("--fix", "--select", "--output-format", "--exclude", "--output-file", "--no-unsafe-fixes"):
        assert option in result.stdout
    assert "server" in result.stdout and "rule CODE" in result.stdout


def test_exclude_replaces_the_list_and_extend_exclude_adds(run, tmp_path: Path) -> None:
    for folder in ("build", "gen", "src"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.py").write_text(LOAD)

    def files(*args: str) -> set[str]:
        return {line.split(":")[0] for line in run(*args, "--output-format", "concise", ".").stdout.splitlines()}

    assert files() == {"gen/a.py", "src/a.py"}  # build/ is in the default list
    assert files("--exclude", "gen") == {"build/a.py", "src/a.py"}
    assert files("--extend-exclude", "gen,src/") == set()


def test_output_file(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOAD)
    result = run("a.py", "-o", "report.json", "--output-format", "json")
    assert result.returncode == 1 and result.stdout == ""
    assert json.loads((tmp_path / "report.json").read_text())[0]["code"] == "DDP004"
    diff = run("--diff", "a.py", "-o", "fix.diff")
    assert diff.returncode == 1 and diff.stdout == ""
    assert "+m = torch.load('ckpt.pt', map_location=\"cpu\")" in (tmp_path / "fix.diff").read_text()
    bad = run("a.py", "--output-file", "missing/report.txt")
    assert bad.returncode == 2
    assert bad.stderr == "ddplint: error: missing/report.txt: cannot write: No such file or directory\n"


def test_no_unsafe_fixes_overrides_the_configuration(run, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint]\nunsafe-fixes = true\n")
    (tmp_path / "a.py").write_text(SHM)
    assert run("--diff", "--no-unsafe-fixes", "a.py").stdout == ""
    assert "resource" in run("--diff", "a.py").stdout
    assert "unsafe-fixes: false" in run("--show-settings", "--no-unsafe-fixes").stdout


def test_show_settings_and_verbose(run, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nignore = ["DDP005"]\nextend-exclude = ["gen/"]\n')
    (tmp_path / "a.py").write_text(LOAD)
    shown = run("--show-settings")
    assert shown.returncode == 0
    assert f"configuration: {tmp_path / 'pyproject.toml'}" in shown.stdout.splitlines()
    rules = next(line for line in shown.stdout.splitlines() if line.startswith("rules: "))
    assert "DDP004" in rules and "DDP005" not in rules
    assert "rules: DDP001, DDP002" in run("--show-settings", "--select", "DDP001,DDP002").stdout
    assert "gen/" in next(line for line in shown.stdout.splitlines() if line.startswith("exclude: "))
    verbose = run("-v", "a.py")
    assert verbose.returncode == 1
    assert f"ddplint: configuration: {tmp_path / 'pyproject.toml'}" in verbose.stderr
    assert re.search(r"ddplint: checked 1 file with \d+ rules in [0-9.]+ s", verbose.stderr)


def test_gitlab_report(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOAD + "n = torch.load('last.pt')\n")
    issues = json.loads(run("a.py", "--output-format", "gitlab").stdout)
    assert [issue["check_name"] for issue in issues] == ["DDP004", "DDP004"]
    assert issues[0]["location"] == {"path": "a.py", "positions": {"begin": {"line": 2, "column": 5}, "end": {"line": 2, "column": 26}}}
    assert len({issue["fingerprint"] for issue in issues}) == 2
    (tmp_path / "a.py").write_text("\n\n" + LOAD + "n = torch.load('last.pt')\n")  # lines move, identities do not
    moved = json.loads(run("a.py", "--output-format", "gitlab").stdout)
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in issues]


def test_junit_report(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOAD)
    (tmp_path / "b.py").write_bytes(b"torch.load\x00")
    root = ElementTree.fromstring(run(".", "--output-format", "junit").stdout)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "1", "1")
    [failure] = root.iter("failure")
    assert failure.get("type") == "DDP004" and failure.text.startswith("a.py:2:5: DDP004")
    [error] = root.iter("error")
    assert error.get("message") == "cannot read: binary file (contains NUL bytes)"
    (tmp_path / "b.py").unlink()
    (tmp_path / "a.py").write_text("x = 1\n")
    clean = ElementTree.fromstring(run(".", "--output-format", "junit").stdout)
    assert clean.get("failures") == "0" and [case.get("name") for case in clean.iter("testcase")] == ["No problems found"]


def test_paths_print_without_dot_slash(run, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(LOAD)
    assert run(".").stdout.startswith("src/a.py:2:5: DDP004 ")
    assert run("./src").stdout.startswith("src/a.py:2:5: DDP004 ")


def test_diff_exits_0_when_nothing_would_change(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SAVE)
    unfixable = run("--diff", "a.py")
    assert unfixable.returncode == 0 and unfixable.stdout == ""
    (tmp_path / "a.py").write_text(LOAD)
    assert run("--diff", "a.py").returncode == 1


def test_full_format_shows_the_line_the_caret_and_the_fix(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOAD + "n = torch.load('last.pt')\n")
    lines = run("a.py", "--output-format", "full").stdout.splitlines()
    assert lines[:10] == [
        lines[0],
        "  |",
        "2 | m = torch.load('ckpt.pt')",
        "  |     ^^^^^^^^^^^^^^^^^^^^^ DDP004",
        "  |",
        "  = runs  a.py:1: this file runs distributed: it imports torch.distributed",
        "  = harm  a.py:2: it is named as a checkpoint: its tensors land on the device they were saved from, GPU 0 on every rank",
        "  = safe fix:",
        "  -m = torch.load('ckpt.pt')",
        "  +m = torch.load('ckpt.pt', map_location=\"cpu\")",
    ]
    assert lines[0].startswith("a.py:2:5: DDP004 ")
    hints = [line for line in lines if "ddplint rule DDP004" in line]
    assert hints == [lines[-2]]  # once per run, not per finding
    assert lines[-1] == "Found 2 problems (2 fixable with --fix)."


def test_sarif_fixes_carry_their_imports(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SHM)
    [result] = json.loads(run("a.py", "--output-format", "sarif").stdout)["runs"][0]["results"]
    replacements = result["fixes"][0]["artifactChanges"][0]["replacements"]
    # Where --fix puts it: the standard library's block, before the third-party import.
    inserted = [r for r in replacements if r["insertedContent"]["text"] == "import resource\n\n"]
    assert inserted and inserted[0]["deletedRegion"] == {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1}


def test_the_fix_hook_fails_only_when_it_changed_a_file(run, tmp_path: Path) -> None:
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    entry = re.search(r"id: ddplint-fix\n(?:.*\n)*?\s+entry: ddplint (.*)", hooks).group(1).split()
    (tmp_path / "a.py").write_text(SAVE)
    assert run(*entry, "a.py").returncode == 0  # a finding it cannot fix: the check hook's job
    (tmp_path / "b.py").write_text(LOAD)
    assert run(*entry, "b.py").returncode == 1
    assert run(*entry, "b.py").returncode == 0  # fixed already


def test_the_readme_pins_the_hooks_to_the_current_release_tag() -> None:
    readme = (REPO / "README.md").read_text()
    assert re.search(r"^\s+rev: (\S+)", readme, re.MULTILINE).group(1) == f"v{ddplint.__version__}"
    assert f"rev: v{ddplint.__version__}" in (REPO / ".pre-commit-hooks.yaml").read_text()
