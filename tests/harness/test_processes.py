"""The requests ddplint's child processes make to the kernel so that they do not outlive it."""

import os
import subprocess
import sys

import pytest

from ddplint.core import processes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

ASK = "from ddplint.core import processes; print(processes.parent_carries('DDPLINT_T', 'x'))"


def _child_answer(parent_environment: dict) -> str:
    # A parent shell with the given environment starts the child, with the variable unset for
    # the child itself: only the parent's environment can make the answer True.
    shell = f"unset DDPLINT_T; {sys.executable} -c \"{ASK}\""
    env = {**os.environ, **parent_environment}
    return subprocess.run(["sh", "-c", f"{shell}; :"], env=env, capture_output=True,
                          text=True, timeout=60).stdout.strip()


def test_the_parent_s_environment_is_read_not_the_child_s():
    assert _child_answer({"DDPLINT_T": "x"}) == "True"
    assert _child_answer({"DDPLINT_T": "xy"}) == "False"  # the whole value, not a prefix
    assert _child_answer({}) == "False"


def test_a_missing_parent_is_not_taken_for_the_launcher(monkeypatch):
    monkeypatch.setattr(os, "getppid", lambda: 2**22 + 7)  # above any pid_max in use
    assert processes.parent_carries("PATH", os.environ["PATH"]) is False
