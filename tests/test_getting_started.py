"""What a newcomer takes from the README first: the pre-commit set-up that works from a clone,
and the verify figures it quotes."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ddplint.harness.scenarios import all_scenarios
from ddplint_test_support import REPO, cli_env

yaml = pytest.importorskip("yaml")  # pre-commit's own dependency
README = (REPO / "README.md").read_text()
PUBLISHED = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
LOAD = "import torch.distributed\nx = torch.load('a.pt')\n"
SUMMARY = re.compile(r"^(Found|Fixed|No problems|Would fix) ", re.MULTILINE)


def local_configuration() -> str:
    """The README's `repo: local` block, as a user would paste it."""
    blocks = [block for block in re.findall(r"```yaml\n(.*?)```", README, re.DOTALL) if "repo: local" in block]
    assert len(blocks) == 1, blocks
    return re.sub(r"^  ", "", blocks[0], flags=re.MULTILINE)  # the block is indented in a list item


def test_the_local_hooks_are_the_published_hooks_run_from_the_installed_ddplint():
    (repo,) = yaml.safe_load(local_configuration())["repos"]
    assert repo["repo"] == "local"
    local = {hook["id"]: hook for hook in repo["hooks"]}
    assert local.keys() == PUBLISHED.keys()
    for name, hook in local.items():
        assert hook["language"] == "system"
        for key in ("name", "entry", "types_or", "require_serial"):
            assert hook[key] == PUBLISHED[name][key], (name, key)


def test_the_published_hooks_run_serially_so_that_one_call_prints_one_summary():
    assert all(hook["require_serial"] is True for hook in PUBLISHED.values())


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_local_configuration_runs_offline_with_one_summary_per_hook(tmp_path):
    """More files than pre-commit puts in one batch when it runs a hook on several cores."""
    pytest.importorskip("pre_commit")
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "ddplint").exists():
        pytest.skip("no ddplint script beside this Python (install the checkout: pip install -e .)")
    work = tmp_path / "project"
    work.mkdir()
    (work / ".pre-commit-config.yaml").write_text(local_configuration())
    for index in range(10):
        (work / f"clean{index}.py").write_text("import torch.distributed\nx = 1\n")
    (work / "train.py").write_text(LOAD)
    env = {**cli_env(), "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run(["git", "add", "."], cwd=work, check=True)

    def hook(*args):
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", *args, "--all-files", "--color", "never"],
                              cwd=work, env=env, capture_output=True, text=True, timeout=300)

    check = hook("ddplint")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:2:5: DDP004 " in check.stdout
    assert SUMMARY.findall(check.stdout) == ["Found"], check.stdout
    assert "Found 1 problem (1 fixable with --fix)." in check.stdout

    fix = hook("ddplint-fix")
    assert fix.returncode == 1 and "files were modified by this hook" in fix.stdout, fix.stdout + fix.stderr
    assert SUMMARY.findall(fix.stdout) == ["Fixed"], fix.stdout
    assert "Fixed 1 problem. No problems found." in fix.stdout
    assert "map_location" in (work / "train.py").read_text()

    again = hook()
    assert again.returncode == 0 and again.stdout.count("Passed") == 2, again.stdout + again.stderr


def test_the_readme_counts_the_scenarios_there_are_and_the_last_run_ran_them_all():
    stated = {int(n) for n in re.findall(r"\ball (\d+) scenarios\b", README)}
    assert stated == {len(all_scenarios())}
    last_run = json.loads((REPO / "docs" / "verify-run.json").read_text())
    assert [r["rule"] for r in last_run["rules"]] == list(all_scenarios())
