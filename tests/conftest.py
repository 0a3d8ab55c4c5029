import subprocess
import sys
from pathlib import Path

import pytest

from ddplint_test_support import cli_env

# tests/data holds projects to lint (their tests/ folders included), not tests to run.
collect_ignore = ["data"]


class Runner:
    """Runs `ddplint` or `flake8` as a user would, as a subprocess, in a folder."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def __call__(
        self, *args: str, stdin: str | None = None, tool: str = "ddplint", env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        module = {"ddplint": "ddplint", "flake8": "flake8"}[tool]
        return subprocess.run(
            [sys.executable, "-m", module, *args],
            cwd=self.cwd,
            input=stdin,
            capture_output=True,
            text=True,
            env={**cli_env(), **(env or {})},
            timeout=120,
        )


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    return Runner(tmp_path)
