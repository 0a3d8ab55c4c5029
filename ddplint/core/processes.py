"""Child processes that must not outlive the process that started them."""

from __future__ import annotations

import ctypes
import os
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies, however it dies
    (SIGKILL included). Linux only; elsewhere nothing happens. Call it in the child."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
        except (OSError, AttributeError):
            pass


def parent_carries(variable: str, value: str) -> bool:
    """Whether this process's parent has ``variable=value`` in its environment. False when the
    parent is already gone (the process was handed to init or a subreaper) or cannot be read;
    True where /proc does not exist, as nothing can be told there."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        with open(f"/proc/{os.getppid()}/environ", "rb") as fh:
            environment = fh.read()
    except OSError:
        return False
    return f"{variable}={value}".encode() in environment.split(b"\0")
