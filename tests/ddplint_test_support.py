"""What the tests share besides fixtures: where the checkout is, and the environment that
makes a subprocess run this checkout's ddplint. (Imported by name: `conftest` is ambiguous
once tests/harness/conftest.py is on sys.path too.)"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    # Run this checkout's ddplint even where another copy is installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("NO_COLOR", None)
    return env
