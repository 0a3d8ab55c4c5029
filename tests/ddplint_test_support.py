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


def cross_module_project(root: Path, imports: str = "", tail: str = "") -> Path:
    """A project of two modules whose train.py has a finding (DDP003, with its set_epoch fix)
    only the project shows: the shuffling DistributedSampler is built by data.py's helper.
    Returns train.py; `imports` go first in it, `tail` ends its `main`."""
    (root / "pyproject.toml").write_text("")
    (root / "data.py").write_text(
        "from torch.utils.data import DataLoader, DistributedSampler\n\n\n"
        "def build_loader(dataset):\n"
        "    return DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=True))\n"
    )
    train = root / "train.py"
    train.write_text(
        imports + "import torch.distributed as dist\n\nfrom data import build_loader\n\n\n"
        "def main(dataset, model):\n"
        "    dist.init_process_group('gloo')\n"
        "    loader = build_loader(dataset)\n"
        "    for epoch in range(3):\n"
        "        for batch in loader:\n"
        "            model(batch).sum().backward()\n" + tail
    )
    return train
