"""The README's example of a finding's chain is what ddplint prints on that project."""

import re
import shutil
import subprocess
import sys

from ddplint_test_support import REPO, cli_env

README = (REPO / "README.md").read_text()


def test_the_readmes_chain_example_is_real_output(tmp_path):
    section = README.split("### Why it is a bug: the chain on every finding", 1)[1]
    example = re.search(r"```text\n(.*?)```", section, re.DOTALL).group(1)
    project = tmp_path / "project"
    shutil.copytree(REPO / "tests" / "data" / "projects" / "unused_layers", project,
                    ignore=shutil.ignore_patterns(".ddplint_cache", "expected*"))
    env = cli_env()
    env["NO_COLOR"] = "1"
    run = subprocess.run([sys.executable, "-m", "ddplint", "--output-format", "full", "."], cwd=project, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert example in run.stdout, run.stdout
