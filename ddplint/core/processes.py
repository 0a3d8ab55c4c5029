"""Child processes that must not outlive the process that started them."""

from __future__ import annotations

import ctypes
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
