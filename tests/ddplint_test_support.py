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


def time_scale() -> float:
    """How many times slower than an idle machine this one is now: the load average per core,
    at least 1 (DDPLINT_TEST_TIME_SCALE overrides it). The tests that let a job hang until a
    limit kills it, or wait a bounded time for processes to go, multiply their limits by it,
    so that a busy machine slows them down instead of failing them."""
    override = os.environ.get("DDPLINT_TEST_TIME_SCALE")
    if override:
        return max(1.0, float(override))
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


def scaled(seconds: float) -> int:
    """`seconds` times `time_scale()`, in whole seconds."""
    return int(seconds * time_scale() + 0.5)
