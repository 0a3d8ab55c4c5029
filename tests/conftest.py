import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # Run this checkout's ddplint even where another copy is installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("NO_COLOR", None)
    return env


class Runner:
    """Runs `ddplint` or `flake8` as a user would, as a subprocess, in a folder."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def __call__(self, *args: str, stdin: str | None = None, tool: str = "ddplint") -> subprocess.CompletedProcess:
        module = {"ddplint": "ddplint", "flake8": "flake8"}[tool]
        return subprocess.run(
            [sys.executable, "-m", module, *args],
            cwd=self.cwd,
            input=stdin,
            capture_output=True,
            text=True,
            env=_env(),
            timeout=120,
        )


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    return Runner(tmp_path)
