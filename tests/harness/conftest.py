import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "e2e: runs real multi-process DDP programs under torchrun (slow, needs torch)"
    )


def pytest_collection_modifyitems(config, items):
    # Launches of real DDP jobs run one after another on one xdist worker: they measure
    # /dev/shm files and processes, and two jobs at once on 2 cores only slow each other.
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.xdist_group("harness"))
            item.add_marker(pytest.mark.harness)
