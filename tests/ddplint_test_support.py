"""What the tests share besides fixtures: where the checkout is, the environment that makes a
subprocess run this checkout's ddplint, and the mark of tests that need torch. (Imported by name: `conftest` is ambiguous
once tests/harness/conftest.py is on sys.path too.)"""

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# torch comes with the `test` extra on Python 3.11; without it (`test-no-torch`) these are skipped.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    # Run this checkout's ddplint even where another copy is installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("NO_COLOR", None)
    return env
